package dataset

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/framelake/framelake/augment"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// buildState is one build of one version, as its job makes it.
type buildState struct {
	v      versionRow
	build  int
	recipe recipe
	aug    *augment.Config // nil: no augmentation
	leak   *Leakage        // of the plan, for the statistics
	skelMu sync.Mutex
	skels  map[string]*shape.Skeleton // keypoints labels' declarations, nil for none
}

// planned is a lake image the build makes a frame of, or a video it
// samples frames of (all in one split), with its split.
type planned struct {
	f      lake.File
	split  string
	frames []int // a video's sampled frames
}

// itemRow is a version_item row to insert.
type itemRow struct {
	uniqueName, name string
	fileSeq          int64
	split            string
	derivedFrom      string // "" for a lake image
	blob, ext        string
	width, height    int
	params           []byte // augmentation steps; nil for a lake image
	boxes            []Box
	video            string     // a sampled frame's video; "" otherwise
	videoFrame       *int       // and its frame there
	hashes           *[3]uint64 // a sampled frame's perceptual hashes (whole, two centres)
}

// build is the BuildJob handler (see the package comment). It is idempotent:
// a run first drops whatever an interrupted run of the same build wrote, and
// makes the same frames again, augmentations included (they are drawn from
// the group's seed and each frame's uniqueName). A build superseded by a
// newer one of the same version does nothing.
func (s *Service) build(ctx context.Context, r *job.Run) error {
	var p buildPayload
	if err := r.Decode(&p); err != nil {
		return err
	}
	b, err := s.startBuild(ctx, p)
	if err != nil || b == nil {
		return err
	}
	plan, err := s.plan(ctx, b)
	if err != nil {
		return err
	}
	total := 0
	for _, p := range plan {
		total += max(1, len(p.frames))
	}
	r.SetTotal(int64(total))
	if err := s.makeAll(ctx, b, r, plan); err != nil {
		return err
	}
	if b.leak, err = s.planLeakage(ctx, b, plan); err != nil {
		return err
	}
	st, err := s.finishBuild(ctx, b)
	if err != nil || st == nil {
		return err
	}
	return r.SetResult(map[string]any{"datasetId": b.v.groupID, "versionId": b.v.id,
		"versionNo": versionNo(b.v.no), "stats": st})
}

// makeAll makes and stores the plan's items in order: images a batch at a
// time, each video's sampled frames in batches as ffmpeg delivers them.
// Storing a batch (syncs, renames, the insert) overlaps making the next
// one, so the cores keep augmenting (or decoding) while the disk flushes.
func (s *Service) makeAll(ctx context.Context, b *buildState, r *job.Run, plan []planned) error {
	var prev chan error
	wait := func() error {
		if prev == nil {
			return nil
		}
		err := <-prev
		prev = nil
		return err
	}
	defer func() { _ = wait() }()
	ord := 0
	emit := func(bt *batch) error {
		if err := wait(); err != nil {
			bt.discard()
			return err
		}
		first := ord
		ord += len(bt.rows)
		ch := make(chan error, 1)
		prev = ch
		go func() { ch <- s.storeBatch(ctx, b, r, first, bt) }()
		return nil
	}
	for start := 0; start < len(plan); {
		if plan[start].f.Type == lake.Video {
			if err := s.videoItems(ctx, b, plan[start], emit); err != nil {
				return err
			}
			start++
			continue
		}
		end := start
		for end < min(start+s.opt.Batch, len(plan)) && plan[end].f.Type != lake.Video {
			end++
		}
		bt, err := s.makeItems(ctx, b, plan[start:end])
		if err != nil {
			return err
		}
		if err := emit(bt); err != nil {
			return err
		}
		start = end
	}
	return wait()
}

// startBuild loads the build and clears what earlier attempts left; nil
// means there is nothing to do.
func (s *Service) startBuild(ctx context.Context, p buildPayload) (*buildState, error) {
	v, err := s.versionRow(ctx, s.db.R, p.VersionID)
	if err != nil {
		return nil, err
	}
	if v.status != StatusBuilding || v.pending != p.Build {
		s.log.Info("build superseded", "version", v.id, "build", p.Build)
		return nil, nil
	}
	b := &buildState{v: v, build: p.Build}
	if err := json.Unmarshal([]byte(v.recipe), &b.recipe); err != nil {
		return nil, fmt.Errorf("version %s recipe: %w", v.id, err)
	}
	if len(b.recipe.Augmentation) > 0 {
		if b.aug, err = augment.Parse(b.recipe.Augmentation); err != nil {
			return nil, err
		}
	}
	_, err = s.db.W.ExecContext(ctx, `DELETE FROM version_item WHERE version_seq = ? AND build <> ?`, v.seq, v.current)
	return b, err
}

// plan lists the build's lake images: the base version's frames first (in
// their order, keeping or re-bucketing their splits), then the source's new
// images in lake order.
func (s *Service) plan(ctx context.Context, b *buildState) ([]planned, error) {
	var out []planned
	seen := map[int64]bool{}
	add := func(seqs []int64, splitOf func(lake.File) string) error {
		files, err := s.lake.FilesBySeq(ctx, seqs)
		if err != nil {
			return err
		}
		for _, f := range files {
			if seen[f.Seq()] {
				continue
			}
			seen[f.Seq()] = true
			p := planned{f: f, split: splitOf(f)}
			if f.Type == lake.Video {
				if p.frames, err = s.planVideo(ctx, b, f); err != nil {
					return err
				}
			}
			out = append(out, p)
		}
		return nil
	}
	bucket, err := s.bucketOf(ctx, b)
	if err != nil {
		return nil, err
	}
	if b.recipe.Base != "" {
		seqs, splits, err := s.baseItems(ctx, b.recipe.Base)
		if err != nil {
			return nil, err
		}
		splitOf := bucket
		if b.recipe.KeepSplits {
			splitOf = func(f lake.File) string { return splits[f.Seq()] }
		}
		for i := 0; i < len(seqs); i += 500 {
			if err := add(seqs[i:min(i+500, len(seqs))], splitOf); err != nil {
				return nil, err
			}
		}
	}
	if b.recipe.Source == nil {
		return out, nil
	}
	where, args, err := s.sourceSQL(ctx, *b.recipe.Source)
	if err != nil {
		return nil, fmt.Errorf("selection: %w", err)
	}
	after := int64(0)
	for {
		seqs, err := s.pageSeqs(ctx, where, args, after)
		if err != nil {
			return nil, err
		}
		if err := add(seqs, bucket); err != nil {
			return nil, err
		}
		if len(seqs) < 500 {
			return out, nil
		}
		after = seqs[len(seqs)-1]
	}
}

// planVideo lists the frames a build samples of video f.
func (s *Service) planVideo(ctx context.Context, b *buildState, f lake.File) ([]int, error) {
	vf := b.recipe.VideoFrames
	if vf == nil {
		return nil, fmt.Errorf("video %s: the build has no video_frames to sample it with", f.UniqueName)
	}
	if err := checkVideo(f); err != nil {
		return nil, err
	}
	var vs videoShapes
	if vf.Sample == SampleKeyframes {
		var err error
		if vs, err = s.videoShapes(ctx, b, f); err != nil {
			return nil, err
		}
	}
	return sampleFrames(f, vf, vs), nil
}

// baseItems are the lake files (images, and videos once for all their
// sampled frames) of a version's current build and their splits.
func (s *Service) baseItems(ctx context.Context, versionID string) ([]int64, map[int64]string, error) {
	base, err := s.versionRow(ctx, s.db.R, versionID)
	if err != nil {
		return nil, nil, err
	}
	if base.current == 0 {
		return nil, nil, fmt.Errorf("source version %s has no completed build", versionID)
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT file_seq, min(split) FROM version_item
		WHERE version_seq = ? AND build = ? AND derived_from IS NULL AND file_seq IS NOT NULL
		GROUP BY file_seq ORDER BY min(ord)`,
		base.seq, base.current)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var seqs []int64
	splits := map[int64]string{}
	for rows.Next() {
		var seq int64
		var split string
		if err := rows.Scan(&seq, &split); err != nil {
			return nil, nil, err
		}
		seqs, splits[seq] = append(seqs, seq), split
	}
	return seqs, splits, rows.Err()
}

// pageSeqs returns up to 500 keys of selected files after the key after.
func (s *Service) pageSeqs(ctx context.Context, where string, args []any, after int64) ([]int64, error) {
	return s.lake.FileSeqsAfter(ctx, where, args, after, 500)
}

// batch is a chunk's frames, made and waiting to be stored: the rows and the
// augmented frames' bytes in temp files of the media store.
type batch struct {
	rows   []itemRow
	blobs  []newBlob
	frames int // lake images in the chunk
}

func (bt *batch) discard() {
	for _, x := range bt.blobs {
		x.p.Discard()
	}
}

// makeItems reads the boxes of a chunk of images and augments its training
// frames in parallel.
func (s *Service) makeItems(ctx context.Context, b *buildState, chunk []planned) (*batch, error) {
	boxes, err := s.boxes(ctx, b, chunk)
	if err != nil {
		return nil, err
	}
	derived := make([][]itemRow, len(chunk))
	blobs := make([][]newBlob, len(chunk))
	bt := &batch{frames: len(chunk)}
	if b.aug != nil {
		err := parallel(ctx, len(chunk), s.workers(), func(i int) error {
			if chunk[i].split != Train {
				return nil
			}
			var err error
			derived[i], blobs[i], err = s.augmentFrame(ctx, b, chunk[i], boxes[chunk[i].f.Seq()])
			return err
		})
		for _, x := range blobs {
			bt.blobs = append(bt.blobs, x...)
		}
		if err != nil {
			bt.discard()
			return nil, err
		}
	}
	for i, p := range chunk {
		f := p.f
		bt.rows = append(bt.rows, itemRow{uniqueName: f.UniqueName, name: f.Name, fileSeq: f.Seq(), split: p.split,
			blob: f.Blob, ext: f.Ext, width: f.Width, height: f.Height, boxes: boxes[f.Seq()]})
		bt.rows = append(bt.rows, derived[i]...)
	}
	return bt, nil
}

// storeBatch puts a batch's blobs in place, then inserts its rows numbered
// from first, and reports the chunk's progress.
func (s *Service) storeBatch(ctx context.Context, b *buildState, r *job.Run, first int, bt *batch) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	placed := make([]lake.Placed, len(bt.blobs))
	for i, x := range bt.blobs {
		placed[i] = lake.Placed{Pending: x.p, Ext: x.ext}
	}
	if err := s.lake.StoreBlobs(ctx, placed, func() error { return s.insertItems(ctx, b, first, bt.rows) }); err != nil {
		bt.discard()
		return err
	}
	r.Advance(int64(bt.frames))
	return nil
}

func (s *Service) workers() int {
	if s.opt.Workers > 0 {
		return s.opt.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// boxes reads the boxes of a chunk's images with the build's labels and
// annotation sources, by file.
func (s *Service) boxes(ctx context.Context, b *buildState, chunk []planned) (map[int64][]Box, error) {
	out := map[int64][]Box{}
	ops := b.recipe.Operations
	if ops != nil && len(ops) == 0 {
		return out, nil // operation_list []: no annotations
	}
	seqs := make([]int64, len(chunk))
	for i, p := range chunk {
		seqs[i] = p.f.Seq()
	}
	// A version holds boxes: every shape as its box, but no class label,
	// which names the whole frame and is no object in it.
	all, err := s.lake.Boxes(ctx, lake.BoxQuery{FileSeqs: seqs, Labels: b.recipe.Labels, Operations: ops,
		Types: []shape.Type{shape.Box, shape.Polygon, shape.Mask, shape.Keypoints, shape.Polyline}})
	if err != nil {
		return nil, err
	}
	for _, x := range all {
		if x.Frame == 0 {
			out[x.FileSeq] = append(out[x.FileSeq], boxOf(x))
		}
	}
	return out, nil
}

// augmentFrame makes a training frame's augmented frames and writes their
// bytes to temp files of the media store.
func (s *Service) augmentFrame(ctx context.Context, b *buildState, p planned, boxes []Box) ([]itemRow, []newBlob, error) {
	f := p.f
	img, err := s.lake.Store().ReadAll(ctx, f.Blob, f.Ext)
	if err != nil {
		return nil, nil, fmt.Errorf("augment %s: %w", f.UniqueName, err)
	}
	in := make([]augment.Box, len(boxes))
	for i, x := range boxes {
		// The index as ID: augmentation drops some boxes, and the ones it keeps
		// take their attributes back by it.
		in[i] = augment.Box{ID: strconv.Itoa(i), Label: x.Label, X: x.X, Y: x.Y, W: x.W, H: x.H, Geometry: x.Geometry}
	}
	skels, err := s.skeletons(ctx, b, boxes)
	if err != nil {
		return nil, nil, fmt.Errorf("augment %s: %w", f.UniqueName, err)
	}
	var rows []itemRow
	var ps []newBlob
	stem := strings.TrimSuffix(f.Name, path.Ext(f.Name))
	seen := map[string]bool{}
	buf := augmentBuffers.Get().(*[]byte)
	defer augmentBuffers.Put(buf)
	opt := augment.Options{Key: f.UniqueName, Buffer: *buf, Skeletons: skels}
	err = augment.ApplyEach(ctx, img, in, b.aug, uint64(b.v.seed), AugmentationsPerFrame, opt, func(i int, o augment.Output) error {
		if cap(o.Image) > cap(*buf) {
			*buf = o.Image[:0]
		}
		params, err := json.Marshal(o.Steps)
		if err != nil {
			return err
		}
		if seen[string(params)] {
			return nil // nothing was drawn differently (a flip alone): no duplicate frames
		}
		seen[string(params)] = true
		pend, err := s.lake.Store().Write(bytes.NewReader(o.Image), int64(len(o.Image)))
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		pend.Data = nil // the bytes are on disk; do not hold a batch of them in memory
		ext := extOf(o.Format)
		ps = append(ps, newBlob{pend, ext})
		moved := make([]Box, len(o.Boxes))
		for j, x := range o.Boxes {
			moved[j] = Box{Label: x.Label, X: x.X, Y: x.Y, W: x.W, H: x.H, Geometry: x.Geometry}
			if k, err := strconv.Atoi(x.ID); err == nil && k < len(boxes) {
				moved[j].Attributes = boxes[k].Attributes
			}
		}
		rows = append(rows, itemRow{uniqueName: fmt.Sprintf("%s-aug%d", f.UniqueName, i+1),
			name: fmt.Sprintf("%s-aug%d.%s", stem, i+1, ext), fileSeq: f.Seq(), split: p.split,
			derivedFrom: f.UniqueName, blob: pend.Hash, ext: ext, width: o.Width, height: o.Height,
			params: params, boxes: moved})
		return nil
	})
	if err != nil {
		return nil, ps, fmt.Errorf("augment %s: %w", f.UniqueName, err)
	}
	return rows, ps, nil
}

// skeletons are the declarations of the keypoints labels among boxes, whose
// flip pairs a horizontal flip swaps; each label is asked once a build. A
// label declaring none is left out, and augment then flips COCO's person
// names as COCO's person (augment.Options.Skeletons).
func (s *Service) skeletons(ctx context.Context, b *buildState, boxes []Box) (map[string]*shape.Skeleton, error) {
	if s.opt.Skeletons == nil {
		return nil, nil
	}
	out := map[string]*shape.Skeleton{}
	for _, x := range boxes {
		if x.Type != shape.Keypoints {
			continue
		}
		b.skelMu.Lock()
		sk, asked := b.skels[x.Label]
		b.skelMu.Unlock()
		if !asked {
			var err error
			if sk, err = s.opt.Skeletons(ctx, x.Label); err != nil {
				return nil, err
			}
			b.skelMu.Lock()
			if b.skels == nil {
				b.skels = map[string]*shape.Skeleton{}
			}
			b.skels[x.Label] = sk
			b.skelMu.Unlock()
		}
		if sk != nil {
			out[x.Label] = sk
		}
	}
	return out, nil
}

func extOf(format string) string {
	if format == "jpeg" {
		return "jpg"
	}
	return format
}

// augmentBuffers hold encoded augmented frames between the encoder and the
// store: reused, they spare each frame new memory (page faults cost a tenth
// of a 1080p chain on a VM).
var augmentBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1<<20); return &b }}

// newBlob is an augmented frame's bytes in a temp file of the media store.
type newBlob struct {
	p   *lake.Pending
	ext string
}

// parallel calls fn(0..n-1) on up to workers goroutines and returns the
// first error; a panic in fn is an error, and ctx ending stops new calls.
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	errList := make([]error, n)
	call := func(i int) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
			}
		}()
		return fn(i)
	}
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				errList[i] = call(i)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errList...); err != nil {
		return err
	}
	return ctx.Err()
}

// insertItems writes a chunk's rows in one transaction, numbering them from first.
func (s *Service) insertItems(ctx context.Context, b *buildState, first int, rows []itemRow) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, `INSERT INTO version_item (version_seq, build, ord, unique_name, name,
			file_seq, split, derived_from, blob, ext, width, height, params, boxes, box_count,
			video, video_frame, phash, phash_c1, phash_c2)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for i, r := range rows {
			boxes := r.boxes
			if boxes == nil {
				boxes = []Box{}
			}
			bj, err := json.Marshal(boxes)
			if err != nil {
				return err
			}
			var derived, params, video, frame, h0, h1, h2 any
			if r.derivedFrom != "" {
				derived, params = r.derivedFrom, string(r.params)
			}
			if r.video != "" {
				video, frame = r.video, int64(*r.videoFrame)
			}
			if r.hashes != nil { // the uint64 bits in SQLite's signed integer
				h0, h1, h2 = int64(r.hashes[0]), int64(r.hashes[1]), int64(r.hashes[2])
			}
			if _, err := ins.ExecContext(ctx, b.v.seq, b.build, first+i, r.uniqueName, r.name, r.fileSeq, r.split,
				derived, r.blob, r.ext, r.width, r.height, params, string(bj), len(r.boxes),
				video, frame, h0, h1, h2); err != nil {
				return err
			}
		}
		return nil
	})
}

// finishBuild makes the build current with its statistics, unless a newer
// build superseded it (then it returns nil stats).
func (s *Service) finishBuild(ctx context.Context, b *buildState) (*Stats, error) {
	var st Stats
	superseded := false
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var status string
		var pending int
		if err := tx.QueryRowContext(ctx, `SELECT status, pending_build FROM dataset_version WHERE seq = ?`,
			b.v.seq).Scan(&status, &pending); err != nil {
			return err
		}
		if status != StatusBuilding || pending != b.build {
			superseded = true
			return nil
		}
		var err error
		if st, err = computeStats(ctx, tx, b.v.seq, b.build, b.recipe.Labels); err != nil {
			return err
		}
		st.Leakage = b.leak
		sj, _ := json.Marshal(st)
		now := millis(s.now())
		if _, err := tx.ExecContext(ctx, `UPDATE dataset_version SET status = 'ready', current_build = ?,
			built_recipe = recipe, stats = ?, built_at = ?, updated_at = ? WHERE seq = ?`,
			b.build, string(sj), now, now, b.v.seq); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM version_item WHERE version_seq = ? AND build <> ?`, b.v.seq, b.build)
		return err
	})
	if err != nil || superseded {
		return nil, err
	}
	return &st, nil
}

// computeStats counts the frames and boxes of one build.
func computeStats(ctx context.Context, q querier, versionSeq int64, build int, labels []string) (Stats, error) {
	st := Stats{Splits: map[string]Count{Train: {}, Test: {}, Validation: {}}, Labels: map[string]Count{}}
	for _, l := range labels {
		st.Labels[l] = Count{}
	}
	rows, err := q.QueryContext(ctx, `SELECT split, derived_from IS NOT NULL, count(*), coalesce(sum(box_count), 0)
		FROM version_item WHERE version_seq = ? AND build = ? GROUP BY 1, 2`, versionSeq, build)
	if err != nil {
		return st, err
	}
	for rows.Next() {
		var split string
		var augmented bool
		var frames, boxes int
		if err := rows.Scan(&split, &augmented, &frames, &boxes); err != nil {
			rows.Close()
			return st, err
		}
		c := st.Splits[split]
		c.Frames, c.Boxes = c.Frames+frames, c.Boxes+boxes
		if augmented {
			c.Augmented += frames
			st.AugmentedFrames += frames
		}
		st.Splits[split] = c
		st.TotalFrames, st.TotalBoxes = st.TotalFrames+frames, st.TotalBoxes+boxes
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, err
	}
	rows, err = q.QueryContext(ctx, `SELECT json_extract(b.value, '$.label'), count(DISTINCT vi.ord), count(*),
			count(DISTINCT CASE WHEN vi.derived_from IS NOT NULL THEN vi.ord END)
		FROM version_item vi, json_each(vi.boxes) b WHERE vi.version_seq = ? AND vi.build = ? GROUP BY 1`,
		versionSeq, build)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var label string
		var c Count
		if err := rows.Scan(&label, &c.Frames, &c.Boxes, &c.Augmented); err != nil {
			return st, err
		}
		st.Labels[label] = c
	}
	if err := rows.Err(); err != nil {
		return st, err
	}
	if st.Shapes, err = shapeCounts(ctx, q, versionSeq, build); err != nil {
		return st, err
	}
	return st, videoCounts(ctx, q, versionSeq, build, &st)
}

// shapeCounts counts a build's annotations by type, a box having none.
func shapeCounts(ctx context.Context, q querier, versionSeq int64, build int) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT coalesce(json_extract(b.value, '$.type'), 'box'), count(*)
		FROM version_item vi, json_each(vi.boxes) b WHERE vi.version_seq = ? AND vi.build = ? GROUP BY 1`, versionSeq, build)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return nil, err
		}
		out[t] = n
	}
	return out, rows.Err()
}
