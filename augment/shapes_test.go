package augment

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"reflect"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// rectMask is a w x h mask with pixel columns x0..x1-1 and rows y0..y1-1 set.
func rectMask(w, h, x0, y0, x1, y1 int) *shape.EncodedMask {
	bits := make([]byte, w*h)
	for x := x0; x < x1; x++ {
		for y := y0; y < y1; y++ {
			bits[x*h+y] = 1
		}
	}
	r := shape.Encode(bits, h, w)
	return &shape.EncodedMask{Size: [2]int{h, w}, Counts: r.String()}
}

func kp(name string, x, y float64, v int) shape.Keypoint {
	return shape.Keypoint{Name: name, X: x, Y: y, V: v}
}

// testShapes on a 100 x 60 image: a triangle, an L-shaped line, four COCO
// face points and a 20 x 20 square mask.
func testShapes() []Box {
	return []Box{
		{Label: "tri", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{10, 10, 40, 10, 10, 30}}}},
		{Label: "line", Geometry: shape.Geometry{Type: shape.Polyline, Points: []float64{5, 50, 50, 50, 50, 20}}},
		{Label: "face", Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{
			kp("left_eye", 20, 20, 2), kp("right_eye", 30, 20, 2), kp("nose", 25, 25, 1), kp("left_ear", 12, 20, 2)}}},
		{Label: "blob", Geometry: shape.Geometry{Type: shape.Mask, Mask: rectMask(100, 60, 60, 10, 80, 30)}},
	}
}

// TestShapesFollowSteps moves each kind of shape through each geometric
// step and compares it with coordinates worked out by hand (rotation and
// shear by the turn's and the shear's own formulas), the boxes with the
// moved shapes' bounds, keypoint names with the flip pairs.
func TestShapesFollowSteps(t *testing.T) {
	img := scenePNG(t, 100, 60, nil)
	st := func(typ, prop string, v float64) []Step { return []Step{{Type: typ, Property: prop, Value: v}} }
	s, c := math.Sincos(30 * math.Pi / 180)
	rot := func(x, y float64) (float64, float64) { // 30° counter-clockwise about (50, 30)
		return c*(x-50) + s*(y-30) + 50, -s*(x-50) + c*(y-30) + 30
	}
	tan := math.Tan(10 * math.Pi / 180)
	shearH := func(x, y float64) (float64, float64) { return x + tan*(y-30), y }
	through := func(f func(x, y float64) (float64, float64), xy ...float64) []float64 {
		out := make([]float64, len(xy))
		for i := 0; i < len(xy); i += 2 {
			out[i], out[i+1] = f(xy[i], xy[i+1])
		}
		return out
	}
	type want struct {
		w, h     int
		poly     []float64
		line     []float64
		kps      []shape.Keypoint
		mask     *shape.EncodedMask
		maskSkip bool // warped masks are checked against pixels (TestMasksFollowPixels)
	}
	cases := []struct {
		name  string
		steps []Step
		want  want
	}{
		{"flip horizontal", st(FlipImage, FlipHorizontal, 0), want{100, 60,
			[]float64{90, 10, 60, 10, 90, 30}, []float64{95, 50, 50, 50, 50, 20},
			[]shape.Keypoint{kp("right_eye", 80, 20, 2), kp("left_eye", 70, 20, 2), kp("nose", 75, 25, 1), kp("right_ear", 88, 20, 2)},
			rectMask(100, 60, 20, 10, 40, 30), false}},
		{"flip vertical keeps names", st(FlipImage, FlipVertical, 0), want{100, 60,
			[]float64{10, 50, 40, 50, 10, 30}, []float64{5, 10, 50, 10, 50, 40},
			[]shape.Keypoint{kp("left_eye", 20, 40, 2), kp("right_eye", 30, 40, 2), kp("nose", 25, 35, 1), kp("left_ear", 12, 40, 2)},
			rectMask(100, 60, 60, 30, 80, 50), false}},
		{"clockwise", st(NinetyRotation, Clockwise, 0), want{60, 100, // (x, y) -> (60-y, x)
			[]float64{50, 10, 50, 40, 30, 10}, []float64{10, 5, 10, 50, 40, 50},
			[]shape.Keypoint{kp("left_eye", 40, 20, 2), kp("right_eye", 40, 30, 2), kp("nose", 35, 25, 1), kp("left_ear", 40, 12, 2)},
			rectMask(60, 100, 30, 60, 50, 80), false}},
		{"counter-clockwise", st(NinetyRotation, CounterClockwise, 0), want{60, 100, // (x, y) -> (y, 100-x)
			[]float64{10, 90, 10, 60, 30, 90}, []float64{50, 95, 50, 50, 20, 50},
			[]shape.Keypoint{kp("left_eye", 20, 80, 2), kp("right_eye", 20, 70, 2), kp("nose", 25, 75, 1), kp("left_ear", 20, 88, 2)},
			rectMask(60, 100, 10, 20, 30, 40), false}},
		{"upside down keeps names", st(NinetyRotation, UpsideDown, 0), want{100, 60,
			[]float64{90, 50, 60, 50, 90, 30}, []float64{95, 10, 50, 10, 50, 40},
			[]shape.Keypoint{kp("left_eye", 80, 40, 2), kp("right_eye", 70, 40, 2), kp("nose", 75, 35, 1), kp("left_ear", 88, 40, 2)},
			rectMask(100, 60, 20, 30, 40, 50), false}},
		// A window of 60 x 36 at (20, 12): the triangle and the line are cut
		// at its edges, the left ear leaves it (v 0), the mask loses 2 rows.
		{"crop", []Step{{Type: Crop, Property: CropPercentage, Value: 40, X: 0.5, Y: 0.5}}, want{60, 36,
			[]float64{0, 0, 17, 0, 0, 34.0 / 3}, []float64{30, 36, 30, 8},
			[]shape.Keypoint{kp("left_eye", 0, 8, 2), kp("right_eye", 10, 8, 2), kp("nose", 5, 13, 1), kp("left_ear", 0, 0, 0)},
			rectMask(60, 36, 40, 0, 60, 18), false}},
		{"rotate 30", st(ImageRotation, PercentageScale, 30), want{100, 60,
			through(rot, 10, 10, 40, 10, 10, 30), append(cutAtBottom(rot, 60), through(rot, 50, 50, 50, 20)...),
			[]shape.Keypoint{kpAt(rot, "left_eye", 20, 20, 2), kpAt(rot, "right_eye", 30, 20, 2), kpAt(rot, "nose", 25, 25, 1), kpAt(rot, "left_ear", 12, 20, 2)},
			nil, true}},
		{"shear horizontal 10", st(Shear, ShearHorizontal, 10), want{100, 60,
			through(shearH, 10, 10, 40, 10, 10, 30), through(shearH, 5, 50, 50, 50, 50, 20),
			[]shape.Keypoint{kpAt(shearH, "left_eye", 20, 20, 2), kpAt(shearH, "right_eye", 30, 20, 2), kpAt(shearH, "nose", 25, 25, 1), kpAt(shearH, "left_ear", 12, 20, 2)},
			nil, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := testShapes()
			out, err := ApplySteps(t.Context(), img, in, tc.steps, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if out.Width != tc.want.w || out.Height != tc.want.h {
				t.Fatalf("output %dx%d, want %dx%d", out.Width, out.Height, tc.want.w, tc.want.h)
			}
			if len(out.Boxes) != 4 {
				t.Fatalf("kept %d shapes, want 4: %+v", len(out.Boxes), out.Boxes)
			}
			tri, line, face, blob := out.Boxes[0], out.Boxes[1], out.Boxes[2], out.Boxes[3]
			if len(tri.Polygon) != 1 || !closeFlat(tri.Polygon[0], tc.want.poly) {
				t.Errorf("polygon %v, want %v", tri.Polygon, tc.want.poly)
			}
			if !closeFlat(line.Points, tc.want.line) {
				t.Errorf("polyline %v, want %v", line.Points, tc.want.line)
			}
			if !closeKeypoints(face.Keypoints, tc.want.kps) {
				t.Errorf("keypoints %v, want %v", face.Keypoints, tc.want.kps)
			}
			if !tc.want.maskSkip && !reflect.DeepEqual(blob.Mask, tc.want.mask) {
				t.Errorf("mask %+v, want %+v", blob.Mask, tc.want.mask)
			}
			for _, b := range out.Boxes {
				bb := b.Geometry.Bounds()
				if (shape.Rect{X: b.X, Y: b.Y, W: b.W, H: b.H}) != bb || b.Area == nil && b.Type != shape.Polyline {
					t.Errorf("%s: box %s, area %v; the moved shape's bounds are %+v", b.Label, showBox(b), b.Area, bb)
				}
			}
			if !tc.want.maskSkip { // the same on a JPEG's planes (planar)
				var jb bytes.Buffer
				if err := jpeg.Encode(&jb, scene(100, 60, nil), nil); err != nil {
					t.Fatal(err)
				}
				if _, ok := planar(jb.Bytes(), tc.steps, Options{}); !ok {
					t.Fatal("the JPEG chain is not planar")
				}
				jo, err := ApplySteps(t.Context(), jb.Bytes(), testShapes(), tc.steps, Options{})
				if err != nil || !reflect.DeepEqual(jo.Boxes, out.Boxes) {
					t.Errorf("on a JPEG's planes: %+v %v", jo.Boxes, err)
				}
			}
			if in[0].Polygon[0][0] != 10 || in[3].Mask.Counts != rectMask(100, 60, 60, 10, 80, 30).Counts {
				t.Errorf("the caller's shapes were changed: %v", in[0].Polygon)
			}
		})
	}
}

// cutAtBottom is where the line's first segment, turned by rot, crosses the
// image's bottom edge y = h: its first point turns to below the image.
func cutAtBottom(rot func(x, y float64) (float64, float64), h float64) []float64 {
	ax, ay := rot(5, 50)
	bx, by := rot(50, 50)
	t := (ay - h) / (ay - by)
	return []float64{ax + t*(bx-ax), h}
}

func kpAt(f func(x, y float64) (float64, float64), name string, x, y float64, v int) shape.Keypoint {
	x, y = f(x, y)
	return kp(name, x, y, v)
}

func closeFlat(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func closeKeypoints(a, b []shape.Keypoint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].V != b[i].V || math.Abs(a[i].X-b[i].X) > 1e-9 || math.Abs(a[i].Y-b[i].Y) > 1e-9 {
			return false
		}
	}
	return true
}

// TestKeypointNames: a horizontal flip swaps the declared flip pairs of the
// label (Options.Skeletons), COCO's person's for COCO's names when nothing
// is declared, and no name of an undeclared label with other names.
func TestKeypointNames(t *testing.T) {
	img := scenePNG(t, 100, 60, nil)
	hand := &shape.Skeleton{Names: []string{"thumb_l", "thumb_r", "palm"}, Flip: [][2]string{{"thumb_l", "thumb_r"}}}
	boxes := []Box{
		{Label: "hand", Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{kp("thumb_l", 10, 10, 2), kp("thumb_r", 20, 10, 2), kp("palm", 15, 15, 2)}}},
		{Label: "paw", Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{kp("thumb_l", 10, 10, 2), kp("palm", 15, 15, 2)}}},
		{Label: "person", Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{kp("left_wrist", 10, 10, 2), kp("nose", 15, 15, 2)}}},
	}
	out, err := ApplySteps(t.Context(), img, boxes, []Step{{Type: FlipImage, Property: FlipHorizontal}},
		Options{Skeletons: map[string]*shape.Skeleton{"hand": hand}})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, b := range out.Boxes {
		var names []string
		for _, k := range b.Keypoints {
			names = append(names, k.Name)
		}
		got = append(got, names)
	}
	want := [][]string{{"thumb_r", "thumb_l", "palm"}, {"thumb_l", "palm"}, {"right_wrist", "nose"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("names after a flip %v, want %v", got, want)
	}
}

// TestShapesDropped: a shape the crop leaves nothing of is dropped, as a
// box is, and so is one cut below the visible fraction; a mask of another
// size than the image is refused, naming it.
func TestShapesDropped(t *testing.T) {
	img := scenePNG(t, 100, 60, nil)
	boxes := []Box{
		{Label: "gone", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{0, 0, 10, 0, 0, 10}}}},
		{Label: "sliver", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{0, 20, 21, 20, 21, 40, 0, 40}}}},
		{Label: "kept", Geometry: shape.Geometry{Type: shape.Polyline, Points: []float64{40, 30, 60, 30}}},
		{Label: "mask gone", Geometry: shape.Geometry{Type: shape.Mask, Mask: rectMask(100, 60, 0, 0, 5, 5)}},
	}
	// A window of 60 x 36 at (20, 12): the sliver keeps 1/20 of its area.
	crop := []Step{{Type: Crop, Property: CropPercentage, Value: 40, X: 0.5, Y: 0.5}}
	out, err := ApplySteps(t.Context(), img, boxes, crop, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Boxes) != 1 || out.Boxes[0].Label != "kept" {
		t.Errorf("kept %+v, want the line alone", out.Boxes)
	}
	bad := []Box{{Label: "m", Geometry: shape.Geometry{Type: shape.Mask, Mask: rectMask(50, 60, 0, 0, 5, 5)}}}
	if _, err := ApplySteps(t.Context(), img, bad, crop, Options{}); err == nil {
		t.Error("a 50 x 60 mask on a 100 x 60 image was taken")
	}
}

// TestMasksFollowPixels paints a mask white on black, sends the picture
// through the same steps as the mask, and compares the mask out with the
// picture's white: the same pixels for flips, turns and crops, IoU of at
// least 0.99 where the image is resampled (rotation, shear).
func TestMasksFollowPixels(t *testing.T) {
	const w, h = 320, 240
	// An ellipse with a hole: edges in every direction.
	bits := make([]byte, w*h)
	pic := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			dx, dy := (float64(x)+0.5-150)/110, (float64(y)+0.5-125)/80
			r := dx*dx + dy*dy
			if r <= 1 && r > 0.15 {
				bits[x*h+y] = 1
				pic.SetNRGBA(x, y, color.NRGBA{255, 255, 255, 255})
			} else {
				pic.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 255})
			}
		}
	}
	r := shape.Encode(bits, h, w)
	mask := &shape.EncodedMask{Size: [2]int{h, w}, Counts: r.String()}
	img := encodePNG(t, pic)
	step := func(typ, prop string, v float64) Step { return Step{Type: typ, Property: prop, Value: v} }
	cases := []struct {
		name  string
		steps []Step
		exact bool
	}{
		{"flip horizontal", []Step{step(FlipImage, FlipHorizontal, 0)}, true},
		{"flip vertical", []Step{step(FlipImage, FlipVertical, 0)}, true},
		{"clockwise", []Step{step(NinetyRotation, Clockwise, 0)}, true},
		{"counter-clockwise", []Step{step(NinetyRotation, CounterClockwise, 0)}, true},
		{"upside down", []Step{step(NinetyRotation, UpsideDown, 0)}, true},
		{"crop", []Step{{Type: Crop, Property: CropPercentage, Value: 35, X: 0.3, Y: 0.8}}, true},
		{"flips, turn, crop", []Step{step(FlipImage, FlipHorizontal, 0), step(NinetyRotation, Clockwise, 0),
			{Type: Crop, Property: CropPercentage, Value: 20, X: 1, Y: 0}, step(FlipImage, FlipVertical, 0)}, true},
		{"rotate 23", []Step{step(ImageRotation, PercentageScale, 23)}, false},
		{"rotate -71", []Step{step(ImageRotation, PercentageScale, -71)}, false},
		{"shear horizontal 15", []Step{step(Shear, ShearHorizontal, 15)}, false},
		{"shear vertical -20", []Step{step(Shear, ShearVertical, -20)}, false},
		{"turn, rotate, crop", []Step{step(NinetyRotation, CounterClockwise, 0), step(ImageRotation, PercentageScale, 12),
			{Type: Crop, Property: CropPercentage, Value: 10, X: 0.5, Y: 0.5}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := ApplySteps(t.Context(), img, []Box{{Label: "m", Geometry: shape.Geometry{Type: shape.Mask, Mask: mask}}}, c.steps, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Boxes) != 1 {
				t.Fatalf("the mask was dropped")
			}
			got, err := out.Boxes[0].Mask.RLE()
			if err != nil {
				t.Fatal(err)
			}
			px := decodeNRGBA(t, out.Image)
			pb := make([]byte, out.Width*out.Height)
			for x := range out.Width {
				for y := range out.Height {
					if px.NRGBAAt(x, y).R > 127 {
						pb[x*out.Height+y] = 1
					}
				}
			}
			want := shape.Encode(pb, out.Height, out.Width)
			iou := shape.IoU(got, want, false)
			if c.exact && !reflect.DeepEqual(got, want) || iou < 0.99 {
				t.Errorf("mask against the picture's white: IoU %.4f (areas %d and %d)", iou, got.Area(), want.Area())
			}
			if b := got.Bounds(); (shape.Rect{X: out.Boxes[0].X, Y: out.Boxes[0].Y, W: out.Boxes[0].W, H: out.Boxes[0].H}) != b {
				t.Errorf("box %s, the mask's is %+v", showBox(out.Boxes[0]), b)
			}
		})
	}
}
