package format

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// fuzzLayouts place one label file where each format's reader looks for it,
// beside images/a.jpg (readers do not decode images).
var fuzzLayouts = []struct {
	format Format
	file   string
	seed   string
}{
	{YOLO, "labels/a.txt", "0 0.5 0.5 0.2 0.3\n1 0.1 0.1 0.2 0.2 0.3 0.3\n"},
	{COCO, "annotations.json", `{"images":[{"id":1,"file_name":"a.jpg","width":100,"height":80}],` +
		`"categories":[{"id":3,"name":"car"}],"annotations":[{"id":1,"image_id":1,"category_id":3,"bbox":[1,2,30,40],` +
		`"segmentation":[[1,2,31,2,31,42]],"iscrowd":0}]}`},
	{VOC, "Annotations/a.xml", `<annotation><filename>a.jpg</filename><size><width>100</width><height>80</height></size>` +
		`<object><name>car</name><difficult>1</difficult><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>30</xmax><ymax>40</ymax></bndbox></object></annotation>`},
	{CVAT, "annotations.xml", `<annotations><version>1.1</version><image id="0" name="images/a.jpg" width="100" height="80">` +
		`<box label="car" xtl="1" ytl="2" xbr="30" ybr="40" occluded="0"><attribute name="color">red</attribute></box>` +
		`<polygon label="car" points="1,2;30,2;30,40"/></image></annotations>`},
	{LabelStudio, "export.json", `[{"id":1,"data":{"image":"/data/upload/1/images/a.jpg"},"annotations":[{"result":[` +
		`{"type":"rectanglelabels","original_width":100,"original_height":80,"value":{"x":10,"y":10,"width":20,"height":30,` +
		`"rectanglelabels":["car"]}}]}]}]`},
}

// FuzzRead feeds each reader a label file of any bytes: Read must return
// (an error is fine) without panicking or hanging, every problem it lists
// must be counted, and every box it hands out must fit the image once placed.
func FuzzRead(f *testing.F) {
	for i, l := range fuzzLayouts {
		f.Add(uint8(i), []byte(l.seed))
	}
	// Numbers Go parses that are no coordinates.
	f.Add(uint8(0), []byte("0 NaN 0.5 0.2 0.2\n1 0.5 Inf 0.2 0.2\n0 0.5 0.5 -Inf 0.2\n"))
	f.Add(uint8(2), []byte(`<annotation><filename>a.jpg</filename><object><name>car</name><bndbox><xmin>NaN</xmin>`+
		`<ymin>2</ymin><xmax>30</xmax><ymax>Inf</ymax></bndbox></object></annotation>`))
	f.Add(uint8(3), []byte(`<annotations><image id="0" name="images/a.jpg" width="100" height="80">`+
		`<box label="car" xtl="NaN" ytl="2" xbr="30" ybr="40"/><polygon label="car" points="NaN,2;30,Inf;30,40"/></image></annotations>`))
	for i, seed := range []string{"coco/instances_val2017.json", "cvat/annotations.xml", "labelstudio/export.json"} {
		if b, err := os.ReadFile(filepath.Join("testdata", seed)); err == nil && len(b) < 64<<10 {
			f.Add(uint8(i+1+i/2), b) // coco 1, cvat 3, labelstudio 4
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, labels []byte) {
		l := fuzzLayouts[int(which)%len(fuzzLayouts)]
		dir := t.TempDir()
		for name, b := range map[string][]byte{"images/a.jpg": []byte("x"), l.file: labels, "obj.names": []byte("car\nbus\n")} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fit := newReport(l.format, "") // placing boxes, as the importer does once it knows the image's size
		emit := func(it Item) error {
			for _, b := range fit.Fit(it, 100, 80) {
				// A line or one keypoint may be 0 px high or wide; any other shape has an area.
				flat := b.Type == "polyline" || b.Type == "keypoints"
				in := b.X >= 0 && b.Y >= 0 && (b.W > 0 || flat && b.W == 0) && (b.H > 0 || flat && b.H == 0) &&
					b.X+b.W <= 100.0001 && b.Y+b.H <= 80.0001
				if !in || math.IsNaN(b.X+b.Y+b.W+b.H) {
					t.Fatalf("%s: box %+v placed outside the 100x80 image", l.format, b)
				}
			}
			return nil
		}
		got, err := Read(context.Background(), dir, l.format, emit)
		if err != nil || got == nil {
			return
		}
		listed := map[Kind]int{}
		for _, p := range got.Problems {
			listed[p.Kind]++
		}
		for k, n := range listed {
			if got.Counts[k] < n {
				t.Fatalf("%s: %d problems of kind %s listed, %d counted", l.format, n, k, got.Counts[k])
			}
		}
	})
}
