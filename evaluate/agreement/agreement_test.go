package agreement

import (
	"math"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

func box(who, label string, x, y, w, h float64) Shape {
	return Shape{Annotator: who, Label: label, Box: shape.Rect{X: x, Y: y, W: w, H: h}}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Worked by hand: on frame 1 both drew the same car (IoU 1) and A a
// person B missed: pairs 1, shapes 3, F1 2/3. On frame 2 they drew cars
// 10 px apart on a 20 px box (IoU 10·20/(2·400-200) = 1/3: no pair) and
// nothing else: F1 0. Frame 3: neither drew anything: F1 1. Pooled: pairs
// 1, shapes 5: F1 0.4; cars: pairs 1 of shapes 4 (0.5); persons 0 of 1.
func TestMeasureHandWorked(t *testing.T) {
	frames := []Frame{
		{Key: "1", Annotators: []string{"a", "b"}, Shapes: []Shape{
			box("a", "car", 0, 0, 20, 20), box("b", "car", 0, 0, 20, 20), box("a", "person", 50, 50, 10, 30)}},
		{Key: "2", Annotators: []string{"a", "b"}, Shapes: []Shape{box("a", "car", 0, 0, 20, 20), box("b", "car", 10, 0, 20, 20)}},
		{Key: "3", Annotators: []string{"a", "b"}},
	}
	r, err := Measure(frames, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{2.0 / 3, 0, 1}
	for i, f := range r.Frames {
		if !near(f.F1, want[i], 1e-12) {
			t.Errorf("frame %s: F1 %v, want %v", f.Key, f.F1, want[i])
		}
	}
	if !near(r.F1, 0.4, 1e-12) || !near(r.ByLabel["car"], 0.5, 1e-12) || r.ByLabel["person"] != 0 {
		t.Errorf("pooled: %v %v", r.F1, r.ByLabel)
	}
	if strings.Join(r.Review, ",") != "1,2" {
		t.Errorf("review: %v (frames under 0.8)", r.Review)
	}
	if _, err := Measure([]Frame{{Key: "x", Annotators: []string{"a"}}}, Options{}); err == nil {
		t.Error("one annotator is no agreement")
	}
}

// Cohen's kappa on Wikipedia's example: 50 proposals, both yes 20, A yes B
// no 5, A no B yes 10, both no 15: p_o 0.7, p_e 0.5, kappa 0.4.
func TestCohenKappa(t *testing.T) {
	var a, b []string
	add := func(n int, x, y string) {
		for range n {
			a, b = append(a, x), append(b, y)
		}
	}
	add(20, "yes", "yes")
	add(5, "yes", "no")
	add(10, "no", "yes")
	add(15, "no", "no")
	if k := Cohen(a, b); !near(k, 0.4, 1e-12) {
		t.Errorf("kappa %v, want 0.4", k)
	}
}

// Fleiss' kappa on Wikipedia's example: 10 items, 14 raters, 5
// categories: P̄ 0.37802, P̄e 0.21342, kappa 0.20993.
func TestFleissKappa(t *testing.T) {
	table := [][5]int{{0, 0, 0, 0, 14}, {0, 2, 6, 4, 2}, {0, 0, 3, 5, 6}, {0, 3, 9, 2, 0}, {2, 2, 8, 1, 1},
		{7, 7, 0, 0, 0}, {3, 2, 6, 3, 0}, {2, 5, 3, 2, 2}, {6, 5, 2, 1, 0}, {0, 2, 2, 3, 7}}
	var rows [][]string
	for _, t := range table {
		var r []string
		for c, n := range t {
			for range n {
				r = append(r, string(rune('1'+c)))
			}
		}
		rows = append(rows, r)
	}
	if k := Fleiss(rows); !near(k, 0.20993, 5e-6) {
		t.Errorf("kappa %v, want 0.20993", k)
	}
}

// Frame classes: the same two raters give Cohen's kappa; raters that change
// from frame to frame give Fleiss'.
func TestKappaKind(t *testing.T) {
	f := func(key string, who []string, classes ...string) Frame {
		c := map[string]string{}
		for i, w := range who {
			c[w] = classes[i]
		}
		return Frame{Key: key, Annotators: who, Classes: c}
	}
	r, _ := Measure([]Frame{f("1", []string{"a", "b"}, "day", "day"), f("2", []string{"b", "a"}, "night", "day")}, Options{})
	if r.Kappa == nil || r.Kappa.Kind != "cohen" || r.Kappa.Frames != 2 {
		t.Errorf("same two raters: %+v", r.Kappa)
	}
	r, _ = Measure([]Frame{f("1", []string{"a", "b"}, "day", "day"), f("2", []string{"c", "d"}, "night", "night"),
		f("3", []string{"a", "c", "d"}, "day", "day", "day")}, Options{})
	if r.Kappa == nil || r.Kappa.Kind != "fleiss" || r.Kappa.Frames != 2 || r.Kappa.Skipped != 1 || !near(r.Kappa.Value, 1, 1e-12) {
		t.Errorf("changing raters: %+v", r.Kappa)
	}
}

// Consensus of three: the car two of three drew stays (their mean box), the
// person only one drew goes; for masks, the pixels two of three painted.
func TestConsensus(t *testing.T) {
	frame := Frame{Key: "1", Annotators: []string{"a", "b", "c"}, Shapes: []Shape{
		box("a", "car", 0, 0, 20, 20), box("b", "car", 2, 0, 20, 20), box("c", "person", 50, 50, 10, 10)},
		Classes: map[string]string{"a": "day", "b": "day", "c": "night"}}
	out, class, err := Consensus(frame, Options{})
	if err != nil || len(out) != 1 || out[0].Label != "car" || out[0].Box != (shape.Rect{X: 1, Y: 0, W: 20, H: 20}) || class != "day" {
		t.Fatalf("consensus: %+v %q %v", out, class, err)
	}
	m := func(who string, x0 int) Shape {
		bits := make([]byte, 10*10)
		for x := x0; x < x0+4; x++ {
			for y := 2; y < 6; y++ {
				bits[x*10+y] = 1
			}
		}
		r := shape.Encode(bits, 10, 10)
		return Shape{Annotator: who, Label: "cell", Mask: &r, Box: r.Bounds()}
	}
	out, _, _ = Consensus(Frame{Key: "2", Annotators: []string{"a", "b", "c"}, Shapes: []Shape{m("a", 2), m("b", 3), m("c", 3)}}, Options{})
	if len(out) != 1 || out[0].Mask == nil || out[0].Mask.Area() != 16 || out[0].Box.X != 3 {
		t.Errorf("mask consensus: %+v", out)
	}
}

// BenchmarkAgreement10k is issue 35's "agreement over 10,000 doubly
// labelled frames: < 10 s": two annotators, 8 boxes each of 3 labels a
// frame, slightly apart.
func BenchmarkAgreement10k(b *testing.B) {
	var frames []Frame
	for i := range 10000 {
		f := Frame{Key: string(rune(i)), Annotators: []string{"a", "b"}}
		for j := range 8 {
			x := float64(j * 30)
			label := []string{"car", "person", "bike"}[j%3]
			f.Shapes = append(f.Shapes, box("a", label, x, 10, 25, 25), box("b", label, x+float64(i%5), 12, 25, 25))
		}
		frames = append(frames, f)
	}
	for b.Loop() {
		if _, err := Measure(frames, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
