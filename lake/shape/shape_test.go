package shape

import (
	"math"
	"slices"
	"testing"
)

// Each case is worked by hand from pycocotools' published algorithm: a
// pixel (column x, row y) covers [x, x+1)×[y, y+1) and is set when its
// centre (x+.5, y+.5) is inside the outline, a centre on the right or lower
// edge counting as outside; counts run down each column, then across.
func TestFromRing(t *testing.T) {
	cases := []struct {
		name   string
		h, w   int
		xy     []float64
		counts []uint32
		str    string
		box    Rect
		area   int
	}{
		// Columns 1..4, rows 1..4: 11 zeros (column 0 and row 0 of column
		// 1), then 4 set and 6 clear (rows 5..9, row 0) three times, then 4
		// set and the 55 positions left.
		{"square", 10, 10, []float64{1, 1, 1, 5, 5, 5, 5, 1},
			[]uint32{11, 4, 6, 4, 6, 4, 6, 4, 55}, ";4600000a1", Rect{1, 1, 4, 4}, 16},
		// Edges at .5: centres 1.5 and 2.5 are in, 0.5 (on the edge) is out.
		{"half pixel", 4, 4, []float64{.5, .5, .5, 2.5, 2.5, 2.5, 2.5, .5},
			[]uint32{5, 2, 2, 2, 5}, "52203", Rect{1, 1, 2, 2}, 4},
		// Edges at .4 and 2.6 take centres 0.5, 1.5 and 2.5: a 3×3 block
		// from the first position, so the first count is an empty run.
		{"first pixel set", 4, 4, []float64{.4, .4, .4, 2.6, 2.6, 2.6, 2.6, .4},
			[]uint32{0, 3, 1, 3, 1, 3, 5}, "0310004", Rect{0, 0, 3, 3}, 9},
		// x+y < 4: column centre 0.5 takes rows with y+.5 < 3.5 (3 rows),
		// 1.5 two, 2.5 one, 3.5 none (0.5 lies on the edge).
		{"triangle", 5, 5, []float64{0, 0, 4, 0, 0, 4},
			[]uint32{0, 3, 2, 2, 3, 1, 14}, "032O1O;", Rect{0, 0, 3, 3}, 6},
		// The whole image: one empty run of zeros, 16 set. 16 needs two
		// characters: 16 has bit 0x10 set, so a 0 group follows.
		{"whole image", 4, 4, []float64{0, 0, 0, 4, 4, 4, 4, 0},
			[]uint32{0, 16}, "0`0", Rect{0, 0, 4, 4}, 16},
		// Past the edges: clipped to column 0, every row.
		{"outside the image", 4, 6, []float64{-2, -2, -2, 10, 1, 10, 1, -2},
			[]uint32{0, 4, 20}, "04d0", Rect{0, 0, 1, 4}, 4},
		// A repeated vertex changes nothing.
		{"repeated vertex", 10, 10, []float64{1, 1, 1, 1, 1, 5, 5, 5, 5, 1},
			[]uint32{11, 4, 6, 4, 6, 4, 6, 4, 55}, ";4600000a1", Rect{1, 1, 4, 4}, 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := FromRing(c.xy, c.h, c.w)
			if !slices.Equal(m.Counts, c.counts) {
				t.Fatalf("counts %v, want %v", m.Counts, c.counts)
			}
			if s := m.String(); s != c.str {
				t.Errorf("string %q, want %q", s, c.str)
			}
			if b := m.Bounds(); b != c.box {
				t.Errorf("bounds %v, want %v", b, c.box)
			}
			if a := m.Area(); a != c.area {
				t.Errorf("area %d, want %d", a, c.area)
			}
			back, err := ParseString(c.str, c.h, c.w)
			if err != nil || !slices.Equal(back.Counts, c.counts) {
				t.Errorf("ParseString(%q) = %v, %v", c.str, back.Counts, err)
			}
			if e := Encode(m.Decode(), c.h, c.w); !slices.Equal(e.Counts, c.counts) {
				t.Errorf("Encode(Decode()) = %v", e.Counts)
			}
		})
	}
}

func TestStringLargeCounts(t *testing.T) {
	// Differences from the count two before can be negative and large: a
	// 4K frame's first run of zeros, then short runs.
	r := RLE{Height: 2160, Width: 3840, Counts: []uint32{8_000_000, 3, 100_000, 1, 2160*3840 - 8_100_004}}
	back, err := ParseString(r.String(), r.Height, r.Width)
	if err != nil || !slices.Equal(back.Counts, r.Counts) {
		t.Fatalf("round trip: %v, %v", back.Counts, err)
	}
}

func TestParseStringRefuses(t *testing.T) {
	for _, c := range []struct{ name, s string }{
		{"short sum", "52202"},         // 5+2+2+2+2 = 13 of 16
		{"long sum", "52209"},          // 20 of 16
		{"not COCO", "5 2"},            // a space is below '0'
		{"ends inside a number", "5`"}, // 0x20 set on the last character
	} {
		if _, err := ParseString(c.s, 4, 4); err == nil {
			t.Errorf("%s: %q parsed", c.name, c.s)
		}
	}
}

func TestMerges(t *testing.T) {
	outer := FromRing([]float64{0, 0, 0, 4, 4, 4, 4, 0}, 4, 4) // all 16
	inner := FromRing([]float64{1, 1, 1, 3, 3, 3, 3, 1}, 4, 4) // columns 1-2, rows 1-2
	if got := Rings([][]float64{{0, 0, 0, 4, 4, 4, 4, 0}, {1, 1, 1, 3, 3, 3, 3, 1}}, 4, 4); got.Area() != 12 ||
		!slices.Equal(got.Counts, []uint32{0, 5, 2, 2, 2, 5}) {
		t.Errorf("even-odd: a ring inside a ring is a hole of 4 pixels: %v", got.Counts)
	}
	if got := RingsUnion([][]float64{{0, 0, 0, 4, 4, 4, 4, 0}, {1, 1, 1, 3, 3, 3, 3, 1}}, 4, 4); got.Area() != 16 {
		t.Errorf("union reads the inner ring as part of the outer: %v", got.Counts)
	}
	if got := Intersection(outer, inner); !slices.Equal(got.Counts, inner.Counts) {
		t.Errorf("intersection %v, want %v", got.Counts, inner.Counts)
	}
	if !RingsOverlap([][]float64{{0, 0, 0, 4, 4, 4, 4, 0}, {1, 1, 1, 3, 3, 3, 3, 1}}, 4, 4) {
		t.Error("nested rings overlap")
	}
	if RingsOverlap([][]float64{{0, 0, 0, 4, 2, 4, 2, 0}, {2, 0, 2, 4, 4, 4, 4, 0}}, 4, 4) {
		t.Error("side-by-side halves share no pixel")
	}
}

func TestIoU(t *testing.T) {
	a := FromRing([]float64{1, 1, 1, 5, 5, 5, 5, 1}, 10, 10) // columns/rows 1-4: 16 pixels
	b := FromRing([]float64{2, 2, 2, 6, 6, 6, 6, 2}, 10, 10) // 2-5: 16 pixels; 3×3 = 9 shared
	far := FromRing([]float64{7, 7, 7, 9, 9, 9, 9, 7}, 10, 10)
	cases := []struct {
		name  string
		d, g  RLE
		crowd bool
		want  float64
	}{
		{"overlap", a, b, false, 9.0 / 23}, // 9 over 16+16-9
		{"crowd", a, b, true, 9.0 / 16},    // over the detection's 16
		{"apart", a, far, false, 0},        // boxes apart: no walk
		{"itself", a, a, false, 1},         //
		{"sizes differ", a, FromRing([]float64{1, 1, 1, 5, 5, 5, 5, 1}, 10, 11), false, -1},
	}
	for _, c := range cases {
		if got := IoU(c.d, c.g, c.crowd); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%s: IoU %v, want %v", c.name, got, c.want)
		}
	}
	// bbIou: boxes (0,0,2,2) and (1,1,2,2) share 1 of 7; crowd 1 of 4.
	if got := RectIoU(Rect{0, 0, 2, 2}, Rect{1, 1, 2, 2}, false); got != 1.0/7 {
		t.Errorf("RectIoU %v", got)
	}
	if got := RectIoU(Rect{0, 0, 2, 2}, Rect{1, 1, 2, 2}, true); got != 0.25 {
		t.Errorf("crowd RectIoU %v", got)
	}
}

func TestBoundsOfARunAcrossColumns(t *testing.T) {
	// Set from row 3 of column 0 to row 1 of column 1 (h = 4): rleToBbox
	// takes the whole height for a run that wraps.
	r := RLE{Height: 4, Width: 3, Counts: []uint32{3, 3, 6}}
	if b := r.Bounds(); b != (Rect{0, 0, 2, 4}) {
		t.Errorf("bounds %v", b)
	}
}
