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

// Kappa per class, one against the rest, worked by hand (docs/team.md
// "Agreement between annotators"):
//
//   - Cohen, a and b on 10 frames: (day,day) ×3, (day,night), (night,night)
//     ×3, (night,day), (dusk,dusk), (dusk,night). "day": a says day on 4,
//     b on 4, both on 3, neither on 5: p_o 0.8, p_e 0.4·0.4+0.6·0.6 = 0.52,
//     kappa 0.28/0.48 = 7/12. "night": a 4, b 5, both 3, neither 4: p_o 0.7,
//     p_e 0.2+0.3 = 0.5, kappa 0.4. "dusk": a 2, b 1, both 1, neither 8:
//     p_o 0.9, p_e 0.02+0.72 = 0.74, kappa 0.16/0.26 = 8/13. Overall: p_o
//     0.7, p_e 0.16+0.2+0.02 = 0.38, kappa 0.32/0.62 = 16/31.
//   - Fleiss, three raters who change: (day,day,day), (day,day,night),
//     (night,night,night), (day,night,night). "day": P_i 1, 1/3, 1, 1/3,
//     P̄ 2/3; 6 of 12 ratings day, P̄e 0.5; kappa (2/3-1/2)/(1/2) = 1/3;
//     "night" the same, and so the overall kappa (two classes).
//   - A class nobody else gave (c alone says "fog" once, 4 frames): "fog"
//     p_o 3/4 with b never saying it: p_e 3/4, kappa 0.
func TestKappaByLabel(t *testing.T) {
	frame := func(key string, who []string, classes ...string) Frame {
		c := map[string]string{}
		for i, w := range who {
			c[w] = classes[i]
		}
		return Frame{Key: key, Annotators: who, Classes: c}
	}
	pairs := func(who []string, rows ...[]string) []Frame {
		var out []Frame
		for i, r := range rows {
			out = append(out, frame(string(rune('a'+i)), who, r...))
		}
		return out
	}
	ab := []string{"a", "b"}
	dd, dn, nn, nd := []string{"day", "day"}, []string{"day", "night"}, []string{"night", "night"}, []string{"night", "day"}
	for _, c := range []struct {
		name    string
		frames  []Frame
		kind    string
		overall float64
		byLabel map[string]float64
	}{
		{"cohen", pairs(ab, dd, dd, dd, dn, nn, nn, nn, nd, []string{"dusk", "dusk"}, []string{"dusk", "night"}),
			"cohen", 16.0 / 31, map[string]float64{"day": 7.0 / 12, "night": 0.4, "dusk": 8.0 / 13}},
		{"fleiss", []Frame{frame("1", []string{"a", "b", "c"}, "day", "day", "day"),
			frame("2", []string{"b", "c", "d"}, "day", "day", "night"),
			frame("3", []string{"a", "c", "d"}, "night", "night", "night"),
			frame("4", []string{"a", "b", "d"}, "day", "night", "night")},
			"fleiss", 1.0 / 3, map[string]float64{"day": 1.0 / 3, "night": 1.0 / 3}},
		{"a class one rater gave", pairs([]string{"b", "c"}, dd, dd, dd, []string{"day", "fog"}),
			"cohen", 0, map[string]float64{"day": 0, "fog": 0}},
	} {
		r, err := Measure(c.frames, Options{})
		if err != nil || r.Kappa == nil {
			t.Fatalf("%s: %+v %v", c.name, r.Kappa, err)
		}
		if r.Kappa.Kind != c.kind || !near(r.Kappa.Value, c.overall, 1e-12) || len(r.Kappa.ByLabel) != len(c.byLabel) {
			t.Errorf("%s: %+v, want %s %v by label %v", c.name, r.Kappa, c.kind, c.overall, c.byLabel)
		}
		for label, want := range c.byLabel {
			if got, ok := r.Kappa.ByLabel[label]; !ok || !near(got, want, 1e-12) {
				t.Errorf("%s: kappa of %s %v, want %v", c.name, label, got, want)
			}
		}
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
