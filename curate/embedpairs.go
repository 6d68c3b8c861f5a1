package curate

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// projDims is how many orthonormal directions the embedding search projects
// onto before comparing whole vectors.
const projDims = 16

// VectorPairs calls fn once for every pair i < j of vectors whose cosine
// distance 1 - cos(a, b) is below tau, from several goroutines at once.
// Vectors are normalised here (a copy is not made: vecs is changed).
//
// It is exact, with no index to approximate: for unit vectors, cosine
// distance below tau is squared Euclidean distance below 2*tau, and the
// projection onto any orthonormal directions never lengthens a difference.
// So the vectors are projected onto projDims directions (the principal ones
// of a sample, where the differences are largest, orthonormalised), sorted
// by the first, and a pair is compared in full only when its projected
// distance is within the bound; every pruned pair is provably too far.
// The pruning pays when the vectors' variance sits in few directions (as
// in real image embeddings); on isotropic data it prunes little and the
// search costs as much as comparing all pairs.
func VectorPairs(vecs [][]float32, tau float64, fn func(i, j int32, dist float64)) {
	n := len(vecs)
	if n < 2 || tau <= 0 {
		return
	}
	for _, v := range vecs {
		normalise(v)
	}
	dirs := principalDirections(vecs, projDims)
	proj := make([]float64, n*projDims)
	parallelRange(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for k, d := range dirs {
				proj[i*projDims+k] = dot64(vecs[i], d)
			}
		}
	})
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := proj[int(a)*projDims], proj[int(b)*projDims]
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return int(a - b)
	})
	bound := 2*tau + 1e-6 // the slack keeps float32 norms and rounding from pruning a true pair
	window := math.Sqrt(bound)
	parallelRange(n, func(lo, hi int) {
		for a := lo; a < hi; a++ {
			i := order[a]
			pi := proj[int(i)*projDims : int(i+1)*projDims]
			for b := a + 1; b < n; b++ {
				j := order[b]
				pj := proj[int(j)*projDims : int(j+1)*projDims]
				if pj[0]-pi[0] >= window {
					break
				}
				s := 0.0
				for k := range projDims {
					d := pi[k] - pj[k]
					if s += d * d; s >= bound {
						break
					}
				}
				if s >= bound {
					continue
				}
				if d := CosineDistance(vecs[i], vecs[j]); d < tau {
					fn(min(i, j), max(i, j), d)
				}
			}
		}
	})
}

// CosineDistance is 1 - a·b for unit vectors, summed in float64.
func CosineDistance(a, b []float32) float64 {
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
	return 1 - ((s0 + s1) + (s2 + s3))
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

func dot64(a []float32, d []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += float64(x) * d[i]
	}
	return s
}

// principalDirections returns k orthonormal directions close to the top
// principal axes of (a sample of) vecs, by subspace iteration on the
// sample's centred covariance. Only orthonormality matters for exactness;
// closeness to the principal axes only makes the pruning sharper.
func principalDirections(vecs [][]float32, k int) [][]float64 {
	dim := len(vecs[0])
	k = min(k, dim)
	rng := rand.New(rand.NewPCG(1, 2))
	sample := vecs
	if len(vecs) > 4096 {
		sample = make([][]float32, 4096)
		for i := range sample {
			sample[i] = vecs[rng.IntN(len(vecs))]
		}
	}
	mean := make([]float64, dim)
	for _, v := range sample {
		for i, x := range v {
			mean[i] += float64(x)
		}
	}
	for i := range mean {
		mean[i] /= float64(len(sample))
	}
	dirs := make([][]float64, k)
	for i := range dirs {
		dirs[i] = make([]float64, dim)
		for j := range dirs[i] {
			dirs[i][j] = rng.NormFloat64()
		}
	}
	orthonormalise(dirs)
	coef := make([]float64, len(sample)*k)
	for range 6 {
		// dirs = C·dirs with C = Σ (v-mean)(v-mean)ᵀ, as two passes over the sample.
		parallelRange(len(sample), func(lo, hi int) {
			for s := lo; s < hi; s++ {
				for d := range dirs {
					c := 0.0
					for i, x := range sample[s] {
						c += (float64(x) - mean[i]) * dirs[d][i]
					}
					coef[s*k+d] = c
				}
			}
		})
		parallelRange(k, func(lo, hi int) {
			for d := lo; d < hi; d++ {
				next := make([]float64, dim)
				for s, v := range sample {
					c := coef[s*k+d]
					for i, x := range v {
						next[i] += c * (float64(x) - mean[i])
					}
				}
				dirs[d] = next
			}
		})
		orthonormalise(dirs)
	}
	return dirs
}

// orthonormalise applies modified Gram-Schmidt (twice, for rounding).
func orthonormalise(dirs [][]float64) {
	for range 2 {
		for i, d := range dirs {
			for _, e := range dirs[:i] {
				p := 0.0
				for j := range d {
					p += d[j] * e[j]
				}
				for j := range d {
					d[j] -= p * e[j]
				}
			}
			s := 0.0
			for _, x := range d {
				s += x * x
			}
			s = math.Sqrt(s)
			if s == 0 {
				d[i%len(d)] = 1 // a degenerate sample: any unit vector keeps the bound
				s = 1
			}
			for j := range d {
				d[j] /= s
			}
		}
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
