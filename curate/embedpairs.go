package curate

import (
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/framelake/framelake/vector"
)

// Slack of the search's bounds, so that rounding never prunes a true pair:
// angles are computed from float64 sums (errors near 1e-8 rad), and the
// early exits' float32 partial sums are off by at most ~3e-5.
const (
	angleSlack = 1e-4 // radians, added to the threshold angle
	dotSlack   = 1e-4 // taken off the cosine a pair must reach
	blockDims  = 64   // dimensions summed between two early-exit checks
)

// VectorPairs calls fn once for every pair i < j of vectors whose cosine
// distance 1 - cos(a, b) (CosineDistance, after normalising) is below tau,
// from several goroutines at once. Vectors are normalised here (a copy is
// not made: vecs is changed).
//
// It is exact: angles between directions obey the triangle inequality, so
// the vectors are cut into cells (a tree of spherical k-means splits, see
// tree), each with a centre and a radius (the greatest angle from it to a
// member), and two cells are compared only when the angle between their
// centres less both radii is below the threshold angle acos(1 - tau).
// Within a pair of cells a member x is compared with a member y only when
// their angles to the second cell's centre differ by less than the
// threshold, and the comparison stops after any block of blockDims
// dimensions once the sum so far plus the norms of the rest (Cauchy-Schwarz)
// cannot reach the threshold.
//
// The cells pay when the vectors are clustered, as image embeddings are
// (frames of one scene, photos of one kind); on vectors spread uniformly
// over the sphere no cell excludes another, every pair is compared, and
// only the early exits remain (about one block of 512 dimensions in eight).
func VectorPairs(vecs [][]float32, tau float64, fn func(i, j int32, dist float64)) {
	n := len(vecs)
	if n < 2 || tau <= 0 {
		return
	}
	for _, v := range vecs {
		normalise(v)
	}
	theta := math.Pi + angleSlack
	if tau < 2 {
		theta = math.Acos(1-tau) + angleSlack
	}
	t := newTree(vecs)
	t.search(theta, float32(1-tau-dotSlack), func(x, y int32) {
		if d := CosineDistance(vecs[x], vecs[y]); d < tau {
			fn(min(x, y), max(x, y), d)
		}
	})
}

// search calls near, from GOMAXPROCS goroutines, for every pair of members
// that no bound excludes and whose blocked dot product reaches cut: each
// member in turn descends the tree (descend).
func (t *tree) search(theta float64, cut float32, near func(x, y int32)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	const chunk = 64
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				lo := int32(next.Add(chunk) - chunk)
				if int(lo) >= len(t.order) {
					return
				}
				for p := lo; p < min(lo+chunk, int32(len(t.order))); p++ {
					t.descend(p, t.root, theta, cut, near)
				}
			}
		})
	}
	wg.Wait()
}

// descend compares the member at position p with the members of cell n
// that come after it (pairs with earlier ones are found from those), unless
// the angle between it and n's centre, less n's radius, reaches theta.
// In a leaf it compares only the members whose angle to the centre is
// within theta of its own: two whose angles differ by theta are that far
// apart. Angles from float32 dot products are taken as intervals
// (cosine ± dotSlack), so rounding never excludes a pair.
func (t *tree) descend(p int32, n *cell, theta float64, cut float32, near func(x, y int32)) {
	if n.hi <= p+1 {
		return
	}
	x := t.order[p]
	if n.lo <= p && n.kids == nil { // x's own leaf, sorted by angle after x
		for q := p + 1; q < n.hi && t.ang[q]-t.ang[p] < theta; q++ {
			if y := t.order[q]; t.close(x, y, cut) {
				near(x, y)
			}
		}
		return
	}
	lo, hi := 0.0, math.Pi
	if (n.kids == nil || n.radius+theta < math.Pi) && n.cnorm > 0 {
		kappa := float32(-2) // within radius+theta at any cosine
		if n.radius+theta < math.Pi {
			kappa = float32(math.Cos(n.radius+theta) - dotSlack)
		}
		c32, within := t.dotAbove(x, n, kappa)
		if !within {
			return
		}
		c := float64(c32)
		lo, hi = math.Acos(min(1, c+dotSlack)), math.Acos(max(-1, c-dotSlack))
		if lo-n.radius >= theta {
			return
		}
	}
	if n.kids != nil {
		for _, k := range n.kids {
			t.descend(p, k, theta, cut, near)
		}
		return
	}
	angs := t.ang[n.lo:n.hi]
	for q := n.lo + int32(sort.SearchFloat64s(angs, lo-theta)); q < n.hi && t.ang[q]-hi < theta; q++ {
		if y := t.order[q]; t.close(x, y, cut) {
			near(x, y)
		}
	}
}

// close says whether the dot product of members x and y reaches cut.
func (t *tree) close(x, y int32, cut float32) bool {
	b := t.blocks
	_, ok := blockedDot(t.vecs[x], t.vecs[y], t.rest[int(x)*b:int(x+1)*b], t.rest[int(y)*b:int(y+1)*b], cut)
	return ok
}

// dotAbove is the dot product of member x and n's centre, or false if it
// is below kappa.
func (t *tree) dotAbove(x int32, n *cell, kappa float32) (float32, bool) {
	return blockedDot(t.vecs[x], n.centre, t.rest[int(x)*t.blocks:int(x+1)*t.blocks], n.rest, kappa)
}

// blockedDot sums a·b block by block (blockDims dimensions) and gives up,
// returning false, as soon as the sum so far plus the product of the
// norms left (ra, rb: the norms past each block; Cauchy-Schwarz bounds what
// the remaining dimensions can add) falls below kappa.
func blockedDot(a, b, ra, rb []float32, kappa float32) (float32, bool) {
	var s float32
	for k := range ra {
		lo := k * blockDims
		hi := min(lo+blockDims, len(a))
		s += vector.Dot(a[lo:hi], b[lo:hi])
		if s+ra[k]*rb[k] < kappa {
			return s, false
		}
	}
	return s, true
}

// angleOf is the angle between v (of norm vn) and cell c's centre. A zero
// vector is at a right angle to everything, as CosineDistance has it (1).
func (t *tree) angleOf(v []float32, vn float64, c *cell) float64 {
	if vn == 0 || c.cnorm == 0 {
		return math.Pi / 2
	}
	return math.Acos(max(-1, min(1, dot64(v, c.centre)/(vn*c.cnorm))))
}

// CosineDistance is 1 - a·b for unit vectors, summed in float64.
func CosineDistance(a, b []float32) float64 { return 1 - dot64(a, b) }

// dot64 is a·b summed in float64 (a product of two float32 is exact there).
func dot64(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float64(a[i]) * float64(b[i])
		s1 += float64(a[i+1]) * float64(b[i+1])
		s2 += float64(a[i+2]) * float64(b[i+2])
		s3 += float64(a[i+3]) * float64(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float64(a[i]) * float64(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

func normalise(v []float32) {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// parallelRange runs fn over [0, n) in chunks on GOMAXPROCS goroutines.
func parallelRange(n int, fn func(lo, hi int)) {
	const chunk = 256
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for lo := range next {
				fn(lo, min(n, lo+chunk))
			}
		})
	}
	for lo := 0; lo < n; lo += chunk {
		next <- lo
	}
	close(next)
	wg.Wait()
}
