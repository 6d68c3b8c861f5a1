package lake

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRingsJSONIsMarshal: the polygon and polyline text the annotation
// table keeps is encoding/json's, byte for byte, for coordinates of every
// magnitude (exponent forms included), so what was stored before reads the same.
func TestRingsJSONIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float64{0, math.Copysign(0, -1), 1e-7, -1e-7, 1e-6, 9.999999e-7, 1e20, 1e21, -1e21, 123456.789012, 5e-324,
		math.MaxFloat64, 0.1, 1.0 / 3}
	for n := range 2000 {
		var rings [][]float64
		for range 1 + n%3 {
			ring := make([]float64, 2*(n%7))
			for i := range ring {
				if n < len(special) {
					ring[i] = special[(n+i)%len(special)]
				} else {
					ring[i] = math.Round(r.NormFloat64()*math.Pow(10, float64(r.IntN(30)-10))*1e6) / 1e6
				}
			}
			rings = append(rings, ring)
		}
		want, _ := json.Marshal(rings)
		if got := ringsJSON(rings); got.String != string(want) || !got.Valid {
			t.Fatalf("ringsJSON(%v) = %s, json.Marshal %s", rings, got.String, want)
		}
		want, _ = json.Marshal(rings[0])
		if got := appendNumbers(nil, rings[0]); string(got) != string(want) {
			t.Fatalf("appendNumbers(%v) = %s, json.Marshal %s", rings[0], got, want)
		}
	}
}

// TestAppendCoordIsMarshal: a coordinate RoundCoord has rounded is written
// by appendCoord's digits exactly as encoding/json writes it, at every
// count of decimals, sign and size up to RoundCoord's 1e9; a value it
// does not take (unrounded, -0, past 1e9) is left to strconv.
func TestAppendCoordIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 200000 {
		scale := math.Pow(10, float64(r.IntN(7)))                                    // 0 to 6 decimals
		v := math.Round(r.Float64()*math.Pow(10, float64(r.IntN(10)))*scale) / scale // up to 1e9
		if n%2 == 1 {
			v = -v
		}
		v = RoundCoord(v)
		want, _ := json.Marshal(v)
		got, ok := appendCoord(nil, v)
		if !ok && math.Abs(v) < 1e9 && v != 0 {
			t.Fatalf("appendCoord(%v) refused a rounded coordinate", v)
		}
		if ok && string(got) != string(want) {
			t.Fatalf("appendCoord(%v) = %s, json.Marshal %s", v, got, want)
		}
	}
	for _, v := range []float64{math.Copysign(0, -1), math.Nextafter(0.3, 1), 1e-7, 1e9, math.NaN(), math.Inf(1), 1.0 / 3} {
		if got, ok := appendCoord(nil, v); ok {
			t.Errorf("appendCoord(%v) = %s; want it left to strconv", v, got)
		}
	}
}

// BenchmarkRingsJSON writes a polygon of 30 vertices as the import does.
func BenchmarkRingsJSON(b *testing.B) {
	ring := make([]float64, 60)
	for i := range ring {
		ring[i] = RoundCoord(float64(i*37%640) + float64(i%100)/100)
	}
	for b.Loop() {
		ringsJSON([][]float64{ring})
	}
}
