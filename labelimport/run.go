package labelimport

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// Run imports the media under dir, with the labels opt.Format reads there,
// through sink. With opt.Project, ann opens the project's upload sessions
// (one per split) and sink must be the lake's. The summary's Refused says
// whether anything was refused; err is for what stopped the import.
func Run(ctx context.Context, dir string, opt Options, sink Sink, ann *annotate.Service) (Summary, error) {
	opt.defaults()
	if opt.Project != "" && ann == nil {
		return Summary{}, errors.New("an import into a project needs the data folder's annotation projects")
	}
	why := "given with --format"
	if opt.Format != format.Raw {
		spill, err := newBoxSpill(opt.SpillDir)
		if err != nil {
			return Summary{}, err
		}
		defer spill.close()
		read, err := readLabels(ctx, dir, opt.Format, opt.Caps, spill)
		if err != nil {
			return Summary{}, err
		}
		if read.rep.Format != format.Raw {
			return importLabelled(ctx, dir, opt, sink, ann, read)
		}
		why = read.rep.Why
	}
	return importRaw(ctx, dir, opt, sink, ann, why)
}

// labelRead is what reading a folder's labels gave: the items without
// their boxes, which wait in the spill, a file's as its spans.
type labelRead struct {
	rep   *format.Report
	items []format.Item
	spill *boxSpill
	spans map[string][]span
}

func readLabels(ctx context.Context, dir string, f format.Format, caps format.Caps, spill *boxSpill) (*labelRead, error) {
	r := &labelRead{spill: spill, spans: map[string][]span{}}
	rep, err := format.ReadEncoded(ctx, dir, f, caps, func(it format.Item) error {
		if len(it.Boxes) > 0 {
			sp, err := spill.put(it.Boxes)
			if err != nil {
				return fmt.Errorf("import: keeping the boxes for their batch: %w", err)
			}
			r.spans[it.Media] = append(r.spans[it.Media], sp)
			it.Boxes = nil
		}
		r.items = append(r.items, it)
		return nil
	})
	r.rep = rep
	return r, err
}

// importRaw imports the media under dir without labels.
func importRaw(ctx context.Context, dir string, opt Options, sink Sink, ann *annotate.Service, why string) (Summary, error) {
	paths, err := WalkMedia(dir)
	if err != nil {
		return Summary{}, err
	}
	paths, ignored, err := mediaOnly(paths)
	if err != nil {
		return Summary{}, err
	}
	byPath := make(map[string]format.Item, len(paths))
	for _, p := range paths {
		byPath[p] = format.Item{Media: p}
	}
	var proj *ProjectImport
	var sessions map[string]*annotate.Session
	if opt.Project != "" {
		if proj, sessions, err = openSessions(ctx, ann, opt, nil, nil, byPath); err != nil {
			return Summary{}, err
		}
	}
	store := func(ctx context.Context, paths []string) (Outcome, error) {
		return sink(ctx, Batch{Paths: paths, Metadata: json.RawMessage(opt.Metadata), Session: sessions[""]})
	}
	batches := chunks(paths, opt.Batch)
	if proj != nil {
		batches = labelBatches(byPath, opt.Batch)
	}
	sum, err := runBatches(ctx, batches, opt, store)
	sum.Format, sum.FormatWhy, sum.Ignored, sum.Project = format.Raw, why, ignored, proj
	return sum, err
}

// importLabelled imports the images the labels name, each batch's files
// then their boxes, as human boxes of operation import:<collection> (or of
// the project): a re-run skips the files already there and sets only boxes
// that differ, so it finishes what a refusal or a kill left undone.
func importLabelled(ctx context.Context, dir string, opt Options, sink Sink, ann *annotate.Service, read *labelRead) (Summary, error) {
	perFile := opt.Caps.WithDefaults().ShapesPerFile
	byPath := read.byMedia(perFile)
	if len(byPath) == 0 {
		// Named relative to the folder: an import job's folder is the server's.
		return Summary{}, fmt.Errorf("no images with %s labels in the folder (%s): %d labels name images that are not there",
			read.rep.Format, read.rep.Why, read.rep.Counts[format.LabelWithoutImage])
	}
	ignored, err := unnamedMedia(dir, byPath, read.rep)
	if err != nil {
		return Summary{}, err
	}
	metas, err := splitMetadata(opt.Metadata, byPath)
	if err != nil {
		return Summary{}, err
	}
	collMeta, _ := json.Marshal(map[string]any{"import": map[string]any{"format": read.rep.Format,
		"categories": read.rep.Categories}})
	ls := &Labels{Operation: lake.ImportOperationPrefix + opt.Collection, Categories: read.rep.Categories, Splits: map[string]int{},
		Shapes: map[string]int{}}
	var proj *ProjectImport
	var sessions map[string]*annotate.Session
	if opt.Project != "" {
		if proj, sessions, err = openSessions(ctx, ann, opt, read.rep.Categories, read.rep.Skeletons, byPath); err != nil {
			return Summary{}, err
		}
		ls.Operation = proj.ID
	}
	var mu sync.Mutex
	batches := labelBatches(byPath, opt.Batch)
	store := func(ctx context.Context, paths []string) (Outcome, error) {
		mu.Lock()
		items := make(map[string]format.Item, len(paths))
		for _, p := range paths {
			items[p] = byPath[p]
		}
		spans := make([][]span, len(paths))
		for i, p := range paths {
			spans[i] = read.spans[p]
		}
		mu.Unlock()
		for i, p := range paths { // this batch's boxes, read back from the spill
			it := items[p]
			var err error
			if it.Boxes, err = read.spill.get(spans[i], perFile); err != nil {
				return Outcome{}, fmt.Errorf("import: reading back the boxes of %s: %w", filepath.Base(p), err)
			}
			items[p] = it
		}
		mu.Lock()
		split, fit := byPath[paths[0]].Split, fitter(read.rep, paths, items, ls, &mu)
		mu.Unlock()
		o, err := sink(ctx, Batch{Paths: paths, Metadata: metas[split], CollectionMeta: collMeta,
			Boxes: fit, Operation: ls.Operation, Session: sessions[split], ImageIDs: imageIDs(items)})
		mu.Lock()
		ls.FilesChanged += o.Boxes.Changed
		ls.FilesUnchanged += o.Boxes.Unchanged
		for _, p := range paths { // stored: what is kept of it can go
			delete(byPath, p)
			delete(read.spans, p)
		}
		mu.Unlock()
		return o, err
	}
	sum, err := runBatches(ctx, batches, opt, store)
	rep := read.rep
	sum.Format, sum.FormatWhy, sum.Ignored, sum.Labels, sum.Project = rep.Format, rep.Why, ignored, ls, proj
	ls.Counts, ls.Refused, ls.Problems, ls.Notes = rep.Counts, rep.Refused(), rep.Problems, rep.Notes
	return sum, err
}

// byMedia hands over the items read, by their media file. A file named by
// two label files (two COCO files) keeps both sets of boxes, within the cap of
// perFile, and what lies past the cap is reported.
func (read *labelRead) byMedia(perFile int) map[string]format.Item {
	byPath := map[string]format.Item{}
	for _, it := range read.items {
		if _, ok := byPath[it.Media]; ok {
			n := 0
			for _, sp := range read.spans[it.Media] {
				n += sp.n
			}
			if n > perFile {
				read.rep.AddN(format.Problem{Kind: format.OverLimit, File: it.Source, Message: fmt.Sprintf(
					"%s: %d boxes from more than one label file, over the limit of %d a file: the first %d kept",
					filepath.Base(it.Media), n, perFile, perFile)}, n-perFile)
			}
		}
		byPath[it.Media] = it
	}
	read.items = nil
	return byPath
}

// imageIDs are the COCO image ids of a batch's items by file name.
func imageIDs(items map[string]format.Item) map[string]int64 {
	var out map[string]int64
	for p, it := range items {
		if it.ImageID != nil {
			if out == nil {
				out = map[string]int64{}
			}
			out[filepath.Base(p)] = *it.ImageID
		}
	}
	return out
}

// fitter places the boxes of a batch's files in their images, as the
// lake measured them, and counts them with the files' splits.
// The caller holds mu.
func fitter(rep *format.Report, paths []string, byPath map[string]format.Item, ls *Labels, mu *sync.Mutex) BoxesFunc {
	byName := make(map[string]format.Item, len(paths))
	for _, p := range paths {
		byName[filepath.Base(p)] = byPath[p]
	}
	return func(name string, width, height int) []lake.Box {
		mu.Lock()
		defer mu.Unlock()
		it := byName[name]
		ls.Splits[it.Split]++
		out := []lake.Box{}
		for _, b := range rep.Fit(it, width, height) {
			lb := lake.Box{Label: b.Label, X: b.X, Y: b.Y, W: b.W, H: b.H, Geometry: b.Geometry}
			if len(b.Attributes) > 0 {
				lb.Attributes, _ = json.Marshal(b.Attributes)
			}
			out = append(out, lb)
			ls.Shapes[string(cmp.Or(b.Type, shape.Box))]++
		}
		ls.Boxes += len(out)
		if it.Source == "" || len(out) == 0 && len(it.Boxes) > 0 {
			return nil // no labels name it (or all were refused): not labelled; [] is labelled empty
		}
		return out
	}
}

// runBatches feeds batches to store with opt.Parallel batches in flight.
func runBatches(ctx context.Context, batches [][]string, opt Options, store func(context.Context, []string) (Outcome, error)) (Summary, error) {
	start := time.Now()
	n := 0
	for _, b := range batches {
		n += len(b)
	}
	sum := Summary{Files: n, Rejected: []lake.Rejection{}, Ignored: []Ignored{}}
	if opt.Files != nil {
		opt.Files(n)
	}
	var mu sync.Mutex
	var firstErr error
	queue := make(chan []string)
	var wg sync.WaitGroup
	done, rejected := 0, 0
	for range opt.Parallel {
		wg.Go(func() {
			for b := range queue {
				o, err := store(ctx, b)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				sum.Stored += len(o.Stored)
				sum.Skipped += len(o.Skipped)
				sum.Rejected = append(sum.Rejected, o.Rejected...)
				done, rejected = done+len(b), rejected+len(o.Rejected)
				if opt.Progress != nil {
					opt.Progress(done, rejected)
				}
				mu.Unlock()
			}
		})
	}
	for _, b := range batches {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		queue <- b
	}
	close(queue)
	wg.Wait()
	sum.Seconds = time.Since(start).Seconds()
	if sum.Seconds > 0 {
		sum.PerSec = float64(sum.Stored+sum.Skipped+len(sum.Rejected)) / sum.Seconds
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return sum, firstErr
}

// chunks cuts paths into batches of size.
func chunks(paths []string, size int) [][]string {
	var out [][]string
	for i := 0; i < len(paths); i += size {
		out = append(out, paths[i:min(i+size, len(paths))])
	}
	return out
}

// labelBatches cuts the files into batches of at most size, each of one
// split (its files share the split's metadata and session) and without two
// files of one name (the lake's answer names files by name).
func labelBatches(byPath map[string]format.Item, size int) [][]string {
	paths := slices.Collect(maps.Keys(byPath))
	sort.Slice(paths, func(i, j int) bool {
		a, b := byPath[paths[i]], byPath[paths[j]]
		if a.Split != b.Split {
			return a.Split < b.Split
		}
		return paths[i] < paths[j]
	})
	var out [][]string
	var cur []string
	names := map[string]bool{}
	for _, p := range paths {
		if len(cur) > 0 && (len(cur) == size || names[filepath.Base(p)] || byPath[cur[0]].Split != byPath[p].Split) {
			out = append(out, cur)
			cur, names = nil, map[string]bool{}
		}
		cur = append(cur, p)
		names[filepath.Base(p)] = true
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// splitMetadata is the metadata of each split's files: the import's
// metadata with "split" set, so a user can rebuild the split
// (metadata.split = "train").
func splitMetadata(meta string, byPath map[string]format.Item) (map[string]json.RawMessage, error) {
	base := map[string]any{}
	if meta != "" {
		if err := json.Unmarshal([]byte(meta), &base); err != nil || base == nil {
			return nil, fmt.Errorf("metadata must be a JSON object: %v", err)
		}
	}
	out := map[string]json.RawMessage{}
	for _, it := range byPath {
		if _, done := out[it.Split]; done {
			continue
		}
		m := maps.Clone(base)
		if it.Split != "" {
			m["split"] = it.Split
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		out[it.Split] = b
	}
	return out, nil
}

// unnamedMedia adds to named, as images without labels, the images and
// videos no label names in the folders of those it does (an extensionless
// JPEG in JPEGImages), and counts by extension the others, outside the
// format's image folders: left out.
func unnamedMedia(dir string, named map[string]format.Item, rep *format.Report) ([]Ignored, error) {
	paths, err := WalkMedia(dir)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for p := range named {
		dirs[filepath.Dir(p)] = true
	}
	byExt := map[string]int{}
	for _, p := range paths {
		if _, ok := named[p]; ok {
			continue
		}
		if t, err := lake.MediaTypeOfFile(p); err != nil {
			return nil, err
		} else if t != lake.Image && t != lake.Video {
			continue
		}
		if dirs[filepath.Dir(p)] {
			rel, _ := filepath.Rel(dir, p)
			rep.Add(format.Problem{Kind: format.ImageWithoutLabels, File: filepath.ToSlash(rel),
				Message: "no labels name this file; imported without boxes"})
			named[p] = format.Item{Media: p}
			continue
		}
		byExt[filepath.Ext(p)]++
	}
	out := []Ignored{}
	for _, ext := range slices.Sorted(maps.Keys(byExt)) {
		out = append(out, Ignored{Ext: ext, Count: byExt[ext],
			Reason: fmt.Sprintf("media outside the folders of the images the %s labels name", rep.Format)})
	}
	return out, nil
}

// WalkMedia lists the regular files under dir, skipping hidden files and
// folders: what an import of dir reads.
func WalkMedia(dir string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	return paths, err
}

// mediaOnly keeps the images and videos among paths, as the lake judges
// them by name or, for a name it does not know, by magic bytes, and counts
// the rest by extension. A folder of both imports into one collection typed
// by its majority (images on a tie; see lake's collectionTypeOf): that
// type's files go first, so the first batch, which creates the
// collection, is of it.
func mediaOnly(paths []string) (media []string, ignored []Ignored, err error) {
	var images, videos []string
	byExt := map[string]int{}
	ignored = []Ignored{}
	for _, p := range paths {
		t, err := lake.MediaTypeOfFile(p)
		if err != nil {
			return nil, nil, err
		}
		switch t {
		case lake.Image:
			images = append(images, p)
		case lake.Video:
			videos = append(videos, p)
		default:
			byExt[strings.ToLower(filepath.Ext(p))]++
		}
	}
	for _, ext := range slices.Sorted(maps.Keys(byExt)) {
		ignored = append(ignored, Ignored{Ext: ext, Count: byExt[ext], Reason: "not an image or video"})
	}
	if len(videos) > len(images) {
		return append(videos, images...), ignored, nil
	}
	return append(images, videos...), ignored, nil
}
