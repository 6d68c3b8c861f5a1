//go:build !amd64

package selection

import "github.com/framelake/framelake/vector"

// dot is the inner product of two vectors of one length.
func dot(a, b []float32) float32 { return vector.Dot(a, b) }
