package main

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

func printLabels(l *labelimport.Labels) {
	if l == nil {
		return
	}
	fmt.Printf("labels: %d shapes%s on %d files changed, %d unchanged, as human annotations of %s; %d categories\n",
		l.Boxes, byType(l.Shapes), l.FilesChanged, l.FilesUnchanged, l.Operation, len(l.Categories))
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
	shown := map[format.Kind]int{}
	for _, p := range l.Problems {
		// Refused ones all (up to format.MaxListed a kind); of the rest a few: --json lists more.
		if shown[p.Kind]++; p.Kind.Refused() || shown[p.Kind] <= 3 {
			fmt.Printf("  %s\n", p)
		}
	}
	for _, n := range l.Notes {
		fmt.Printf("  note: %s\n", n)
	}
}

// byType says how many shapes of each type there are: " (polygon 10, box
// 2)"; nothing when there are none.
func byType(n map[string]int) string {
	if len(n) == 0 {
		return ""
	}
	return " (" + shape.CountsText(n) + ")"
}

func printProject(p *labelimport.ProjectImport) {
	if p == nil {
		return
	}
	verb := "into"
	if p.Created {
		verb = "into new"
	}
	fmt.Printf("project: %s project %q (%s), labels added: %s\n", verb, p.Name, p.ID, strings.Join(p.Labels, ", "))
	for _, s := range p.Sessions {
		fmt.Printf("  split %q: upload %s, task %s, collection %s, %d frames\n", s.Split, s.UploadID, s.TaskID,
			s.Collection, s.Frames)
	}
}

// httpSink uploads a batch, then sets the boxes of its files, new or not.
func httpSink(f importFlags) labelimport.Sink {
	c := client.New(f.url, f.key, f.secret)
	return func(ctx context.Context, b labelimport.Batch) (labelimport.Outcome, error) {
		files := make([]client.UploadFile, len(b.Paths))
		for i, p := range b.Paths {
			files[i] = client.FileFromPath(p)
		}
		opt := client.UploadOptions{Collection: f.coll, Metadata: b.Metadata, CollectionMetadata: b.CollectionMeta, SkipExisting: true}
		res, err := c.UploadFiles(ctx, opt, files...)
		if err != nil {
			return labelimport.Outcome{}, err
		}
		out := labelimport.Outcome{Stored: httpRefs(res.Stored), Skipped: httpRefs(res.Skipped),
			Rejected: make([]lake.Rejection, len(res.Rejected))}
		for i, r := range res.Rejected {
			out.Rejected[i] = lake.Rejection{Name: r.Name, Code: errs.Code(r.Code), Reason: r.Reason}
		}
		if b.Boxes == nil {
			return out, nil
		}
		fbs := labelimport.FileBoxes(append(out.Stored, out.Skipped...), b.Boxes)
		send := make([]client.FileBoxes, len(fbs))
		for i, f := range fbs {
			send[i] = client.FileBoxes{UniqueName: f.UniqueName, Annotations: make([]client.Box, len(f.Boxes))}
			if f.Boxes == nil { // no labels name the file: null, not labelled empty
				send[i].Annotations = nil
			}
			for j, b := range f.Boxes {
				send[i].Annotations[j] = client.Box{Label: b.Label, X: b.X, Y: b.Y, Width: b.W, Height: b.H, Attributes: b.Attributes,
					Geometry: b.Geometry}
			}
		}
		set, err := c.SetLakeAnnotations(ctx, b.Operation, send)
		out.Boxes = lake.SetBoxesResult{Changed: set.Changed, Unchanged: set.Unchanged}
		return out, err
	}
}

func httpRefs(fs []client.StoredFile) []labelimport.FileRef {
	out := make([]labelimport.FileRef, len(fs))
	for i, f := range fs {
		out[i] = labelimport.FileRef{Name: f.Name, UniqueName: f.UniqueName, Width: f.Width, Height: f.Height}
	}
	return out
}

// importByJob sends an archive (a folder is zipped on the way) to the
// server's import route and waits for its job, whose result is the summary.
func importByJob(ctx context.Context, path string, f importFlags, asJSON bool) error {
	var body io.Reader
	name := filepath.Base(path)
	if labelimport.ArchiveName(path) {
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		body = file
	} else {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(zipFolder(pw, path)) }()
		defer pr.Close()
		body, name = pr, name+".zip"
	}
	c := client.New(f.url, f.key, f.secret)
	jobID, err := c.ImportArchive(ctx, body, client.ImportArchiveOptions{Format: string(f.format), Collection: f.coll,
		Project: f.project, Metadata: f.meta, Name: name})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "import job %s queued\n", jobID)
	j, err := c.WaitJob(ctx, jobID)
	if err != nil {
		return err
	}
	if j.Status != "completed" {
		return fmt.Errorf("import job %s %s: %s", jobID, j.Status, j.Error)
	}
	var sum labelimport.Summary
	if err := json.Unmarshal(j.Result, &sum); err != nil {
		return fmt.Errorf("import job %s: result: %w", jobID, err)
	}
	return report(sum, asJSON)
}

// zipFolder writes the regular files under dir, hidden ones left out, as a
// zip to w, stored as they are: media does not compress.
func zipFolder(w io.Writer, dir string) error {
	paths, err := labelimport.WalkMedia(dir)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	for _, p := range paths {
		if err := zipFile(zw, dir, p); err != nil {
			return err
		}
	}
	return zw.Close()
}

func zipFile(zw *zip.Writer, dir, p string) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return err
	}
	zf, err := zw.CreateHeader(&zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Store})
	if err != nil {
		return err
	}
	src, err := os.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	_, err = io.Copy(zf, src)
	return err
}
