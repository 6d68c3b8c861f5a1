package format_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// vocXML has three objects: the first without a bndbox (refused), so the
// boxes read are objects 2 and 3 of the document.
const vocXML = `<annotation><filename>a.jpg</filename><size><width>8</width><height>6</height></size>
<object><name>cat</name></object>
<object><name>dog</name><bndbox><xmin>2</xmin><ymin>2</ymin><xmax>4</xmax><ymax>3</ymax></bndbox></object>
<object><name>cat</name><bndbox><xmin>6</xmin><ymin>1</ymin><xmax>7</xmax><ymax>2</ymax></bndbox></object>
</annotation>`

// segPNG is an 8x6 palette PNG: index 2 (object 2) at (1,1), (2,1) and
// (1,2), the void 255 around (2,2), 0 elsewhere.
func segPNG(t *testing.T, w, h int) []byte {
	pal := make(color.Palette, 256)
	for i := range pal {
		pal[i] = color.Gray{Y: uint8(i)}
	}
	img := image.NewPaletted(image.Rect(0, 0, w, h), pal)
	for _, p := range [][2]int{{1, 1}, {2, 1}, {1, 2}} {
		img.SetColorIndex(p[0], p[1], 2)
	}
	img.SetColorIndex(2, 2, 255)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestVOCSegmentationObject: SegmentationObject/<stem>.png gives each
// object the pixels of its number in the XML's order (VOC's convention),
// the void border none; an object without pixels keeps its box alone. A
// PNG of another size is a problem and masks nothing.
func TestVOCSegmentationObject(t *testing.T) {
	for _, size := range [][2]int{{8, 6}, {9, 6}} {
		dir := t.TempDir()
		for name, body := range map[string][]byte{"Annotations/a.xml": []byte(vocXML), "JPEGImages/a.jpg": []byte("x"),
			"SegmentationObject/a.png": segPNG(t, size[0], size[1])} {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
			os.WriteFile(filepath.Join(dir, name), body, 0o644)
		}
		items, rep := read(t, dir, format.Auto)
		bs := items["JPEGImages/a.jpg"].Boxes
		if len(bs) != 2 || bs[0].Label != "dog" || bs[1].Type != "" {
			t.Fatalf("%v: boxes %+v", size, bs)
		}
		if size[0] != 8 {
			if bs[0].Type != "" || rep.Counts[format.Malformed] != 2 {
				t.Errorf("a 9x6 PNG masked %+v, counts %v", bs[0], rep.Counts)
			}
			continue
		}
		m, err := bs[0].Mask.RLE()
		// Column-major on 6 rows: (1,1) is 7, (1,2) 8, (2,1) 13.
		if bs[0].Type != shape.Mask || err != nil || !slices.Equal(m.Counts, []uint32{7, 2, 4, 1, 34}) {
			t.Errorf("dog's mask %+v %v", m, err)
		}
	}
}
