package shape

import (
	"math"
	"slices"
	"testing"
)

func closeTo(a, b []float64) bool {
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

func TestBetweenBoxesAndHold(t *testing.T) {
	p := NewBetween(Geometry{}, Geometry{}, Rect{0, 0, 10, 10}, Rect{10, 20, 30, 10})
	if _, r := p.At(0.5); r != (Rect{5, 10, 20, 10}) {
		t.Errorf("box halfway = %+v", r)
	}
	m := Geometry{Type: Mask, Mask: &EncodedMask{Size: [2]int{2, 2}, Counts: "04"}}
	held := NewBetween(m, Geometry{Type: Mask}, Rect{0, 0, 2, 2}, Rect{1, 1, 1, 1})
	if g, r := held.At(0.9); g.Mask != m.Mask || r != (Rect{0, 0, 2, 2}) {
		t.Errorf("a mask holds its first keyframe until the second, got %+v %+v", g, r)
	}
	if _, r := held.At(1); r != (Rect{1, 1, 1, 1}) {
		t.Errorf("at 1 the second keyframe, got %+v", r)
	}
}

// A square moved by (10, 0), its second keyframe listed from another corner
// and the other way round, blends without twisting: halfway is the square
// moved by 5.
func TestBetweenPolygonMatchesVertices(t *testing.T) {
	a := Geometry{Type: Polygon, Polygon: [][]float64{{0, 0, 10, 0, 10, 10, 0, 10}}}
	b := Geometry{Type: Polygon, Polygon: [][]float64{{20, 10, 20, 0, 10, 0, 10, 10}}} // same square +10, reversed, rotated
	g, r := NewBetween(a, b, a.Bounds(), b.Bounds()).At(0.5)
	if want := []float64{5, 0, 15, 0, 15, 10, 5, 10}; !closeTo(g.Polygon[0], want) {
		t.Errorf("halfway ring = %v, want %v", g.Polygon[0], want)
	}
	if r != (Rect{5, 0, 10, 10}) {
		t.Errorf("box from the shape = %+v", r)
	}
}

// A triangle and a square: the triangle is resampled to 4 points along its
// outline (perimeter 30+30+42.43 split in 4), so both ends of the blend are
// the keyframes' outlines.
func TestBetweenPolygonResamples(t *testing.T) {
	tri := []float64{0, 0, 30, 0, 0, 30}
	sq := []float64{0, 0, 30, 0, 30, 30, 0, 30}
	ra, rb := matchRing(tri, sq)
	if len(ra) != 8 || len(rb) != 8 {
		t.Fatalf("resampled to %d and %d numbers, want 8", len(ra), len(rb))
	}
	per := 60 + 30*math.Sqrt2
	step := per / 4 // 25.6: the second point is on the bottom edge, the third on the hypotenuse
	if !closeTo(ra[:4], []float64{0, 0, step, 0}) {
		t.Errorf("resampled triangle starts %v", ra[:4])
	}
	if !slices.Equal(rb, sq) {
		t.Errorf("the square already has 4 points and keeps them in order, got %v", rb)
	}
}

func TestBetweenPolylineAndKeypoints(t *testing.T) {
	a := Geometry{Type: Polyline, Points: []float64{0, 0, 10, 0}}
	b := Geometry{Type: Polyline, Points: []float64{20, 10, 10, 10}} // drawn the other way
	g, _ := NewBetween(a, b, a.Bounds(), b.Bounds()).At(0.5)
	if !closeTo(g.Points, []float64{5, 5, 15, 5}) {
		t.Errorf("polyline halfway = %v", g.Points)
	}
	ka := Geometry{Type: Keypoints, Keypoints: []Keypoint{{"nose", 0, 0, 2}, {"tail", 5, 5, 2}, {"ear", 1, 1, 1}}}
	kb := Geometry{Type: Keypoints, Keypoints: []Keypoint{{"tail", 15, 5, 2}, {"nose", 10, 0, 1}, {"paw", 3, 3, 2}}}
	g, _ = NewBetween(ka, kb, ka.Bounds(), kb.Bounds()).At(0.5)
	want := []Keypoint{{"nose", 5, 0, 1}, {"tail", 10, 5, 2}, {"ear", 0, 0, 0}, {"paw", 0, 0, 0}}
	if !slices.Equal(g.Keypoints, want) {
		t.Errorf("keypoints halfway = %v, want %v", g.Keypoints, want)
	}
}

// BenchmarkBetweenFrame is issue 34's "interpolating every shape of one
// frame": 200 tracks of 30-vertex polygons, prepared once per keyframe pair.
func BenchmarkBetweenFrame(b *testing.B) {
	var pairs []*Between
	for k := range 200 {
		ring := make([]float64, 0, 60)
		ring2 := make([]float64, 0, 56)
		for i := range 30 {
			s, c := math.Sincos(2 * math.Pi * float64(i) / 30)
			ring = append(ring, 100+float64(k)+20*c, 100+20*s)
			if i < 28 {
				s, c = math.Sincos(2 * math.Pi * float64(i) / 28)
				ring2 = append(ring2, 130+float64(k)+25*c, 110+25*s)
			}
		}
		ga := Geometry{Type: Polygon, Polygon: [][]float64{ring}}
		gb := Geometry{Type: Polygon, Polygon: [][]float64{ring2}}
		pairs = append(pairs, NewBetween(ga, gb, ga.Bounds(), gb.Bounds()))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range pairs {
			p.At(0.37)
		}
	}
}
