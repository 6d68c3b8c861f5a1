package selection

import (
	"golang.org/x/sys/cpu"

	"github.com/framelake/framelake/vector"
)

//go:noescape
func dotAVX2(a, b []float32) float32

// hasFMA is fixed by the CPU: k-center and uniqueness spend nearly all their
// time in dot products of rows that stay in cache, where 8-lane FMA is about
// five times the scalar loop.
var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot is the inner product of two vectors of one length.
func dot(a, b []float32) float32 {
	if hasFMA {
		return dotAVX2(a, b[:len(a)])
	}
	return vector.Dot(a, b)
}
