package lake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/media"
)

// Upload is one file offered to the lake.
type Upload struct {
	Name string                        // plain file name, e.g. "dog-001.jpg"
	Open func() (io.ReadCloser, error) // the bytes; called once
	// VideoIndex is the file's position in its video or upload sequence
	// (annotation projects set it); nil when it has none.
	VideoIndex *int
}

// AddOptions say where uploaded files go.
type AddOptions struct {
	Collection string          // collection name; created when missing; "" for none
	Metadata   json.RawMessage // JSON object stored on every file; may be nil
	// SkipExisting skips a file whose name and bytes are already in the
	// collection, so re-running an import only adds what is new.
	SkipExisting bool
	// Check, if set, sees each probed file (dimensions known, nothing stored
	// yet) and rejects it by returning an error; an *errs.Error keeps its code.
	Check func(i int, f File) error
	// InTx, if set, runs inside the transaction that inserts the stored files,
	// so callers write their own rows (boxes, task counters) atomically with
	// them. An error rolls everything back and fails Add.
	InTx func(ctx context.Context, tx *sql.Tx, stored []File) error
}

// Rejection says why an upload was not stored.
type Rejection struct {
	Name   string    `json:"name"`
	Code   errs.Code `json:"code"`
	Reason string    `json:"reason"`
}

// AddResult lists, in input order, what was stored, skipped and rejected.
type AddResult struct {
	Stored   []File      `json:"stored"`
	Skipped  []File      `json:"skipped"`
	Rejected []Rejection `json:"rejected"`
}

// staged is an upload that passed every check, its bytes in a temp file.
type staged struct {
	up   Upload
	pend *Pending
	p    probed
	q    *Quality // scores computed at ingest; nil when none
}

// Add stores uploads: each is checked (name, size, readable media), written
// to a temp file and probed in parallel; then the accepted blobs are made
// durable and moved into place, and only then are their rows inserted in one
// transaction, so a crash never leaves a row without its blob. A bad upload
// is rejected with a reason; it does not fail the others.
func (l *Lake) Add(ctx context.Context, opt AddOptions, ups []Upload) (AddResult, error) {
	meta, err := normalizeObject("metadata", opt.Metadata)
	if err != nil {
		return AddResult{}, err
	}
	if opt.Collection != "" {
		if err := ValidateCollectionName(opt.Collection); err != nil {
			return AddResult{}, err
		}
	}
	var existing *Collection
	if c, err := l.CollectionByName(ctx, opt.Collection); err == nil {
		existing = &c
	} else if opt.Collection != "" && !errs.Is(err, errs.NotFound) {
		return AddResult{}, err
	}
	var known map[string][]File
	if opt.SkipExisting && existing != nil {
		names := make([]string, len(ups))
		for i, up := range ups {
			names[i] = up.Name
		}
		if known, err = l.membersByName(ctx, existing.seq, names); err != nil {
			return AddResult{}, err
		}
	}
	outs := make([]stageResult, len(ups))
	l.parallel(len(ups), func(i int) { outs[i] = l.stage(ctx, ups[i], known[ups[i].Name]) })
	if opt.Check != nil {
		for i := range outs {
			if o := &outs[i]; o.rejected == nil && o.skipped == nil {
				l.check(o, i, opt.Check)
			}
		}
	}

	var res AddResult
	var accepted []staged
	for _, o := range outs {
		switch {
		case o.rejected != nil:
			res.Rejected = append(res.Rejected, *o.rejected)
		case o.skipped != nil:
			res.Skipped = append(res.Skipped, *o.skipped)
		default:
			accepted = append(accepted, o.staged)
		}
	}
	if len(accepted) == 0 {
		return res, nil
	}
	res.Stored, err = l.storeAccepted(ctx, opt, meta, accepted)
	return res, err
}

// storeAccepted places the accepted blobs and inserts their rows under the
// guard of placeAndCommit.
func (l *Lake) storeAccepted(ctx context.Context, opt AddOptions, meta string, accepted []staged) (stored []File, err error) {
	err = l.placeAndCommit(ctx, accepted, func() error {
		stored, err = l.insertFiles(ctx, opt, meta, accepted)
		return err
	})
	if err == nil {
		l.ingestThumbs(accepted)
	}
	return stored, err
}

// placeAndCommit places blobs and runs commit, which inserts the rows naming
// them, holding the blobs from before it looks for them on disk until commit
// has returned (see blobs.go). If commit fails or panics, the blobs it
// created that nothing names are removed again.
func (l *Lake) placeAndCommit(ctx context.Context, files []staged, commit func() error) (err error) {
	l.sweepLeftovers(ctx)
	keys := make([]media.Key, len(files))
	for i, s := range files {
		keys[i] = s.key()
	}
	l.holdBlobs(keys)
	var created map[media.Key]bool
	var j *media.Journal
	committed := false
	defer func() {
		settled := l.releaseBlobs(context.WithoutCancel(ctx), keys, created, !committed)
		j.Done(settled)
	}()
	if created, j, err = l.place(ctx, files); err != nil {
		return err
	}
	err = commit()
	committed = err == nil
	return err
}

// Placed is a blob written to a temp file of the store (Store().Write) and
// the extension it is to be stored under.
type Placed struct {
	Pending *Pending
	Ext     string
}

// StoreBlobs puts blobs that belong to no lake file (augmented dataset
// frames) in place and runs commit, which writes the rows naming them, with
// the guarantees an Add has: durable before commit, removed again if commit
// fails, swept after a crash in between. The caller's rows must be visible
// to a BlobUser it registered, or the lake will not know they name a blob.
func (l *Lake) StoreBlobs(ctx context.Context, blobs []Placed, commit func() error) error {
	if len(blobs) == 0 {
		return commit() // nothing to place, nor to sync
	}
	files := make([]staged, len(blobs))
	for i, b := range blobs {
		files[i] = staged{pend: b.Pending, p: probed{Ext: b.Ext}}
	}
	return l.placeAndCommit(ctx, files, commit)
}

type stageResult struct {
	staged   staged
	skipped  *File
	rejected *Rejection
}

// check runs a caller's Check on a staged file, turning an error into a rejection.
func (l *Lake) check(o *stageResult, i int, fn func(int, File) error) {
	s := o.staged
	f := File{Name: s.up.Name, Type: s.p.Type, Size: s.pend.Size, Format: s.p.Format, Width: s.p.Width,
		Height: s.p.Height, FrameCount: s.p.FrameCount, FrameRate: s.p.FrameRate, VideoIndex: s.up.VideoIndex}
	err := fn(i, f)
	if err == nil {
		return
	}
	s.pend.Discard()
	code, msg := errs.CodeOf(err), err.Error()
	var e *errs.Error
	if errors.As(err, &e) {
		msg = e.Message
	}
	o.rejected = &Rejection{Name: s.up.Name, Code: code, Reason: msg}
}

// parallel runs fn(0..n-1) on the lake's workers; fn recovers its own
// panics, as only it knows what a half-done call leaves to undo.
func (l *Lake) parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(n, l.opt.Workers); w++ {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// stage checks an upload and writes it to a temp file, or skips it when its
// bytes are those of one of same, the collection's files of its name (see
// readKnown). A panic (in the upload's Open or reader, or in a probe)
// rejects that upload alone.
func (l *Lake) stage(ctx context.Context, up Upload, same []File) (out stageResult) {
	reject := func(code errs.Code, format string, args ...any) stageResult {
		return stageResult{rejected: &Rejection{Name: up.Name, Code: code, Reason: fmt.Sprintf(format, args...)}}
	}
	var pend *Pending
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("ingest panic", "file", up.Name, "panic", p, "stack", string(debug.Stack()))
			if pend != nil {
				pend.Discard()
			}
			out = reject(errs.Internal, "internal error while reading %q: %v", up.Name, p)
		}
	}()
	if err := ValidateFileName(up.Name); err != nil {
		return reject(errs.InvalidArgument, "%s", err.Error())
	}
	if err := ctx.Err(); err != nil {
		return reject(errs.Unavailable, "canceled")
	}
	rc, err := up.Open()
	if err != nil {
		return reject(errs.InvalidArgument, "read: %v", err)
	}
	if len(same) > 0 {
		var f *File
		if rc, f, err = readKnown(rc, same, l.opt.MaxFileSize); f != nil {
			return stageResult{skipped: f}
		} else if err != nil {
			return reject(errs.InvalidArgument, "read: %v", err)
		}
	}
	// An image by its name is read no further than its check reads
	// (probeImage refuses one found by its bytes once written).
	limit := l.opt.MaxFileSize
	if MediaType(up.Name, nil) == Image {
		limit = min(limit, vips.MaxCheckBytes)
	}
	pend, err = l.writeClose(rc, limit)
	switch {
	case errors.Is(err, ErrTooLarge) && limit < l.opt.MaxFileSize:
		return reject(errs.TooLarge, "%v", errImageTooLarge)
	case errors.Is(err, ErrTooLarge):
		return reject(errs.TooLarge, "file is larger than the %d-byte limit", l.opt.MaxFileSize)
	case err != nil:
		return reject(errs.Internal, "store: %v", err)
	}
	if pend.Size == 0 {
		pend.Discard()
		return reject(errs.InvalidArgument, "file is empty")
	}
	for i, f := range same { // one too large for readKnown to hold
		if f.Blob == pend.Hash {
			pend.Discard()
			return stageResult{skipped: &same[i]}
		}
	}
	p, err := l.probe(ctx, up.Name, pend)
	if err != nil {
		pend.Release()
		pend.Discard()
		if errors.Is(err, errUnreadable) {
			return reject(errs.InvalidArgument, "%s", strings.TrimPrefix(err.Error(), errUnreadable.Error()+": "))
		}
		if errors.Is(err, errImageTooLarge) {
			return reject(errs.TooLarge, "%v", err)
		}
		if errors.Is(err, errTooManyPixels) {
			return reject(errs.TooLarge, "%s", strings.TrimPrefix(err.Error(), errTooManyPixels.Error()+": "))
		}
		return reject(errs.Internal, "probe: %v", err)
	}
	// Probed: the bytes wait on disk, so an upload of many parts does not
	// hold them all in memory until the last is staged, and their buffer
	// goes back to the store for the next file (the check and the scores
	// keep none of it).
	q := l.scoreStaged(pend, p)
	pend.Release()
	p.grey = nil
	return stageResult{staged: staged{up: up, pend: pend, p: p, q: q}}
}

// readKnown reads an upload whose name the collection has, hashing it in
// memory: when its bytes are one of same's, that file is returned and no
// temp file is written (a re-import that skips everything writes nothing).
// Otherwise it returns a reader of the same bytes, read or not yet, to stage
// as usual. Only files that fit in memLimit are compared here; larger ones
// are compared by stage once written.
func readKnown(rc io.ReadCloser, same []File, limit int64) (io.ReadCloser, *File, error) {
	var size int64 = -1
	for _, f := range same {
		size = max(size, f.Size)
	}
	if size > min(memLimit, limit) {
		return rc, nil, nil
	}
	buf, err := io.ReadAll(io.LimitReader(rc, size+1))
	if err != nil {
		rc.Close()
		return nil, nil, err
	}
	sum := sha256.Sum256(buf)
	hash := hex.EncodeToString(sum[:])
	for i, f := range same {
		if f.Blob == hash && int64(len(buf)) == f.Size {
			rc.Close()
			return nil, &same[i], nil
		}
	}
	return readCloser{io.MultiReader(bytes.NewReader(buf), rc), rc}, nil, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

func (l *Lake) insertFiles(ctx context.Context, opt AddOptions, meta string, files []staged) ([]File, error) {
	collName := opt.Collection
	now := l.now().UTC()
	out := make([]File, 0, len(files))
	err := l.db.Tx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		var collSeq int64
		if collName != "" {
			var err error
			if collSeq, err = ensureCollection(ctx, tx, collName, collectionTypeOf(files), now); err != nil {
				return err
			}
		}
		st, err := prepareFileStatements(ctx, tx)
		if err != nil {
			return err
		}
		defer st.close()
		for _, s := range files {
			// Ordered: a new id goes to the end of the unique index on ids,
			// not to a random page of it for the commit to write out again.
			f := File{ID: id.Ordered("fil"), UniqueName: uniqueName(collName, s.up.Name), Name: s.up.Name,
				Type: s.p.Type, Blob: s.pend.Hash, Ext: s.p.Ext, MIME: s.p.MIME, Size: s.pend.Size, Format: s.p.Format,
				Width: s.p.Width, Height: s.p.Height, FrameCount: s.p.FrameCount, FrameRate: s.p.FrameRate,
				Duration: s.p.Duration, VideoIndex: s.up.VideoIndex, Metadata: json.RawMessage(meta),
				CreatedAt: now, UpdatedAt: now}
			if err := st.file.QueryRowContext(ctx, f.ID, f.UniqueName, f.Name, f.Type, f.Blob, f.Ext, f.MIME, f.Size,
				f.Format, nullInt(f.Width), nullInt(f.Height), nullInt(f.FrameCount), nullFloat(f.FrameRate),
				nullFloat(f.Duration), f.VideoIndex, meta, millis(now), millis(now)).Scan(&f.seq); err != nil {
				return fmt.Errorf("insert %s: %w", f.Name, err)
			}
			if s.q != nil {
				if err := insertQuality(ctx, st.quality, st.centre, f.seq, *s.q); err != nil {
					return fmt.Errorf("insert %s: quality: %w", f.Name, err)
				}
			}
			if collSeq != 0 {
				if _, err := st.member.ExecContext(ctx, collSeq, f.seq, millis(now)); err != nil {
					return err
				}
			}
			out = append(out, f)
		}
		if opt.InTx != nil {
			return opt.InTx(ctx, tx, out)
		}
		return nil
	})
	return out, err
}

// fileStatements are insertFiles' statements, prepared once a transaction:
// prepared per file, parsing them cost a quarter of their inserts.
type fileStatements struct{ file, quality, centre, member *sql.Stmt }

func prepareFileStatements(ctx context.Context, tx *sql.Tx) (*fileStatements, error) {
	st := &fileStatements{}
	for _, p := range []struct {
		s **sql.Stmt
		q string
	}{
		{&st.file, `INSERT INTO file (id, unique_name, name, type, blob, ext, mime, size, format, width, height,
			frame_count, frame_rate, duration, video_index, metadata, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`},
		{&st.quality, qualityInsert},
		{&st.centre, centreInsert},
		{&st.member, `INSERT INTO collection_file (collection_seq, file_seq, added_at) VALUES (?, ?, ?)`},
	} {
		var err error
		if *p.s, err = tx.PrepareContext(ctx, p.q); err != nil {
			st.close()
			return nil, err
		}
	}
	return st, nil
}

func (st *fileStatements) close() {
	for _, s := range []*sql.Stmt{st.file, st.quality, st.centre, st.member} {
		if s != nil {
			s.Close()
		}
	}
}

// collectionTypeOf is the type a new collection gets from the files that
// create it: from their media, the type most of its images and videos have
// (images on a tie); files of type other do not count, and only a
// collection with no media at all is an other_collection.
func collectionTypeOf(files []staged) CollectionType {
	n := map[FileType]int{}
	for _, f := range files {
		n[f.p.Type]++
	}
	switch {
	case n[Image] == 0 && n[Video] == 0:
		return OtherCollection
	case n[Video] > n[Image]:
		return VideoCollection
	}
	return ImageCollection
}

// ValidateFileName refuses names that are not a plain file name.
func ValidateFileName(name string) error {
	switch {
	case name == "":
		return errs.Invalid("files", "file name is empty")
	case len(name) > 255:
		return errs.Invalid("files", "file name %.40q... is longer than 255 bytes", name)
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		return errs.Invalid("files", "file name %q must be a plain name without path separators or ..", name)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errs.Invalid("files", "file name %q contains control characters", name)
	case strings.IndexFunc(name, isBidiControl) >= 0:
		r, _ := utf8.DecodeRuneInString(name[strings.IndexFunc(name, isBidiControl):])
		return errs.Invalid("files", "file name %q contains a bidirectional control character (%U), which can "+
			"make a name display as another; rename the file", name, r)
	}
	return nil
}

// isBidiControl reports the characters that reorder the text around them
// (embeddings, overrides, isolates, direction marks): invisible, and able
// to show one name as another.
func isBidiControl(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069' || r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// ValidateCollectionName refuses empty, overlong or control-character names.
func ValidateCollectionName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errs.Invalid("collectionName", "collection name is empty")
	case len(name) > 200:
		return errs.Invalid("collectionName", "collection name is longer than 200 bytes")
	case strings.IndexFunc(name, unicode.IsControl) >= 0 || strings.IndexFunc(name, isBidiControl) >= 0:
		return errs.Invalid("collectionName", "collection name %q contains control or bidirectional control characters", name)
	}
	return nil
}

// normalizeObject checks that raw is a JSON object at most MaxMetadataDepth
// levels deep and returns it compacted ("{}" for none). Every way metadata
// comes in passes here, so the depth limit holds for all of them.
func normalizeObject(field string, raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}", nil
	}
	if jsonDepth(raw) > MaxMetadataDepth {
		return "", errs.Invalid(field, "%s nests deeper than %d levels", field, MaxMetadataDepth)
	}
	// Compact checks the syntax; an object is what starts with a brace.
	// (No decode into a map: a MOT import checks a million of these.)
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil || b.Bytes()[0] != '{' {
		return "", errs.Invalid(field, "%s must be a JSON object", field)
	}
	return b.String(), nil
}

// uniqueName is readable and URL-safe: collection and file stem slugs plus a
// random suffix, e.g. "batch-01-dog-0001-k3f9a2m7".
func uniqueName(collection, file string) string {
	stem := strings.TrimSuffix(file, filepath.Ext(file))
	parts := []string{}
	for _, s := range []string{slug(collection), slug(stem)} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(append(parts, id.Token(5)), "-")
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	return strings.TrimRight(b.String(), "-")
}

func nullInt(v int) any {
	if v == 0 {
		return nil
	}
	return v
}

func nullFloat(v float64) any {
	if v == 0 {
		return nil
	}
	return v
}
