package curate

import (
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// clusteredVectors are n dim-dimensional vectors around n/50 random
// centres (within-cluster cosine distance around 0.1 to 0.3, like images
// of one scene), every twentieth a near copy of an earlier one (cosine
// distance about 0.01 to 0.05).
func clusteredVectors(n, dim int) [][]float32 {
	r := rand.New(rand.NewPCG(5, 6))
	centres := make([][]float32, max(1, n/50))
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		switch {
		case i%20 == 19:
			src := out[r.IntN(i)]
			noise := 0.1 + 0.2*r.Float64()
			for j := range v {
				v[j] = src[j] + float32(noise*r.NormFloat64()/22.6) // /sqrt(512): noise as a fraction of the norm
			}
		default:
			c := centres[r.IntN(len(centres))]
			for j := range v {
				v[j] = c[j] + float32(0.6*r.NormFloat64())
			}
		}
		normalise(v)
		out[i] = v
	}
	return out
}

// bruteForce compares every pair once and returns a function listing the
// pairs below a threshold.
func bruteForce(vecs [][]float32) func(tau float64) map[[2]int32]bool {
	dist := make([]float64, 0, len(vecs)*(len(vecs)-1)/2)
	for i := range vecs {
		for j := i + 1; j < len(vecs); j++ {
			dist = append(dist, CosineDistance(vecs[i], vecs[j]))
		}
	}
	return func(tau float64) map[[2]int32]bool {
		want := map[[2]int32]bool{}
		k := 0
		for i := range vecs {
			for j := i + 1; j < len(vecs); j++ {
				if dist[k] < tau {
					want[[2]int32{int32(i), int32(j)}] = true
				}
				k++
			}
		}
		return want
	}
}

// TestVectorPairsExact: the pruned search finds exactly the pairs that
// comparing every pair finds, on clustered 512-d vectors and at several
// thresholds.
func TestVectorPairsExact(t *testing.T) {
	vecs := clusteredVectors(2000, 512)
	all := bruteForce(vecs)
	for _, tau := range []float64{0.01, DefaultCosine, 0.2} {
		want := all(tau)
		got := map[[2]int32]bool{}
		var mu sync.Mutex
		VectorPairs(vecs, tau, func(i, j int32, d float64) {
			mu.Lock()
			got[[2]int32{i, j}] = true
			mu.Unlock()
		})
		if !maps.Equal(got, want) {
			t.Fatalf("cosine < %g: %d pairs found, all-pairs finds %d", tau, len(got), len(want))
		}
		t.Logf("cosine < %g: %d pairs among %d vectors, the same as all pairs compared", tau, len(want), len(vecs))
	}
}

// BenchmarkVectorGroups100k finds every pair of 100,000 512-d vectors
// (clusteredVectors) at cosine distance below DefaultCosine.
func BenchmarkVectorGroups100k(b *testing.B) {
	vecs := clusteredVectors(100_000, 512)
	b.ResetTimer()
	var pairs atomic.Int64
	for b.Loop() {
		pairs.Store(0)
		u := newUnionFind(len(vecs))
		VectorPairs(vecs, DefaultCosine, func(i, j int32, _ float64) {
			pairs.Add(1)
			u.union(i, j)
		})
	}
	b.ReportMetric(float64(pairs.Load()), "pairs")
	b.ReportMetric(maxRSS(), "maxRSS-MiB")
}
