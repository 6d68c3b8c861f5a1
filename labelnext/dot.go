package labelnext

import "github.com/framelake/framelake/vector"

// dot is the inner product of two vectors of one length. k-center and
// uniqueness spend nearly all their time here; the plain loop meets the
// issue's figure, so no hand-written SIMD.
func dot(a, b []float32) float32 { return vector.Dot(a, b) }
