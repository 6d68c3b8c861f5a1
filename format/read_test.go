package format_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// Real inputs: Debian's labelme-examples (labelme's labelme2voc.py and
// labelme2coco.py output) and darknet's sample images and coco.names.
const (
	labelmeVOC  = "/usr/share/doc/labelme-examples/examples/bbox_detection/data_dataset_voc"
	labelmeCOCO = "/usr/share/doc/labelme-examples/examples/instance_segmentation/data_dataset_coco"
	darknetData = "/usr/share/darknet/data"
)

// read reads dir and returns the items by media path relative to dir.
func read(t *testing.T, dir string, f format.Format) (map[string]format.Item, *format.Report) {
	t.Helper()
	items := map[string]format.Item{}
	rep, err := format.Read(context.Background(), dir, f, func(it format.Item) error {
		rel, _ := filepath.Rel(dir, it.Media)
		items[filepath.ToSlash(rel)] = it
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	return items, rep
}

type px struct{ x, y, w, h float64 }

// boxesOf fits an item's boxes to a width x height image.
func boxesOf(rep *format.Report, it format.Item, w, h int) map[string][]px {
	out := map[string][]px{}
	for _, b := range rep.Fit(it, w, h) {
		out[b.Label] = append(out[b.Label], px{b.X, b.Y, b.W, b.H})
	}
	return out
}

func near(a, b px) bool {
	return math.Abs(a.x-b.x) < 0.01 && math.Abs(a.y-b.y) < 0.01 && math.Abs(a.w-b.w) < 0.01 && math.Abs(a.h-b.h) < 0.01
}

func TestLabelmeVOC(t *testing.T) {
	items, rep := read(t, labelmeVOC, format.Auto)
	if rep.Format != format.VOC || !strings.Contains(rep.Why, "Annotations/") {
		t.Fatalf("format %s (%s), want voc", rep.Format, rep.Why)
	}
	if len(items) != 3 {
		t.Fatalf("%d items, want the 3 of JPEGImages (not AnnotationsVisualization): %v", len(items), items)
	}
	it := items["JPEGImages/2011_000003.jpg"]
	if it.Width != 500 || it.Height != 338 || it.Source != "Annotations/2011_000003.xml" {
		t.Errorf("item %+v", it)
	}
	// <xmin>191.0</xmin> <xmax>313.0</xmax> are 1-based pixel indices: x 190, width 123.
	got := boxesOf(rep, it, 500, 338)["person"]
	want := []px{{190, 106.369, 123, 223}, {364, 82, 136, 251}}
	if len(got) != 2 || !near(got[0], want[0]) || !near(got[1], want[1]) {
		t.Errorf("2011_000003 persons %v, want %v", got, want)
	}
	n := 0
	for _, it := range items {
		n += len(it.Boxes)
	}
	if n != 9 || rep.Refused() != 0 {
		t.Errorf("%d boxes, %d refused (%v), want 9 and 0", n, rep.Refused(), rep.Problems)
	}
	if !reflect.DeepEqual(rep.Categories, []string{"person", "bus", "car"}) &&
		len(rep.Categories) != 3 {
		t.Errorf("categories %v", rep.Categories)
	}
}

func TestLabelmeCOCO(t *testing.T) {
	items, rep := read(t, labelmeCOCO, format.Auto)
	if rep.Format != format.COCO || !strings.Contains(rep.Why, "annotations.json") {
		t.Fatalf("format %s (%s), want coco", rep.Format, rep.Why)
	}
	if len(rep.Categories) != 21 || rep.Categories[0] != "_background_" || rep.Categories[15] != "person" {
		t.Errorf("categories %v: want labelme's 21 in id order", rep.Categories)
	}
	if len(items) != 3 {
		t.Fatalf("%d items, want 3 (Visualization/ is not named by the JSON)", len(items))
	}
	it := items["JPEGImages/2011_000003.jpg"]
	got := boxesOf(rep, it, it.Width, it.Height)
	if p := got["person"]; len(p) != 2 || !near(p[0], px{191, 107, 123, 221}) || !near(got["bottle"][0], px{369, 159, 19, 54}) {
		t.Errorf("2011_000003 boxes %v", got)
	}
	// Every annotation has a bbox and a polygon: both come in, nothing to report.
	if len(rep.Counts) != 0 {
		t.Errorf("counts %v, want none", rep.Counts)
	}
	if b := it.Boxes[0]; b.Type != shape.Polygon || len(b.Polygon) != 1 || len(b.Polygon[0]) < 6 || b.W <= 0 {
		t.Errorf("first annotation %+v: want its polygon beside its bbox", b)
	}
}

// writeFiles writes name → content under dir; content "" copies nothing but
// makes an empty file, and a content starting with "@" copies that file.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		b := []byte(body)
		if src, ok := strings.CutPrefix(body, "@"); ok {
			var err error
			if b, err = os.ReadFile(src); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// darknetTree is an Ultralytics-layout YOLO tree of darknet's sample
// images and class names with hand-written labels and the odd cases.
func darknetTree(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"obj.names":                "@" + darknetData + "/coco.names",
		"images/train/dog.jpg":     "@" + darknetData + "/dog.jpg",
		"images/val/horses.jpg":    "@" + darknetData + "/horses.jpg",
		"images/train/giraffe.jpg": "@" + darknetData + "/giraffe.jpg",
		"labels/train/dog.txt": "16 0.291667 0.659722 0.25 0.541667\n" + // dog
			"1 0.436198 0.496528 0.614583 0.564236\n" + // bicycle
			"7 0.95 0.2 0.2 0.15\n" + // truck past the right edge
			"0 0.1 0.1 0.2 0.1 0.2 0.3 0.1 0.3\n" + // a segment
			"16 0.5 0.5 0.1\n" + // malformed
			"99 0.5 0.5 0.1 0.1\n" + // no class 99
			"2 0.5 0.5 0 0.1\n", // zero width
		"labels/val/horses.txt":  "17 0.5 0.5 0.4 0.6\n",
		"labels/train/ghost.txt": "0 0.5 0.5 0.1 0.1\n", // no image
	})
	return dir
}

func TestDarknetYOLO(t *testing.T) {
	dir := darknetTree(t)
	items, rep := read(t, dir, format.Auto)
	if rep.Format != format.YOLO || len(rep.Categories) != 80 {
		t.Fatalf("format %s (%s), %d categories", rep.Format, rep.Why, len(rep.Categories))
	}
	dog := items["images/train/dog.jpg"]
	if dog.Split != "train" || items["images/val/horses.jpg"].Split != "val" {
		t.Errorf("splits %q %q", dog.Split, items["images/val/horses.jpg"].Split)
	}
	got := boxesOf(rep, dog, 768, 576)
	want := map[string]px{"dog": {128, 224, 192, 312}, "truck": {652.8, 72, 115.2, 86.4}, "person": {76.8, 57.6, 76.8, 115.2}}
	for label, w := range want {
		if len(got[label]) != 1 || !near(got[label][0], w) {
			t.Errorf("%s: %v, want %v", label, got[label], w)
		}
	}
	if len(got["bicycle"]) != 1 {
		t.Errorf("bicycle: %v", got["bicycle"])
	}
	if g, ok := items["images/train/giraffe.jpg"]; !ok || len(g.Boxes) != 0 {
		t.Errorf("giraffe (no label file) should be an item without boxes: %+v %v", g, ok)
	}
	// The segment line is a polygon in fractions of the image, placed on it
	// (as often as it is fitted: the item keeps its fractions).
	for _, b := range rep.Fit(dog, 768, 576) {
		if b.Label != "person" {
			continue
		}
		want := []float64{76.8, 57.6, 153.6, 57.6, 153.6, 172.8, 76.8, 172.8}
		if b.Type != shape.Polygon || len(b.Polygon) != 1 || len(b.Polygon[0]) != len(want) {
			t.Fatalf("segment %+v", b)
		}
		for i, v := range want {
			if math.Abs(b.Polygon[0][i]-v) > 1e-9 {
				t.Errorf("segment point %d: %v, want %v", i/2, b.Polygon[0][i], v)
			}
		}
	}
	wantCounts := map[format.Kind]int{format.Malformed: 1, format.UnknownCategory: 1, format.ZeroSize: 1,
		format.LabelWithoutImage: 1, format.ImageWithoutLabels: 1, format.Clipped: 1}
	for k := range wantCounts { // fitted twice: the truck is clipped twice
		if k == format.Clipped {
			wantCounts[k] = 2
		}
	}
	if !reflect.DeepEqual(rep.Counts, wantCounts) {
		t.Errorf("counts %v, want %v", rep.Counts, wantCounts)
	}
	lines := map[format.Kind]string{}
	for _, p := range rep.Problems {
		lines[p.Kind] = p.File + ":" + strconv.Itoa(p.Line)
	}
	if lines[format.Malformed] != "labels/train/dog.txt:5" || lines[format.UnknownCategory] != "labels/train/dog.txt:6" ||
		lines[format.Clipped] != "labels/train/dog.txt:3" || lines[format.LabelWithoutImage] != "labels/train/ghost.txt:0" {
		t.Errorf("problem places %v", lines)
	}
}

// fixtureTree copies a testdata fixture and writes the images it names.
func fixtureTree(t *testing.T, fixture string, images ...string) string {
	dir := t.TempDir()
	files := map[string]string{}
	ents, _ := os.ReadDir(filepath.Join("testdata", fixture))
	for _, e := range ents {
		files[e.Name()] = "@" + filepath.Join("testdata", fixture, e.Name())
	}
	for _, img := range images {
		files[img] = "@" + darknetData + "/person.jpg" // any image: readers do not decode
	}
	writeFiles(t, dir, files)
	return dir
}

// TestCVATFixture: boxes with their attributes, and every other shape CVAT
// writes that framelake keeps, hand-checked against the fixture.
func TestCVATFixture(t *testing.T) {
	dir := fixtureTree(t, "cvat", "images/street-1.jpg", "images/street-2.jpg", "images/street-4.jpg")
	items, rep := read(t, dir, format.Auto)
	if rep.Format != format.CVAT || !reflect.DeepEqual(rep.Categories, []string{"car", "person", "day"}) {
		t.Fatalf("format %s, categories %v", rep.Format, rep.Categories)
	}
	s1, s2, s4 := items["images/street-1.jpg"], items["images/street-2.jpg"], items["images/street-4.jpg"]
	if s1.Split != "train" || s2.Split != "val" || len(items) != 3 {
		t.Fatalf("items %v", items)
	}
	b := rep.Fit(s1, 64, 48)
	if len(b) != 3 || b[0].Label != "car" || !near(px{b[0].X, b[0].Y, b[0].W, b[0].H}, px{4, 6, 26.5, 20}) ||
		!reflect.DeepEqual(b[0].Attributes, map[string]any{"occluded": true, "color": "blue"}) ||
		b[1].Label != "person" || b[1].Type != shape.Polygon || !reflect.DeepEqual(b[1].Polygon, [][]float64{{40, 10, 50, 8, 52, 30}}) ||
		!near(px{b[1].X, b[1].Y, b[1].W, b[1].H}, px{40, 8, 12, 22}) || b[2].Label != "day" || b[2].Type != shape.Class {
		t.Errorf("street-1 shapes %+v", b)
	}
	b = rep.Fit(s2, 64, 48)
	if len(b) != 1 || !near(px{b[0].X, b[0].Y, b[0].W, b[0].H}, px{50, 40, 14, 8}) || b[0].Attributes["rotation"] != 15.0 {
		t.Errorf("street-2 boxes %+v: want the one past the edge clipped", b)
	}
	b = rep.Fit(s4, 64, 48)
	if len(b) != 4 {
		t.Fatalf("street-4 shapes %+v", b)
	}
	if !reflect.DeepEqual(b[0].Points, []float64{1, 40, 20, 44, 30, 40}) || b[0].Type != shape.Polyline {
		t.Errorf("polyline %+v", b[0])
	}
	if !reflect.DeepEqual(b[1].Keypoints, []shape.Keypoint{{Name: "1", X: 5, Y: 5, V: 2}, {Name: "2", X: 7.5, Y: 9, V: 2}}) {
		t.Errorf("points %+v", b[1])
	}
	// outside="1" is not labelled (0), occluded="1" hidden (1).
	if !reflect.DeepEqual(b[2].Keypoints, []shape.Keypoint{{Name: "nose", X: 10, Y: 12, V: 2}, {Name: "left_eye", X: 9, Y: 11, V: 1},
		{Name: "right_eye", X: 0, Y: 0, V: 0}}) {
		t.Errorf("skeleton %+v", b[2])
	}
	// rle "1, 4, 1" over the 3x2 box at (2, 3), row by row: (3,3) (4,3) (2,4)
	// (3,4) set. Column-major on 64x48: positions 100 (2,4), 147 and 148
	// (3,3 and 3,4), 195 (4,3).
	if m, err := b[3].Mask.RLE(); err != nil || !reflect.DeepEqual(m.Counts, []uint32{100, 1, 46, 2, 46, 1, 2876}) ||
		m.Bounds() != (shape.Rect{X: 2, Y: 3, W: 3, H: 2}) {
		t.Errorf("mask %+v %v", b[3].Mask, err)
	}
	want := map[format.Kind]int{format.Ignored: 1, format.ZeroSize: 1, format.LabelWithoutImage: 1, format.Clipped: 1}
	if !reflect.DeepEqual(rep.Counts, want) {
		t.Errorf("counts %v, want %v", rep.Counts, want)
	}
}

// TestLabelStudioFixture: rectangles, a polygon, a keypoint and a choice
// (a class) in percent of the image, hand-checked on its 64x48; a brush
// whose rle [0, 1, 2] does not decode is malformed (lsbrush_test.go reads good ones).
func TestLabelStudioFixture(t *testing.T) {
	dir := fixtureTree(t, "labelstudio", "street-1.jpg", "photos/street-2.jpg")
	items, rep := read(t, dir, format.Auto)
	if rep.Format != format.LabelStudio || !reflect.DeepEqual(rep.Categories, []string{"car", "nose", "person", "sunny"}) {
		t.Fatalf("format %s, categories %v", rep.Format, rep.Categories)
	}
	if len(items) != 2 || len(items["photos/street-2.jpg"].Boxes) != 0 {
		t.Fatalf("items %+v", items)
	}
	got := boxesOf(rep, items["street-1.jpg"], 64, 48)
	// The polygon (25%,25%) (50%,25%) (50%,75%): (16,12) (32,12) (32,36).
	if len(got["car"]) != 1 || !near(got["car"][0], px{4, 6, 32, 12}) || len(got["person"]) != 2 ||
		!near(got["person"][0], px{16, 12, 16, 24}) || !near(got["person"][1], px{48, 24, 16, 12}) {
		t.Errorf("street-1 boxes %v", got)
	}
	types := map[string]shape.Type{}
	for _, b := range rep.Fit(items["street-1.jpg"], 64, 48) {
		types[b.Label] = b.Type
		if b.Type == shape.Keypoints && !reflect.DeepEqual(b.Keypoints, []shape.Keypoint{{Name: "nose", X: 8, Y: 12, V: 2}}) {
			t.Errorf("keypoint %+v", b.Keypoints)
		}
	}
	if types["sunny"] != shape.Class || types["nose"] != shape.Keypoints {
		t.Errorf("types %v", types)
	}
	want := map[format.Kind]int{format.Malformed: 1, format.ZeroSize: 1, format.LabelWithoutImage: 1, format.Clipped: 2}
	if !reflect.DeepEqual(rep.Counts, want) {
		t.Errorf("counts %v, want %v (fitted twice: clipped twice)", rep.Counts, want)
	}
}

func TestRawWhenNothingRecognised(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.jpg": "@" + darknetData + "/dog.jpg", "notes.txt": "hello"})
	items, rep := read(t, dir, format.Auto)
	if rep.Format != format.Raw || len(items) != 1 || rep.Refused() != 0 {
		t.Errorf("format %s (%s), items %v", rep.Format, rep.Why, items)
	}
}

// TestCOCOFixture: category ids with gaps (1, 3, 90) kept in id order; a
// polygon beside a bbox kept with it; a polygon without bbox kept, its box
// its bounds; iscrowd kept; an RLE mask whose counts do not cover its size
// refused, its bbox imported as a box; an unknown category, a zero-size
// box, a record that does not parse, an annotation of no listed image and
// an image not on disk refused.
func TestCOCOFixture(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"annotations/instances_val2017.json": "@testdata/coco/instances_val2017.json",
		"val2017/000000397133.jpg":           "@" + darknetData + "/person.jpg",
		"val2017/000000037777.jpg":           "@" + darknetData + "/person.jpg",
	})
	items, rep := read(t, dir, format.Auto)
	if rep.Format != format.COCO || !reflect.DeepEqual(rep.Categories, []string{"person", "car", "toothbrush"}) {
		t.Fatalf("format %s, categories %v", rep.Format, rep.Categories)
	}
	it := items["val2017/000000397133.jpg"]
	if it.Split != "val" || len(items) != 2 {
		t.Fatalf("items %+v", items)
	}
	b := rep.Fit(it, 64, 48)
	if len(b) != 3 || b[0].Label != "person" || b[1].Label != "car" || b[1].Attributes["iscrowd"] != 1 ||
		b[1].W != 14 || b[2].Label != "toothbrush" || !near(px{b[2].X, b[2].Y, b[2].W, b[2].H}, px{10, 10, 10, 15}) {
		t.Errorf("boxes %+v", b)
	}
	if b[0].Type != shape.Polygon || !reflect.DeepEqual(b[0].Polygon, [][]float64{{4.5, 6, 24.5, 6, 24.5, 36}}) ||
		b[1].Type != "" || b[2].Type != shape.Polygon || !reflect.DeepEqual(b[2].Polygon, [][]float64{{10, 10, 20, 12, 15, 25}}) {
		t.Errorf("shapes %+v", b)
	}
	want := map[format.Kind]int{format.UnknownCategory: 1, format.ZeroSize: 1,
		format.Malformed: 2, format.LabelWithoutImage: 2, format.Clipped: 1}
	if !reflect.DeepEqual(rep.Counts, want) {
		t.Errorf("counts %v, want %v", rep.Counts, want)
	}
	// Each problem at the line where its record starts.
	lines := map[string]int{}
	for _, p := range rep.Problems {
		lines[string(p.Kind)+" "+strings.Fields(p.Message)[1]] = p.Line
	}
	wantLines := map[string]int{"unknown_category 4:": 20, "zero_size 5:": 21, "malformed 8:": 24,
		"label_without_image 999": 23, "label_without_image 252219": 12, "malformed 2:": 17}
	for k, l := range wantLines {
		if lines[k] != l {
			t.Errorf("%s at line %d, want %d (all: %v)", k, lines[k], l, lines)
		}
	}
}

// TestBrokenVOCFile: an XML cut short is refused as malformed with its
// line, and its image is imported without boxes, not dropped.
func TestBrokenVOCFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"JPEGImages/a.jpg":  "@" + darknetData + "/dog.jpg",
		"JPEGImages/b.jpg":  "@" + darknetData + "/dog.jpg",
		"Annotations/a.xml": "<annotation>\n<filename>a.jpg</filename>\n<object><name>dog</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>9</xmax><ymax>9</ymax></bndbox></object>\n</annotation>\n",
		"Annotations/b.xml": "<annotation>\n<filename>b.jpg</filename>\n<object><name>dog</name>\n",
	})
	items, rep := read(t, dir, format.Auto)
	want := map[format.Kind]int{format.Malformed: 1, format.ImageWithoutLabels: 1}
	if len(items) != 2 || len(items["JPEGImages/a.jpg"].Boxes) != 1 || !reflect.DeepEqual(rep.Counts, want) {
		t.Fatalf("items %v, counts %v", items, rep.Counts)
	}
	if p := rep.Problems[0]; p.File != "Annotations/b.xml" || !strings.Contains(p.Message, "line 4") {
		t.Errorf("problem %+v", p)
	}
}

// labelmeExamples is Debian's labelme-examples (the package labelme-examples; make test installs it).
const labelmeExamples = "/usr/share/doc/labelme-examples/examples"

// TestLabelmePrimitives reads labelme's own primitives example, one shape
// of each type, hand-checked against its JSON: rectangles as boxes, the
// polygon, line and line strip, the point as keypoints of one point, and
// the circle (centre (195, 84) through (225, 125), radius √(30² + 41²) =
// 50.80) as a polygon of 64 vertices.
func TestLabelmePrimitives(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"primitives.json": "@" + labelmeExamples + "/primitives/primitives.json",
		"primitives.jpg":  "@" + labelmeExamples + "/primitives/primitives.jpg",
	})
	items, rep := read(t, dir, format.Auto)
	if rep.Format != format.Labelme || len(items) != 1 || len(rep.Counts) != 0 {
		t.Fatalf("format %s (%s), %d items, counts %v", rep.Format, rep.Why, len(items), rep.Counts)
	}
	bs := rep.Fit(items["primitives.jpg"], 560, 450)
	if len(bs) != 7 {
		t.Fatalf("%d shapes: %+v", len(bs), bs)
	}
	if b := bs[0]; b.Type != "" || !near(px{b.X, b.Y, b.W, b.H}, px{32, 35, 100, 100}) {
		t.Errorf("rectangle %+v", b)
	}
	r := math.Hypot(30, 41)
	if b := bs[1]; b.Type != shape.Polygon || len(b.Polygon[0]) != 128 || math.Abs(b.Polygon[0][0]-(195+r)) > 1e-9 ||
		math.Abs(b.W-2*r) > 1e-9 {
		t.Errorf("circle %+v", b)
	}
	if b := bs[3]; b.Type != shape.Polygon || !reflect.DeepEqual(b.Polygon, [][]float64{{69, 318, 45, 403, 173, 406, 198, 321}}) ||
		!near(px{b.X, b.Y, b.W, b.H}, px{45, 318, 153, 88}) {
		t.Errorf("polygon %+v", b)
	}
	if b := bs[4]; b.Type != shape.Polyline || !reflect.DeepEqual(b.Points, []float64{188, 178, 160, 224}) {
		t.Errorf("line %+v", b)
	}
	if b := bs[5]; b.Type != shape.Keypoints || !reflect.DeepEqual(b.Keypoints, []shape.Keypoint{{Name: "point", X: 345, Y: 174, V: 2}}) {
		t.Errorf("point %+v", b)
	}
	if b := bs[6]; b.Type != shape.Polyline || len(b.Points) != 6 || b.Label != "line_strip" {
		t.Errorf("line strip %+v", b)
	}
}

// TestLabelmeInstancesAndFlags reads labelme's instance segmentation
// example (3 images, polygons with group ids) and its classification
// example (image flags: a true flag is a class).
func TestLabelmeInstancesAndFlags(t *testing.T) {
	items, rep := read(t, labelmeExamples+"/instance_segmentation/data_annotated", format.Auto)
	if rep.Format != format.Labelme || len(items) != 3 || len(rep.Counts) != 0 {
		t.Fatalf("format %s, %d items, counts %v", rep.Format, len(items), rep.Counts)
	}
	polygons := 0
	for _, it := range items {
		for _, b := range it.Boxes {
			if b.Type == shape.Polygon && len(b.Polygon[0]) >= 6 {
				polygons++
			}
		}
	}
	if polygons == 0 {
		t.Error("no polygons")
	}
	items, rep = read(t, labelmeExamples+"/classification/data_annotated", format.Auto)
	if rep.Format != format.Labelme || len(items) != 2 {
		t.Fatalf("classification: format %s, %d items", rep.Format, len(items))
	}
	it := items["0001.jpg"]
	if len(it.Boxes) != 1 || it.Boxes[0].Label != "cat" || it.Boxes[0].Type != shape.Class {
		t.Errorf("0001.jpg %+v: its flag cat is true", it.Boxes)
	}
}

// TestCOCOKeypoints: a person with labelled keypoints comes in as keypoints
// named by its category, COCO's bbox and area kept and its segmentation
// counted as dropped (one shape an annotation); a person with none
// (num_keypoints 0) as its segmentation.
func TestCOCOKeypoints(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.jpg": "@" + darknetData + "/person.jpg",
		"person_keypoints.json": `{"images": [{"id": 1, "file_name": "a.jpg", "width": 64, "height": 48}],
 "categories": [{"id": 1, "name": "person", "keypoints": ["nose", "left_eye", "right_eye"], "skeleton": [[2, 3]]}],
 "annotations": [
  {"id": 1, "image_id": 1, "category_id": 1, "bbox": [5, 5, 20, 30], "area": 400, "iscrowd": 0, "num_keypoints": 2,
   "keypoints": [10, 12, 2, 9, 11, 1, 0, 0, 0], "segmentation": [[5, 5, 25, 5, 25, 35]]},
  {"id": 2, "image_id": 1, "category_id": 1, "bbox": [30, 5, 10, 10], "area": 50, "iscrowd": 0, "num_keypoints": 0,
   "keypoints": [0, 0, 0, 0, 0, 0, 0, 0, 0], "segmentation": [[30, 5, 40, 5, 40, 15]]}]}`,
	})
	items, rep := read(t, dir, format.Auto)
	bs := rep.Fit(items["a.jpg"], 64, 48)
	if len(bs) != 2 {
		t.Fatalf("%+v", bs)
	}
	want := []shape.Keypoint{{Name: "nose", X: 10, Y: 12, V: 2}, {Name: "left_eye", X: 9, Y: 11, V: 1}, {Name: "right_eye", V: 0}}
	if bs[0].Type != shape.Keypoints || !reflect.DeepEqual(bs[0].Keypoints, want) || bs[0].W != 20 || bs[0].Attributes[format.AreaAttribute] != 400.0 {
		t.Errorf("keypoints %+v", bs[0])
	}
	if bs[1].Type != shape.Polygon {
		t.Errorf("a person without keypoints %+v: want its polygon", bs[1])
	}
	if rep.Counts[format.SegmentDropped] != 1 || len(rep.Counts) != 1 {
		t.Errorf("counts %v", rep.Counts)
	}
}
