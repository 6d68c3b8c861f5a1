package format

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// shapeFormats are the formats whose golden files and media test use the
// fixture with every shape (withShapes).
var shapeFormats = []ExportType{ExportCOCO, ExportYOLOSegmentation, ExportYOLOPose, ExportCVAT, ExportVOC}

// fixtureFor is the golden fixture of format f.
func fixtureFor(f ExportType) []Frame {
	if slices.Contains(shapeFormats, f) {
		return withShapes(fixtureFrames())
	}
	return fixtureFrames()
}

// withShapes makes some of the fixture's boxes shapes: a polygon, keypoints
// with attributes (one point hidden, one not labelled), a mask with a hole
// and an island, a polyline and a class, and a crowd polygon of two rings.
func withShapes(frames []Frame) []Frame {
	f := &frames[0] // 64x48
	f.Boxes[0].Geometry = shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{4, 8, 44, 8, 24, 38}}}
	f.Boxes[0].Attributes = map[string]any{"colour": "red", "occluded": true}
	f.Boxes[1].Geometry = shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{
		{Name: "nose", X: 24, Y: 12, V: 2}, {Name: "left_eye", X: 23.5, Y: 11, V: 1},
		{Name: "right_eye", V: 0}, {Name: "left_ankle", X: 22, Y: 30.25, V: 2}}}
	f.Boxes[1].Attributes = map[string]any{"pose": "standing"}
	g := &frames[3] // 32x32
	bits := make([]byte, 32*32)
	for x := 2; x < 12; x++ {
		for y := 3; y < 13; y++ {
			hole := x >= 4 && x < 10 && y >= 5 && y < 11
			island := x >= 6 && x < 8 && y >= 7 && y < 9
			if !hole || island {
				bits[x*32+y] = 1
			}
		}
	}
	m := shape.Encode(bits, 32, 32)
	g.Boxes[0] = ExportBox{ClassID: 2, X: 2, Y: 3, W: 10, H: 10,
		Geometry: shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{32, 32}, Counts: m.String()}}}
	g.Boxes[1].Geometry = shape.Geometry{Type: shape.Polyline, Points: []float64{10.2, 10.7, 15.8, 22.8, 12, 20}}
	g.Boxes = append(g.Boxes,
		ExportBox{ClassID: 0, Geometry: shape.Geometry{Type: shape.Class}, Attributes: map[string]any{"weather": "rain"}},
		ExportBox{ClassID: 0, X: 20, Y: 20, W: 10, H: 10, Attributes: map[string]any{"iscrowd": 1},
			Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{20, 20, 24, 20, 24, 24}, {26, 26, 30, 26, 30, 30}}}})
	return frames
}

// readBack imports an extracted export with the readers, items by media base name.
func readBack(t *testing.T, root string, f Format) (map[string]Item, *Report) {
	t.Helper()
	got := map[string]Item{}
	rep, err := Read(context.Background(), root, f, func(it Item) error {
		got[filepath.Base(it.Media)] = it
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, rep
}

// framesOf turns imported items into export frames, as the lake would
// store them (the box of a shape is its bounds; COCO's area attribute is
// the lake's column, not an attribute).
func framesOf(t *testing.T, items map[string]Item, labels []string) []Frame {
	var out []Frame
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range items {
			if !yield(k) {
				return
			}
		}
	}) {
		it := items[name]
		data, err := os.ReadFile(it.Media)
		if err != nil {
			t.Fatal(err)
		}
		if it.Width == 0 { // YOLO files do not say; the image does
			c, _, err := image.DecodeConfig(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			it.Width, it.Height = c.Width, c.Height
		}
		split := map[string]string{"val": SplitValidation, "test": SplitTest}[it.Split]
		if split == "" {
			split = SplitTrain
		}
		fr := Frame{UniqueName: strings.TrimSuffix(name, filepath.Ext(name)), Ext: strings.TrimPrefix(filepath.Ext(name), "."),
			Split: split, Width: it.Width, Height: it.Height}
		fr.Open = openBytes(data)
		for _, b := range it.Boxes {
			if b.Relative {
				b = toPixels(b, float64(it.Width), float64(it.Height))
			}
			bx := ExportBox{Label: b.Label, ClassID: slices.Index(labels, b.Label), X: b.X, Y: b.Y, W: b.W, H: b.H, Geometry: b.Geometry}
			if r := b.Geometry.Bounds(); b.Type != "" && b.Type != shape.Box && b.Type != shape.Class && b.W == 0 {
				bx.X, bx.Y, bx.W, bx.H = r.X, r.Y, r.W, r.H
			}
			for k, v := range b.Attributes {
				if k != AreaAttribute {
					if bx.Attributes == nil {
						bx.Attributes = map[string]any{}
					}
					bx.Attributes[k] = v
				}
			}
			fr.Boxes = append(fr.Boxes, bx)
		}
		out = append(out, fr)
	}
	return out
}

// sameShapes compares what two imports give each image: every shape with
// its label, geometry and attributes, in order; coordinates to tol.
func sameShapes(t *testing.T, want, got map[string]Item, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d images read back, want %d", len(got), len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s not read back", name)
			continue
		}
		if len(g.Boxes) != len(w.Boxes) {
			t.Errorf("%s: %d shapes, want %d: %+v", name, len(g.Boxes), len(w.Boxes), g.Boxes)
			continue
		}
		for i := range w.Boxes {
			if d := shapeDiff(w.Boxes[i], g.Boxes[i], tol); d != "" {
				t.Errorf("%s shape %d: %s", name, i, d)
			}
		}
	}
}

func shapeDiff(w, g Box, tol float64) string {
	wa, ga := stripArea(w.Attributes), stripArea(g.Attributes)
	if w.Label != g.Label || w.Type != g.Type || !reflect.DeepEqual(wa, ga) {
		return fmt.Sprintf("read %q %q %v, want %q %q %v", g.Label, g.Type, ga, w.Label, w.Type, wa)
	}
	near := func(a, b []float64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Abs(a[i]-b[i]) > tol {
				return false
			}
		}
		return true
	}
	switch w.Type {
	case "", shape.Box:
		if !near([]float64{w.X, w.Y, w.W, w.H}, []float64{g.X, g.Y, g.W, g.H}) {
			return fmt.Sprintf("box %v %v %v %v, want %v %v %v %v", g.X, g.Y, g.W, g.H, w.X, w.Y, w.W, w.H)
		}
	case shape.Polygon:
		if len(w.Polygon) != len(g.Polygon) || !near(slices.Concat(w.Polygon...), slices.Concat(g.Polygon...)) {
			return fmt.Sprintf("polygon %v, want %v", g.Polygon, w.Polygon)
		}
	case shape.Polyline:
		if !near(w.Points, g.Points) {
			return fmt.Sprintf("polyline %v, want %v", g.Points, w.Points)
		}
	case shape.Mask:
		if *w.Mask != *g.Mask {
			return fmt.Sprintf("mask %v, want %v", *g.Mask, *w.Mask)
		}
	case shape.Keypoints:
		if len(w.Keypoints) != len(g.Keypoints) {
			return fmt.Sprintf("keypoints %v, want %v", g.Keypoints, w.Keypoints)
		}
		for i, k := range w.Keypoints {
			h := g.Keypoints[i]
			if k.Name != h.Name || k.V != h.V || k.V > 0 && !near([]float64{k.X, k.Y}, []float64{h.X, h.Y}) {
				return fmt.Sprintf("keypoints %v, want %v", g.Keypoints, w.Keypoints)
			}
		}
	}
	return ""
}

func stripArea(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != AreaAttribute {
			out[k] = v
		}
	}
	return out
}

// roundTrip exports frames in f, imports the export, exports that import
// again and imports it: the two imports must give every image the same
// shapes and attributes.
func roundTrip(t *testing.T, f ExportType, lf Format, ds Dataset, frames []Frame, tol float64) map[string]Item {
	t.Helper()
	zr, _ := export(t, f, ds, frames, true)
	first, rep := readBack(t, filepath.Join(extract(t, zr), rootFolder(ds, f)), lf)
	if len(rep.Problems) != 0 {
		t.Fatalf("first import: %v", rep.Problems)
	}
	zr, _ = export(t, f, ds, framesOf(t, first, ds.Labels), true)
	second, rep := readBack(t, filepath.Join(extract(t, zr), rootFolder(ds, f)), lf)
	if len(rep.Problems) != 0 {
		t.Fatalf("second import: %v", rep.Problems)
	}
	sameShapes(t, first, second, tol)
	return first
}

// TestCVATRoundTrip: CVAT for images 1.1 keeps every shape and attribute
// through the CVAT reader, export and import again; the first import
// already gives the fixture's shapes back (the two-ring polygon as its
// mask, keypoints with the unlabelled point outside).
func TestCVATRoundTrip(t *testing.T) {
	frames := withMedia(t, withShapes(fixtureFrames()))
	got := roundTrip(t, ExportCVAT, CVAT, fixtureDataset, frames, 0)
	it := got[mediaFile(&frames[0])]
	if len(it.Boxes) != 2 || it.Boxes[0].Type != shape.Polygon || it.Boxes[0].Attributes["colour"] != "red" ||
		it.Boxes[0].Attributes["occluded"] != true || it.Boxes[1].Type != shape.Keypoints || len(it.Boxes[1].Keypoints) != 4 ||
		it.Boxes[1].Keypoints[1] != (shape.Keypoint{Name: "left_eye", X: 23.5, Y: 11, V: 1}) || it.Boxes[1].Keypoints[2].V != 0 {
		t.Errorf("first frame read back as %+v", it.Boxes)
	}
	it = got[mediaFile(&frames[3])]
	if len(it.Boxes) != 4 || *it.Boxes[0].Mask != *frames[3].Boxes[0].Mask || it.Boxes[2].Type != shape.Class ||
		it.Boxes[2].Attributes["weather"] != "rain" || it.Boxes[3].Type != shape.Mask || it.Boxes[1].Type != shape.Polyline {
		t.Errorf("fourth frame read back as %+v", it.Boxes)
	}
}

// TestCOCORoundTrip: COCO keeps polygons, masks (a two-ring polygon as its
// RLE), keypoints in the category's order, iscrowd and attributes.
func TestCOCORoundTrip(t *testing.T) {
	frames := withMedia(t, withShapes(fixtureFrames()))
	got := roundTrip(t, ExportCOCO, COCO, fixtureDataset, frames, 1e-6)
	kp := got[mediaFile(&frames[0])].Boxes[1]
	if kp.Type != shape.Keypoints || len(kp.Keypoints) != 4 || kp.Keypoints[3].Name != "left_ankle" || kp.Attributes["pose"] != "standing" {
		t.Errorf("keypoints read back as %+v", kp)
	}
	crowd := got[mediaFile(&frames[3])].Boxes
	if len(crowd) != 3 || crowd[2].Attributes["iscrowd"] != 1 {
		t.Errorf("fourth frame read back as %+v", crowd)
	}
}

// TestCOCOKeypointsDeclared: with a declaration, the category lists the
// declared names in order and the skeleton as 1-based pairs; the triples
// follow that order.
func TestCOCOKeypointsDeclared(t *testing.T) {
	ds := fixtureDataset
	ds.Skeletons = func(_ context.Context, l string) (*shape.Skeleton, error) {
		if l == "person" {
			return &shape.COCOPerson, nil
		}
		return nil, nil
	}
	zr, _ := export(t, ExportCOCO, ds, withShapes(fixtureFrames()), false)
	var body string
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "train/annotations.json") {
			body = string(readEntry(t, f))
		}
	}
	want := `"keypoints":[24,12,2,23.5,11,1,` + strings.Repeat("0,", 13*3) + `22,30.25,2,0,0,0],"num_keypoints":3`
	if !strings.Contains(body, want) || !strings.Contains(body, `"keypoints":["nose","left_eye"`) ||
		!strings.Contains(body, `"skeleton":[[16,14],[14,12]`) {
		t.Errorf("annotations.json:\n%s", body)
	}
}

func openBytes(data []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

// toPixels turns a box and shape given in fractions of the image to pixels.
func toPixels(b Box, w, h float64) Box {
	scale := func(xy []float64) []float64 {
		out := make([]float64, len(xy))
		for i, v := range xy {
			out[i] = v * [2]float64{w, h}[i%2]
		}
		return out
	}
	b.X, b.Y, b.W, b.H = b.X*w, b.Y*h, b.W*w, b.H*h
	var rings [][]float64
	for _, r := range b.Polygon {
		rings = append(rings, scale(r))
	}
	b.Polygon, b.Points = rings, scale(b.Points)
	if b.Points != nil && len(b.Points) == 0 {
		b.Points = nil
	}
	kps := slices.Clone(b.Keypoints)
	for i := range kps {
		kps[i].X, kps[i].Y = kps[i].X*w, kps[i].Y*h
	}
	b.Keypoints, b.Relative = kps, false
	return b
}

// TestYOLOSegmentationRoundTrip: YOLO Segmentation read back by the reader
// gives a polygon per shape: the triangle as written, boxes as their four
// corners, and the mask with a hole and an island in the hole as one ring
// (mergeRings) that, read even-odd, is the mask's pixels exactly; exported
// again, the same.
func TestYOLOSegmentationRoundTrip(t *testing.T) {
	frames := withMedia(t, withShapes(fixtureFrames()))
	got := roundTrip(t, ExportYOLOSegmentation, YOLO, fixtureDataset, frames, 2e-6)
	tri := toPixels(got[mediaFile(&frames[0])].Boxes[0], 64, 48)
	if tri.Type != shape.Polygon || shapeDiff(Box{Label: "car", Geometry: frames[0].Boxes[0].Geometry},
		Box{Label: tri.Label, Geometry: tri.Geometry}, 1e-4) != "" {
		t.Errorf("triangle read back as %+v", tri)
	}
	if n := len(got[mediaFile(&frames[0])].Boxes); n != 1 {
		t.Errorf("first frame: %d outlines, want the triangle alone (keypoints have no area)", n)
	}
	var lights []Box
	for _, b := range got[mediaFile(&frames[3])].Boxes {
		if b.Label == "traffic light" {
			lights = append(lights, toPixels(b, 32, 32))
		}
	}
	if len(lights) != 1 || len(lights[0].Polygon) != 1 {
		t.Fatalf("the mask read back as %d shapes, want one of one ring: %+v", len(lights), lights)
	}
	want, err := frames[3].Boxes[0].Mask.RLE()
	if err != nil {
		t.Fatal(err)
	}
	back := shape.Rings(lights[0].Polygon, 32, 32)
	if xor := shape.EvenOdd(back, want).Area(); xor != 0 || want.Area() != 68 {
		t.Errorf("the mask's ring covers %d pixels, %d of them not the mask's %d", back.Area(), xor, want.Area())
	}
}

// TestMergeRings: rings joined as Ultralytics' converter joins an
// annotation's polygons, by hand: two squares bridged at their nearest
// corners, walked out and back; a third ring between them keeps its
// direction, its way out found from its way in; one ring is itself.
func TestMergeRings(t *testing.T) {
	a := []float64{0, 0, 2, 0, 2, 2, 0, 2}
	b := []float64{5, 0, 7, 0, 7, 2, 5, 2}
	c := []float64{10, 0, 12, 0, 12, 2, 10, 2}
	for _, tc := range []struct {
		rings [][]float64
		want  []float64
	}{
		{[][]float64{a}, a},
		// a's nearest to b: (2, 0) and (5, 0), a's index 1, b's 0.
		{[][]float64{a, b}, []float64{2, 0, 2, 2, 0, 2, 0, 0, 2, 0, 5, 0, 7, 0, 7, 2, 5, 2, 5, 0}},
		// b in the middle: in at (5, 0) (index 0), out at (7, 0) (index 1) to c's (10, 0).
		{[][]float64{a, b, c}, []float64{2, 0, 2, 2, 0, 2, 0, 0, 2, 0, 5, 0, 7, 0, 10, 0, 12, 0, 12, 2, 10, 2, 10, 0,
			7, 0, 7, 2, 5, 2, 5, 0}},
		// b reversed: in at (5, 0) (index 3), out at (7, 2) (index 1, the first
		// of two nearest pairs) to c's (10, 2): out before in, kept in its direction.
		{[][]float64{a, {5, 2, 7, 2, 7, 0, 5, 0}, c}, []float64{2, 0, 2, 2, 0, 2, 0, 0, 2, 0, 5, 0, 5, 2, 7, 2,
			10, 2, 10, 0, 12, 0, 12, 2, 10, 2, 7, 2, 7, 0, 5, 0}},
	} {
		if got := mergeRings(tc.rings); !slices.Equal(got, tc.want) {
			t.Errorf("%v:\n got %v\nwant %v", tc.rings, got, tc.want)
		}
	}
	// Read even-odd, the joined rings are the rings: a square with a
	// square hole, and an island in it.
	rings := [][]float64{{0, 0, 20, 0, 20, 20, 0, 20}, {5, 5, 15, 5, 15, 15, 5, 15}, {8, 8, 12, 8, 12, 12, 8, 12}}
	joined := shape.Rings([][]float64{mergeRings(rings)}, 24, 24)
	if d := shape.EvenOdd(joined, shape.Rings(rings, 24, 24)).Area(); d != 0 || joined.Area() != 400-100+16 {
		t.Errorf("joined rings cover %d pixels, %d apart from the rings'", joined.Area(), d)
	}
}

// TestYOLOPoseRoundTrip: YOLO Pose read back by the reader gives the person's
// keypoints with their names (data.yaml's kpt_names) and visibilities, the
// other boxes as boxes; exported again, the same. data.yaml says
// kpt_shape [4, 3] (the four names seen) and, the label declaring flip
// pairs, flip_idx.
func TestYOLOPoseRoundTrip(t *testing.T) {
	frames := withMedia(t, withShapes(fixtureFrames()))
	got := roundTrip(t, ExportYOLOPose, YOLO, fixtureDataset, frames, 2e-6)
	kp := got[mediaFile(&frames[0])].Boxes[1]
	names := []string{}
	for _, k := range kp.Keypoints {
		names = append(names, fmt.Sprint(k.Name, k.V))
	}
	if kp.Type != shape.Keypoints || strings.Join(names, " ") != "nose2 left_eye1 right_eye0 left_ankle2" {
		t.Errorf("keypoints read back as %+v", kp)
	}
	ds := fixtureDataset
	ds.Skeletons = func(_ context.Context, l string) (*shape.Skeleton, error) {
		if l == "person" {
			return &shape.Skeleton{Names: []string{"nose", "left_eye", "right_eye", "left_ankle"}, Flip: [][2]string{{"left_eye", "right_eye"}}}, nil
		}
		return nil, nil
	}
	zr, _ := export(t, ExportYOLOPose, ds, withShapes(fixtureFrames()), false)
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "data.yaml") {
			y := string(readEntry(t, f))
			if !strings.Contains(y, "kpt_shape: [4, 3]\nflip_idx: [0, 2, 1, 3]\n") {
				t.Errorf("data.yaml:\n%s", y)
			}
		}
	}
}

// TestYOLOPoseWithoutKeypoints: a version of boxes alone still exports as a
// pose set (kpt_shape [1, 3], every point 0 0 0) rather than failing after
// the download began; the reader reads the boxes back as boxes.
func TestYOLOPoseWithoutKeypoints(t *testing.T) {
	zr, _ := export(t, ExportYOLOPose, fixtureDataset, withMedia(t, fixtureFrames()), true)
	root := filepath.Join(extract(t, zr), rootFolder(fixtureDataset, ExportYOLOPose))
	y, err := os.ReadFile(filepath.Join(root, "data.yaml"))
	if err != nil || !strings.Contains(string(y), "kpt_shape: [1, 3]\n") {
		t.Fatalf("data.yaml %s: %v", y, err)
	}
	got, rep := readBack(t, root, YOLO)
	if len(rep.Problems) != 0 || len(got[mediaFile(&fixtureFrames()[0])].Boxes) != 2 || got[mediaFile(&fixtureFrames()[0])].Boxes[0].Type != "" {
		t.Errorf("read back %+v, problems %v", got, rep.Problems)
	}
}

// TestVOCMasksRoundTrip: Pascal VOC with its segmentation PNGs read back by
// the reader gives each segmented object its mask (the object PNG's pixels of
// its number) and the others their boxes; exported again, the same.
func TestVOCMasksRoundTrip(t *testing.T) {
	frames := withMedia(t, withShapes(fixtureFrames()))
	got := roundTrip(t, ExportVOC, VOC, fixtureDataset, frames, 1e-9)
	bs := got[mediaFile(&frames[3])].Boxes
	if len(bs) != 3 || bs[0].Type != shape.Mask || *bs[0].Mask != *frames[3].Boxes[0].Mask || bs[2].Type != shape.Mask {
		t.Errorf("fourth frame read back as %+v", bs)
	}
}

// cvatSource is a CVAT for images 1.1 file as CVAT writes one: every shape
// it has, attributes, a rotated occluded box, unnamed points and a skeleton.
const cvatSource = `<?xml version="1.0" encoding="utf-8"?>
<annotations>
  <version>1.1</version>
  <meta><task><labels>
    <label><name>car</name></label><label><name>person</name></label><label><name>lane</name></label>
  </labels></task></meta>
  <image id="0" name="a.jpg" width="40" height="30" subset="Train">
    <box label="car" source="manual" occluded="1" xtl="2.5" ytl="3" xbr="20" ybr="15.25" rotation="12.5" z_order="0">
      <attribute name="colour">blue</attribute>
      <attribute name="parked">true</attribute>
    </box>
    <polygon label="car" source="manual" occluded="0" points="1,1;10,1;10,8;1,8" z_order="0"></polygon>
    <polyline label="lane" source="manual" occluded="0" points="0,29;39.5,0.5" z_order="0"></polyline>
    <points label="person" source="manual" occluded="0" points="5,5;6.25,7" z_order="0"></points>
    <skeleton label="person" source="manual" z_order="0">
      <points label="head" source="manual" outside="0" occluded="0" points="20,5"></points>
      <points label="hand" source="manual" outside="0" occluded="1" points="22,12"></points>
      <points label="foot" source="manual" outside="1" occluded="0" points="0,0"></points>
      <attribute name="pose">walking</attribute>
    </skeleton>
    <mask label="car" source="manual" occluded="0" rle="2, 3, 1, 3, 3" left="30" top="20" width="3" height="4" z_order="0"></mask>
    <tag label="lane" source="manual"><attribute name="weather">rain</attribute></tag>
  </image>
</annotations>
`

// TestCVATImportExportImport: a file CVAT wrote, imported by the reader,
// exported as CVAT and imported again keeps every shape and attribute.
func TestCVATImportExportImport(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	fr := withMedia(t, []Frame{{Width: 40, Height: 30}})[0]
	rc, _ := fr.Open()
	img, _ := io.ReadAll(rc)
	if err := os.WriteFile(filepath.Join(dir, "images", "a.jpg"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "annotations.xml"), []byte(cvatSource), 0o644); err != nil {
		t.Fatal(err)
	}
	first, rep := readBack(t, dir, CVAT)
	if len(rep.Problems) != 0 || len(first["a.jpg"].Boxes) != 7 {
		t.Fatalf("source read as %+v, problems %v", first, rep.Problems)
	}
	ds := Dataset{Name: "c", Version: "1", Labels: []string{"car", "person", "lane"}}
	zr, _ := export(t, ExportCVAT, ds, framesOf(t, first, ds.Labels), true)
	second, rep := readBack(t, filepath.Join(extract(t, zr), rootFolder(ds, ExportCVAT)), CVAT)
	if len(rep.Problems) != 0 {
		t.Fatalf("export read back with problems %v", rep.Problems)
	}
	sameShapes(t, first, second, 0)
}
