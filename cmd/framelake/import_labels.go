package main

import (
	"archive/zip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/labelio"
	"github.com/framelake/framelake/lake"
)

// labelRead is what reading a folder's labels gave.
type labelRead struct {
	rep   *labelio.Report
	items []labelio.Item
}

func readLabels(ctx context.Context, dir string, f labelio.Format) (*labelRead, error) {
	r := &labelRead{}
	rep, err := labelio.Read(ctx, dir, f, func(it labelio.Item) error {
		r.items = append(r.items, it)
		return nil
	})
	r.rep = rep
	return r, err
}

// labelSummary is what the labels of an import gave: the boxes now on the
// files, the files whose boxes changed (none on a re-run), the files per
// split, and every problem counted by kind (the first of each listed).
type labelSummary struct {
	Operation      string               `json:"operation"`
	Categories     []string             `json:"categories"`
	Boxes          int                  `json:"boxes"`
	FilesChanged   int                  `json:"filesChanged"`
	FilesUnchanged int                  `json:"filesUnchanged"`
	Splits         map[string]int       `json:"splits"`
	Counts         map[labelio.Kind]int `json:"counts"`
	Refused        int                  `json:"refused"`
	Problems       []labelio.Problem    `json:"problems"`
	Notes          []string             `json:"notes,omitempty"`
}

func (l *labelSummary) refused() int {
	if l == nil {
		return 0
	}
	return l.Refused
}

func (l *labelSummary) print() {
	if l == nil {
		return
	}
	fmt.Printf("labels: %d boxes on %d files changed, %d unchanged, as human boxes of %s; %d categories\n",
		l.Boxes, l.FilesChanged, l.FilesUnchanged, l.Operation, len(l.Categories))
	for _, s := range slices.Sorted(maps.Keys(l.Splits)) {
		fmt.Printf("  split %q: %d files\n", s, l.Splits[s])
	}
	for _, k := range slices.Sorted(maps.Keys(l.Counts)) {
		verdict := ""
		if k.Refused() {
			verdict = " (refused)"
		}
		fmt.Printf("  %s: %d%s\n", k, l.Counts[k], verdict)
	}
	shown := map[labelio.Kind]int{}
	for _, p := range l.Problems {
		// Refused ones all (up to labelio.MaxListed a kind); of the rest a few: --json lists more.
		if shown[p.Kind]++; p.Kind.Refused() || shown[p.Kind] <= 3 {
			fmt.Printf("  %s\n", p)
		}
	}
	for _, n := range l.Notes {
		fmt.Printf("  note: %s\n", n)
	}
}

// fileRef is a file the lake stored or already had.
type fileRef struct {
	name, uniqueName string
	width, height    int
}

type addOutcome struct {
	stored, skipped []fileRef
	rejected        []lake.Rejection
	boxes           lake.SetBoxesResult // files whose boxes changed, or were already these
}

// boxesFunc gives the boxes of the file named name once the lake has
// measured it; nil for an import without labels.
type boxesFunc func(name string, width, height int) []lake.Box

// sink is where an import writes: the data folder or a server. add stores
// a batch of files and, with boxes, their boxes as human boxes of
// operation.
type sink struct {
	add   func(ctx context.Context, meta, collMeta json.RawMessage, paths []string, boxes boxesFunc) (addOutcome, error)
	close func()
}

func openSink(ctx context.Context, f importFlags) (*sink, error) {
	op := lake.ImportOperationPrefix + f.coll
	if f.data != "" {
		a, err := appliance.Open(ctx, appliance.Config{DataDir: f.data, JobWorkers: -1, MaxPixels: f.maxPixels, Media: f.media})
		if err != nil {
			return nil, err
		}
		return &sink{add: lakeAdd(a.Lake, f.coll, op), close: func() { a.Close() }}, nil
	}
	c := client.New(f.url, f.key, f.secret)
	return &sink{add: httpAdd(c, f.coll, op), close: func() {}}, nil
}

// lakeAdd writes the boxes of the files it stores in the transaction that
// stores them, so a kill never leaves a labelled file without its boxes;
// files already there get theirs in a transaction after.
func lakeAdd(l *lake.Lake, coll, op string) func(context.Context, json.RawMessage, json.RawMessage, []string, boxesFunc) (addOutcome, error) {
	return func(ctx context.Context, meta, collMeta json.RawMessage, paths []string, boxes boxesFunc) (addOutcome, error) {
		ups := make([]lake.Upload, len(paths))
		for i, p := range paths {
			ups[i] = lake.Upload{Name: filepath.Base(p), Open: func() (io.ReadCloser, error) { return os.Open(p) }}
		}
		fitted := map[string][]lake.Box{}
		var inTx lake.SetBoxesResult
		opt := lake.AddOptions{Collection: coll, Metadata: meta, SkipExisting: true}
		if boxes != nil {
			// Check sees each new file once, measured: its boxes are placed there, not in the transaction.
			var mu sync.Mutex
			opt.Check = func(i int, f lake.File) error {
				b := boxes(ups[i].Name, f.Width, f.Height)
				mu.Lock()
				fitted[ups[i].Name] = b
				mu.Unlock()
				return nil
			}
		}
		opt.InTx = func(ctx context.Context, tx *sql.Tx, stored []lake.File) (err error) {
			if collMeta != nil {
				if err := lake.PatchCollectionMetadataTx(ctx, tx, coll, collMeta); err != nil {
					return err
				}
			}
			if boxes == nil {
				return nil
			}
			files := make([]lake.FileBoxes, len(stored))
			for i, f := range stored {
				files[i] = lake.FileBoxes{UniqueName: f.UniqueName, Boxes: fitted[f.Name]}
			}
			inTx, err = lake.SetHumanBoxesTx(ctx, tx, op, files)
			return err
		}
		res, err := l.Add(ctx, opt, ups)
		out := addOutcome{stored: lakeRefs(res.Stored), skipped: lakeRefs(res.Skipped), rejected: res.Rejected, boxes: inTx}
		if err != nil || boxes == nil || len(res.Skipped) == 0 {
			return out, err
		}
		after, err := l.SetHumanBoxes(ctx, op, fileBoxes(out.skipped, boxes))
		out.boxes.Changed += after.Changed
		out.boxes.Unchanged += after.Unchanged
		return out, err
	}
}

func lakeRefs(fs []lake.File) []fileRef {
	out := make([]fileRef, len(fs))
	for i, f := range fs {
		out[i] = fileRef{f.Name, f.UniqueName, f.Width, f.Height}
	}
	return out
}

// fileBoxes asks boxes for the boxes of each file.
func fileBoxes(refs []fileRef, boxes boxesFunc) []lake.FileBoxes {
	out := make([]lake.FileBoxes, len(refs))
	for i, r := range refs {
		out[i] = lake.FileBoxes{UniqueName: r.uniqueName, Boxes: boxes(r.name, r.width, r.height)}
	}
	return out
}

// httpAdd uploads a batch, then sets the boxes of its files, new or not.
func httpAdd(c *client.Client, coll, op string) func(context.Context, json.RawMessage, json.RawMessage, []string, boxesFunc) (addOutcome, error) {
	return func(ctx context.Context, meta, collMeta json.RawMessage, paths []string, boxes boxesFunc) (addOutcome, error) {
		files := make([]client.UploadFile, len(paths))
		for i, p := range paths {
			files[i] = client.FileFromPath(p)
		}
		opt := client.UploadOptions{Collection: coll, Metadata: meta, CollectionMetadata: collMeta, SkipExisting: true}
		res, err := c.UploadFiles(ctx, opt, files...)
		if err != nil {
			return addOutcome{}, err
		}
		out := addOutcome{stored: httpRefs(res.Stored), skipped: httpRefs(res.Skipped), rejected: make([]lake.Rejection, len(res.Rejected))}
		for i, r := range res.Rejected {
			out.rejected[i] = lake.Rejection{Name: r.Name, Code: errs.Code(r.Code), Reason: r.Reason}
		}
		if boxes == nil {
			return out, nil
		}
		fbs := fileBoxes(append(out.stored, out.skipped...), boxes)
		send := make([]client.FileBoxes, len(fbs))
		for i, f := range fbs {
			send[i] = client.FileBoxes{UniqueName: f.UniqueName, Annotations: make([]client.Box, len(f.Boxes))}
			for j, b := range f.Boxes {
				send[i].Annotations[j] = client.Box{Label: b.Label, X: b.X, Y: b.Y, Width: b.W, Height: b.H, Attributes: b.Attributes}
			}
		}
		set, err := c.SetLakeAnnotations(ctx, op, send)
		out.boxes = lake.SetBoxesResult{Changed: set.Changed, Unchanged: set.Unchanged}
		return out, err
	}
}

func httpRefs(fs []client.StoredFile) []fileRef {
	out := make([]fileRef, len(fs))
	for i, f := range fs {
		out[i] = fileRef{f.Name, f.UniqueName, f.Width, f.Height}
	}
	return out
}

// importLabelled imports the images the labels name, each batch's files
// then their boxes, as human boxes of operation import:<collection>: a
// re-run skips the files already there and sets only boxes that differ,
// so it finishes what a refusal or a kill left undone.
func importLabelled(ctx context.Context, dir string, f importFlags, read *labelRead, asJSON bool) error {
	byPath := map[string]labelio.Item{}
	for _, it := range read.items {
		if prev, ok := byPath[it.Media]; ok { // named twice (two COCO files): both sets of boxes
			it.Boxes = append(prev.Boxes, it.Boxes...)
		}
		byPath[it.Media] = it
	}
	if len(byPath) == 0 {
		return fmt.Errorf("no images with %s labels under %s (%s)", read.rep.Format, dir, read.rep.Why)
	}
	ignored, err := unnamedMedia(dir, byPath, read.rep)
	if err != nil {
		return err
	}
	metas, err := splitMetadata(f.meta, byPath)
	if err != nil {
		return err
	}
	collMeta, _ := json.Marshal(map[string]any{"import": map[string]any{"format": read.rep.Format,
		"categories": read.rep.Categories}})
	s, err := openSink(ctx, f)
	if err != nil {
		return err
	}
	defer s.close()
	ls := &labelSummary{Operation: lake.ImportOperationPrefix + f.coll, Categories: read.rep.Categories, Splits: map[string]int{}}
	var mu sync.Mutex
	store := func(ctx context.Context, paths []string) (int, int, []lake.Rejection, error) {
		o, err := s.add(ctx, metas[byPath[paths[0]].Split], collMeta, paths, fitter(read.rep, paths, byPath, ls, &mu))
		mu.Lock()
		ls.FilesChanged += o.boxes.Changed
		ls.FilesUnchanged += o.boxes.Unchanged
		mu.Unlock()
		return len(o.stored), len(o.skipped), o.rejected, err
	}
	batches := labelBatches(byPath, f.batch)
	sum, err := runImport(ctx, batches, f.parallel, store, newProgress(len(byPath)))
	if err != nil {
		return err
	}
	rep := read.rep
	sum.Format, sum.FormatWhy, sum.Ignored, sum.Labels = rep.Format, rep.Why, ignored, ls
	ls.Counts, ls.Refused, ls.Problems, ls.Notes = rep.Counts, rep.Refused(), rep.Problems, rep.Notes
	return report(sum, asJSON)
}

// fitter places the boxes of a batch's files in their images, as the
// lake measured them, and counts them with the files' splits.
func fitter(rep *labelio.Report, paths []string, byPath map[string]labelio.Item, ls *labelSummary, mu *sync.Mutex) boxesFunc {
	byName := make(map[string]labelio.Item, len(paths))
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
			lb := lake.Box{Label: b.Label, X: b.X, Y: b.Y, W: b.W, H: b.H}
			if len(b.Attributes) > 0 {
				lb.Attributes, _ = json.Marshal(b.Attributes)
			}
			out = append(out, lb)
		}
		ls.Boxes += len(out)
		return out
	}
}

// labelBatches cuts the files into batches of at most size, each of one
// split (its files share the split's metadata) and without two files of
// one name (the lake's answer names files by name).
func labelBatches(byPath map[string]labelio.Item, size int) [][]string {
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

// splitMetadata is the metadata of each split's files: --metadata with
// "split" set, so a user can rebuild the split (metadata.split = "train").
func splitMetadata(meta string, byPath map[string]labelio.Item) (map[string]json.RawMessage, error) {
	base := map[string]any{}
	if meta != "" {
		if err := json.Unmarshal([]byte(meta), &base); err != nil || base == nil {
			return nil, fmt.Errorf("--metadata must be a JSON object: %v", err)
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
func unnamedMedia(dir string, named map[string]labelio.Item, rep *labelio.Report) ([]ignoredFiles, error) {
	paths, err := walkMedia(dir)
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
			rep.Add(labelio.Problem{Kind: labelio.ImageWithoutLabels, File: filepath.ToSlash(rel),
				Message: "no labels name this file; imported without boxes"})
			named[p] = labelio.Item{Media: p}
			continue
		}
		byExt[filepath.Ext(p)]++
	}
	out := []ignoredFiles{}
	for _, ext := range slices.Sorted(maps.Keys(byExt)) {
		out = append(out, ignoredFiles{Ext: ext, Count: byExt[ext],
			Reason: fmt.Sprintf("media outside the folders of the images the %s labels name", rep.Format)})
	}
	return out, nil
}

// unpackZip extracts an archive (an export from another tool, or
// framelake's own) into a new temp folder, refusing entries that would land
// outside it, and returns the folder.
func unpackZip(path string) (string, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	defer zr.Close()
	tmp, err := os.MkdirTemp("", "framelake-import-")
	if err != nil {
		return "", err
	}
	for _, e := range zr.File {
		if err := unpackEntry(tmp, e); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("%s: %w", path, err)
		}
	}
	return tmp, nil
}

func unpackEntry(dir string, e *zip.File) error {
	name := filepath.FromSlash(e.Name)
	if !filepath.IsLocal(name) {
		return fmt.Errorf("entry %q would land outside the folder", e.Name)
	}
	p := filepath.Join(dir, name)
	if e.FileInfo().IsDir() {
		return os.MkdirAll(p, 0o755)
	}
	if !e.Mode().IsRegular() {
		return nil // links and devices: an archive of data has none
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	r, err := e.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return fmt.Errorf("entry %q: %w", e.Name, err)
	}
	return w.Close()
}
