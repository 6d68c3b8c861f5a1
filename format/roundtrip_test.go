package format_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"math"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/testmedia"
)

var roundTripDataset = format.Dataset{Name: "Round Trip", Version: "1.0", Labels: []string{"car", "person", "traffic light"}}

// roundTripFrames cover every split, a frame without boxes, overlapping
// boxes and a label with a space; boxes are whole pixels, as VOC keeps them.
func roundTripFrames() []format.Frame {
	frames := []format.Frame{
		{UniqueName: "street-a-k3f9a", Split: "train", Width: 64, Height: 48, Boxes: []format.ExportBox{
			{Label: "car", ClassID: 0, X: 4, Y: 8, W: 40, H: 30}, {Label: "person", ClassID: 1, X: 20, Y: 10, W: 9, H: 20}}},
		{UniqueName: "street-b-p2x8q", Split: "train", Width: 64, Height: 48},
		{UniqueName: "cross-c-m1n2b", Split: "validation", Width: 32, Height: 32, Boxes: []format.ExportBox{
			{Label: "traffic light", ClassID: 2, X: 0, Y: 0, W: 32, H: 32}, {Label: "person", ClassID: 1, X: 10, Y: 11, W: 6, H: 12}}},
		{UniqueName: "night-d-q7w6e", Split: "test", Width: 48, Height: 32, Boxes: []format.ExportBox{
			{Label: "person", ClassID: 1, X: 2, Y: 2, W: 10, H: 10}, {Label: "car", ClassID: 0, X: 2, Y: 2, W: 10, H: 10}}},
	}
	for i := range frames {
		b := testmedia.JPEG(frames[i].Width, frames[i].Height, i+1)
		frames[i].Name, frames[i].Ext = frames[i].UniqueName+".jpg", "jpg"
		frames[i].Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	return frames
}

func writeExport(t *testing.T, f format.ExportType, frames []format.Frame) []byte {
	t.Helper()
	i := 0
	next := func() (format.Frame, error) {
		if i == len(frames) {
			return format.Frame{}, io.EOF
		}
		i++
		return frames[i-1], nil
	}
	var buf bytes.Buffer
	if err := format.Write(context.Background(), &buf, f, roundTripDataset, next, true); err != nil {
		t.Fatalf("export %s: %v", f, err)
	}
	return buf.Bytes()
}

// unzip writes an archive's files under a new folder.
func unzip(t *testing.T, archive []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, _ := f.Open()
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		writeFiles(t, dir, map[string]string{f.Name: string(b)})
	}
	return dir
}

// entries maps an archive's entry names to their bytes.
func entries(t *testing.T, archive []byte) map[string]string {
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

// TestRoundTrip: for each format framelake exports and reads (YOLO
// Darknet, COCO, Pascal VOC), export → read → export gives the same
// archive, entry for entry and byte for byte, and the boxes read are the
// boxes exported, to a thousandth of a pixel, in the same splits.
func TestRoundTrip(t *testing.T) {
	want := map[format.ExportType]format.Format{format.ExportYOLO: format.YOLO, format.ExportCOCO: format.COCO, format.ExportVOC: format.VOC}
	for ef, lf := range want {
		t.Run(string(lf), func(t *testing.T) {
			frames := roundTripFrames()
			first := writeExport(t, ef, frames)
			dir := unzip(t, first)
			items, rep := read(t, dir, format.Auto)
			if rep.Format != lf || rep.Refused() != 0 || len(items) != len(frames) {
				t.Fatalf("read %s (%s): %d items, counts %v", rep.Format, rep.Why, len(items), rep.Counts)
			}
			byName := map[string]format.Item{}
			for m, it := range items {
				byName[strings.TrimSuffix(path.Base(m), ".jpg")] = it
			}
			again := make([]format.Frame, len(frames))
			for i, fr := range frames {
				it, ok := byName[fr.UniqueName]
				if !ok {
					t.Fatalf("%s not read back", fr.UniqueName)
				}
				if split := map[string]string{"train": "train", "val": "validation", "test": "test"}[it.Split]; split != fr.Split {
					t.Errorf("%s: split %q, exported %q", fr.UniqueName, it.Split, fr.Split)
				}
				again[i] = fr
				again[i].Boxes = nil
				for _, b := range rep.Fit(it, fr.Width, fr.Height) {
					again[i].Boxes = append(again[i].Boxes, format.ExportBox{Label: b.Label,
						ClassID: slices.Index(roundTripDataset.Labels, b.Label), X: b.X, Y: b.Y, W: b.W, H: b.H})
				}
				sameBoxes(t, fr, again[i].Boxes)
			}
			second := writeExport(t, ef, again)
			a, b := entries(t, first), entries(t, second)
			if len(a) != len(b) {
				t.Errorf("first export %d entries, second %d", len(a), len(b))
			}
			for name, body := range a {
				if b[name] != body {
					t.Errorf("%s differs after the round trip:\n%s\n---\n%s", name, body, b[name])
				}
			}
		})
	}
}

func sameBoxes(t *testing.T, fr format.Frame, got []format.ExportBox) {
	t.Helper()
	if len(got) != len(fr.Boxes) {
		t.Errorf("%s: %d boxes read, %d exported", fr.UniqueName, len(got), len(fr.Boxes))
		return
	}
	for i, w := range fr.Boxes {
		g := got[i]
		if g.Label != w.Label || math.Abs(g.X-w.X) > 1e-3 || math.Abs(g.Y-w.Y) > 1e-3 || math.Abs(g.W-w.W) > 1e-3 || math.Abs(g.H-w.H) > 1e-3 {
			t.Errorf("%s box %d: read %+v, exported %+v", fr.UniqueName, i, g, w)
		}
	}
}
