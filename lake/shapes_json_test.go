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
