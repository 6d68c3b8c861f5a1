package labelimport

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/lake"
)

// LakeSink writes batches into l. A new file's boxes are written in the
// transaction that stores it, so a kill never leaves a labelled file
// without its boxes; files already there get theirs in a transaction after.
// With a session the files go to its collection and become its frames, in
// that same transaction, their boxes the project's; a file that is a frame
// already keeps the boxes reviewers may have changed.
func LakeSink(l *lake.Lake, ann *annotate.Service, coll string) Sink {
	return func(ctx context.Context, b Batch) (Outcome, error) {
		w := newLakeBatch(b, ann, coll)
		opt := lake.AddOptions{Collection: w.target, Metadata: b.Metadata, SkipExisting: true, InTx: w.inTx}
		if b.Boxes != nil {
			opt.Check = w.check
		}
		res, err := l.Add(ctx, opt, w.ups)
		out := Outcome{Stored: lakeRefs(res.Stored), Skipped: lakeRefs(res.Skipped), Rejected: res.Rejected, Boxes: w.written}
		if err != nil || b.Boxes == nil || len(res.Skipped) == 0 {
			return out, err
		}
		return w.skipped(ctx, l, out)
	}
}

// lakeBatch is one batch on its way into the lake: its uploads, and the
// boxes of its new files, placed and encoded as each file is measured
// (check), outside the transaction that holds the lake's one writer, and
// written in the transaction that stores the files (inTx).
type lakeBatch struct {
	b        Batch
	ann      *annotate.Service
	target   string // the collection the files go to
	ups      []lake.Upload
	mu       sync.Mutex
	fitted   map[string][]lake.Box
	prepared map[string]preparedBoxes
	written  lake.SetBoxesResult // by inTx
}

// preparedBoxes are a new file's boxes ready for its transaction, or the
// error preparing them gave, which fails it, as a bad box did in it.
type preparedBoxes struct {
	boxes *lake.ImportBoxes
	err   error
}

func newLakeBatch(b Batch, ann *annotate.Service, coll string) *lakeBatch {
	w := &lakeBatch{b: b, ann: ann, target: coll, ups: make([]lake.Upload, len(b.Paths)),
		fitted: map[string][]lake.Box{}, prepared: map[string]preparedBoxes{}}
	for i, p := range b.Paths {
		w.ups[i] = lake.Upload{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) { return openPlain(p) }}
	}
	if b.Session != nil {
		w.target = b.Session.CollectionName
	}
	return w
}

// check places the boxes of the new file ups[i], measured as f.
func (w *lakeBatch) check(i int, f lake.File) error {
	boxes := w.b.Boxes(w.ups[i].Name, f.Width, f.Height)
	var r preparedBoxes
	if w.b.Session == nil {
		r.boxes, r.err = lake.PrepareImportBoxes(i, f, boxes)
	}
	w.mu.Lock()
	w.fitted[w.ups[i].Name] = boxes
	w.prepared[w.ups[i].Name] = r
	w.mu.Unlock()
	return nil
}

// inTx writes, in the transaction that stores the new files, the
// collection's metadata and the files' boxes: a session's frames, or human
// boxes of the batch's operation with the COCO image ids.
func (w *lakeBatch) inTx(ctx context.Context, tx *sql.Tx, stored []lake.File) (err error) {
	b := w.b
	if b.CollectionMeta != nil {
		if err := lake.PatchCollectionMetadataTx(ctx, tx, w.target, b.CollectionMeta); err != nil {
			return err
		}
	}
	if b.Session != nil {
		w.written.Changed = len(stored)
		for name, bs := range w.fitted { // the project's frames keep boxes as given
			w.fitted[name] = lake.WithoutImportFacts(bs)
		}
		return w.ann.ImportFramesTx(ctx, tx, *b.Session, stored, w.fitted)
	}
	if b.Boxes == nil {
		return nil
	}
	if w.written, err = lake.InsertImportBoxesTx(ctx, tx, b.Operation, stored, func(f lake.File) (*lake.ImportBoxes, error) {
		r := w.prepared[f.Name]
		return r.boxes, r.err
	}); err != nil {
		return err
	}
	ids := map[int64]int64{}
	for _, f := range stored {
		if id, ok := b.ImageIDs[f.Name]; ok {
			ids[f.Seq()] = id
		}
	}
	return lake.SetImageIDsTx(ctx, tx, b.Operation, ids)
}

// skipped sets the boxes of the files that were there already, in a
// transaction after the batch's (a session's frames keep theirs).
func (w *lakeBatch) skipped(ctx context.Context, l *lake.Lake, out Outcome) (Outcome, error) {
	b := w.b
	if b.Session != nil {
		out.Boxes.Unchanged += len(out.Skipped)
		return out, nil
	}
	after, err := l.SetHumanBoxes(ctx, b.Operation, FileBoxes(out.Skipped, b.Boxes))
	out.Boxes.Changed += after.Changed
	out.Boxes.Unchanged += after.Unchanged
	if err != nil || b.ImageIDs == nil {
		return out, err
	}
	ids := map[string]int64{}
	for _, f := range out.Skipped {
		if id, ok := b.ImageIDs[f.Name]; ok {
			ids[f.UniqueName] = id
		}
	}
	return out, l.SetImageIDs(ctx, b.Operation, ids)
}

// openPlain opens a file to read with two system calls where os.Open makes
// six: os.Open learns that a regular file cannot be polled by trying it
// (four fcntl and an epoll_ctl), for every image an import reads; os.NewFile
// asks for the descriptor's flags once and does not try.
func openPlain(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

func lakeRefs(fs []lake.File) []FileRef {
	out := make([]FileRef, len(fs))
	for i, f := range fs {
		out[i] = FileRef{f.Name, f.UniqueName, f.Width, f.Height}
	}
	return out
}

// FileBoxes asks boxes for the boxes of each file.
func FileBoxes(refs []FileRef, boxes BoxesFunc) []lake.FileBoxes {
	out := make([]lake.FileBoxes, len(refs))
	for i, r := range refs {
		out[i] = lake.FileBoxes{UniqueName: r.UniqueName, Boxes: boxes(r.Name, r.Width, r.Height)}
	}
	return out
}
