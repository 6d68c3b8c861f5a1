package format

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestUltralyticsReadsBack (issue 31, item 27): framelake's own import
// (the reader, auto-detected) reads the Ultralytics export back: every frame
// at images/<split>/, its boxes (clipped to the image, as written) with
// their labels, class names from data.yaml, and nothing reported wrong. A
// label that YAML would misread (quotes, a colon, a " #") reads back as it
// was.
func TestUltralyticsReadsBack(t *testing.T) {
	ds := fixtureDataset
	ds.Labels = []string{"car", `say "hi": #1`, "traffic light"}
	frames := withMedia(t, fixtureFrames())
	for i := range frames {
		for j := range frames[i].Boxes {
			frames[i].Boxes[j].Label = ""
		}
	}
	zr, _ := export(t, ExportYOLOUltralytics, ds, frames, true)
	root := filepath.Join(extract(t, zr), rootFolder(ds, ExportYOLOUltralytics))
	got := map[string]Item{}
	rep, err := Read(context.Background(), root, Auto, func(it Item) error {
		rel, _ := filepath.Rel(root, it.Media)
		if !filepath.IsLocal(rel) {
			rel = it.Media
		}
		got[filepath.ToSlash(rel)] = it
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != YOLO || len(rep.Problems) != 0 || strings.Join(rep.Categories, "|") != strings.Join(ds.Labels, "|") {
		t.Fatalf("report: format %s, categories %q, problems %v", rep.Format, rep.Categories, rep.Problems)
	}
	if len(got) != len(frames) {
		t.Fatalf("read %d images, want %d: %v", len(got), len(frames), got)
	}
	for _, fr := range frames {
		name := "images/" + vocSplits[splitIndex(fr.Split)] + "/" + mediaFile(&fr)
		it, ok := got[name]
		if !ok {
			t.Errorf("%s not read back", name)
			continue
		}
		var want []ExportBox
		for _, b := range fr.Boxes {
			if _, ok := clip(b, fr.Width, fr.Height); ok {
				want = append(want, b)
			}
		}
		if len(it.Boxes) != len(want) {
			t.Errorf("%s: %d boxes, want %d", name, len(it.Boxes), len(want))
			continue
		}
		for i, b := range want {
			r, _ := clip(b, fr.Width, fr.Height)
			rb := it.Boxes[i]
			w, h := float64(fr.Width), float64(fr.Height)
			px := []float64{rb.X * w, rb.Y * h, (rb.X + rb.W) * w, (rb.Y + rb.H) * h}
			for k, v := range []float64{r.x0, r.y0, r.x1, r.y1} {
				if math.Abs(px[k]-v) > 1e-4 || !rb.Relative || rb.Label != ds.Labels[b.ClassID] {
					t.Errorf("%s box %d: read %+v, want %q %+v", name, i, rb, ds.Labels[b.ClassID], r)
					break
				}
			}
		}
	}
}
