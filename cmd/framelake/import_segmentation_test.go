package main_test

import (
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestImportVOCSegmentationPNGs imports labelme2voc's instance segmentation
// output in labelme-examples (JPEGImages, SegmentationClassPNG and
// SegmentationObjectPNG, no XML) through the binary, then reads the shapes
// back through the API: one mask per object, the lake's measured area of
// each equal to the object's pixels in its PNG counted here.
func TestImportVOCSegmentationPNGs(t *testing.T) {
	dir := filepath.Join(labelmeExamples, "instance_segmentation", "data_dataset_voc")
	data := t.TempDir()
	sum := importLabelled(t, false, dir, "--data", data, "--collection", "seg")
	if sum.Format != "voc" || sum.Stored != 3 || sum.Labels.Boxes != 12 || sum.Labels.Refused != 0 {
		t.Fatalf("summary %+v", sum)
	}
	c, _, stop := serveData(t, data)
	defer stop()
	for _, it := range mustItems(t, c, "seg") {
		bs, err := c.FileAnnotations(context.Background(), it.UniqueName)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, b := range bs {
			if b.Type != "mask" || b.Area == nil {
				t.Fatalf("%s: %s is a %q without area", it.Name, b.Label, b.Type)
			}
			got = append(got, int(*b.Area))
		}
		want := objectPixels(t, filepath.Join(dir, "SegmentationObjectPNG", it.Name[:len(it.Name)-4]+".png"))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: mask areas %v, the PNG's objects %v", it.Name, got, want)
		}
	}
}

// objectPixels counts, sorted, the pixels of each object (index 1-254) of a
// palette PNG.
func objectPixels(t *testing.T, file string) []int {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	n := map[uint8]int{}
	for _, k := range img.(*image.Paletted).Pix {
		n[k]++
	}
	var out []int
	for k, c := range n {
		if k != 0 && k != 255 {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}
