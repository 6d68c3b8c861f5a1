package shape

import (
	"math"
	"math/rand"
	"reflect"
	"testing"
)

// maskOf builds a mask from rows of '#' (set) and '.'.
func maskOf(rows ...string) RLE {
	h, w := len(rows), len(rows[0])
	bits := make([]byte, h*w)
	for y, row := range rows {
		for x, c := range row {
			if c == '#' {
				bits[x*h+y] = 1
			}
		}
	}
	return Encode(bits, h, w)
}

func TestOutline(t *testing.T) {
	for _, tc := range []struct {
		name string
		mask RLE
		tol  float64
		want [][]float64
	}{
		{"one pixel", maskOf("...", ".#.", "..."), 0, [][]float64{{1, 1, 2, 1, 2, 2, 1, 2}}},
		{"rectangle", maskOf("....", ".##.", ".##.", ".##."), 0, [][]float64{{1, 1, 3, 1, 3, 4, 1, 4}}},
		{"at the frame's edge", maskOf("##", "##"), 0, [][]float64{{0, 0, 2, 0, 2, 2, 0, 2}}},
		{"L shape", maskOf("#.", "##"), 0, [][]float64{{0, 0, 1, 0, 1, 1, 2, 1, 2, 2, 0, 2}}},
		// Diagonal neighbours are one part (8-connected), pinched at the shared corner.
		{"diagonal pair", maskOf("#.", ".#"), 0, [][]float64{{0, 0, 1, 0, 1, 1, 2, 1, 2, 2, 1, 2, 1, 1, 0, 1}}},
		{"hole", maskOf("###", "#.#", "###"), 0, [][]float64{{0, 0, 3, 0, 3, 3, 0, 3}, {1, 1, 2, 1, 2, 2, 1, 2}}},
		{"two parts", maskOf("#.#"), 0, [][]float64{{0, 0, 1, 0, 1, 1, 0, 1}, {2, 0, 3, 0, 3, 1, 2, 1}}},
		{"empty", maskOf("...", "..."), 0, nil},
		// A staircase's corners all lie within 1 px of its diagonal: three vertices remain.
		{"staircase at tolerance 1", maskOf("#...", "##..", "###.", "####"), 1, [][]float64{{0, 0, 4, 4, 0, 4}}},
		// A one-pixel hole is dropped at a tolerance of a pixel; the outer square stays.
		{"small hole dropped", maskOf("###", "#.#", "###"), 1, [][]float64{{0, 0, 3, 0, 3, 3, 0, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Outline(tc.mask, tc.tol); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Outline = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOutlineRoundTrip: at tolerance 0 the rings, read even-odd as the lake
// reads polygons, are exactly the mask's pixels, whatever the mask (random
// blobs with holes, specks, parts touching the frame's edge).
func TestOutlineRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 300; n++ {
		h, w := 1+rng.Intn(24), 1+rng.Intn(24)
		bits := make([]byte, h*w)
		p := rng.Float64()
		for i := range bits {
			if rng.Float64() < p {
				bits[i] = 1
			}
		}
		m := Encode(bits, h, w)
		rings := Outline(m, 0)
		back := Rings(rings, h, w)
		if len(rings) == 0 && m.Area() == 0 {
			continue // Rings of nothing is an RLE without counts
		}
		if !reflect.DeepEqual(back.Decode(), m.Decode()) {
			t.Fatalf("case %d (%dx%d): rings %v give %v, want %v", n, h, w, rings, back.Counts, m.Counts)
		}
	}
}

// TestOutlineTolerance: a larger tolerance never adds vertices, and every
// simplified ring stays close to the mask (IoU over 0.9 on a disc).
func TestOutlineTolerance(t *testing.T) {
	const h, w = 200, 300
	ring := make([]float64, 0, 128)
	for i := 0; i < 64; i++ {
		a := float64(i) / 64 * 2 * 3.141592653589793
		ring = append(ring, 150+80*math.Cos(a), 100+70*math.Sin(a))
	}
	disc := FromRing(ring, h, w)
	prev := 1 << 30
	for _, tol := range []float64{0, 0.5, 1, 2, 4, 8} {
		rings := Outline(disc, tol)
		n := VertexCount(rings)
		if n > prev {
			t.Errorf("tolerance %g: %d vertices, more than %d at a smaller tolerance", tol, n, prev)
		}
		prev = n
		if iou := IoU(Rings(rings, h, w), disc, false); tol <= 2 && iou < 0.97 || iou < 0.9 {
			t.Errorf("tolerance %g: IoU %.3f with the disc", tol, iou)
		}
	}
	if prev > 40 {
		t.Errorf("tolerance 8 left %d vertices of a disc", prev)
	}
}
