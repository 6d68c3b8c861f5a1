package curate

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framelake/framelake/vector"
)

// embeddingLike are n unit vectors in dim dimensions made to resemble the
// image embeddings of a lake of camera frames: each is
// a·shared + b·topic + c·scene + d·own, the parts independent random
// directions, with a² = 0.3 (unrelated images: cosine about 0.3), b² = 0.3
// (100 topics: cosine about 0.6 within one), c² = 0.4 - d² and d² drawn per
// scene in [0.08, 0.25] (n/50 scenes of about 50 frames: cosine 1 - d²
// within one). The directions are Gaussian with a decaying spectrum, the
// variance of dimension j ∝ 1/(1 + j/32) in a random order of the
// dimensions (real embeddings spread their variance unevenly, but on no
// axis a search could know). Every twentieth vector is a near copy of an
// earlier one at cosine distance 0.01–0.04, and one in fifty points in a
// uniformly random direction (noise).
func embeddingLike(n, dim int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 6))
	w := make([]float64, dim)
	for j, p := range r.Perm(dim) {
		w[p] = 1 / math.Sqrt(1+float64(j)/32)
	}
	dir := func(w []float64) []float64 {
		v := make([]float64, dim)
		s := 0.0
		for j := range v {
			v[j] = r.NormFloat64() * w[j]
			s += v[j] * v[j]
		}
		for j := range v {
			v[j] /= math.Sqrt(s)
		}
		return v
	}
	ones := make([]float64, dim)
	for j := range ones {
		ones[j] = 1
	}
	shared := dir(w)
	topics := make([][]float64, 100)
	for i := range topics {
		topics[i] = dir(w)
	}
	type scene struct {
		v     []float64
		topic int
		d2    float64
	}
	scenes := make([]scene, max(1, n/50))
	for i := range scenes {
		scenes[i] = scene{dir(w), r.IntN(len(topics)), 0.08 + 0.17*r.Float64()}
	}
	out := make([][]float32, n)
	for i := range out {
		var v []float64
		switch {
		case i%20 == 19:
			src, dist := out[r.IntN(i)], 0.01+0.03*r.Float64()
			s, e := math.Sqrt(1/((1-dist)*(1-dist))-1), dir(w)
			v = make([]float64, dim)
			for j := range v {
				v[j] = float64(src[j]) + s*e[j]
			}
		case i%50 == 7:
			v = dir(ones)
		default:
			sc := scenes[r.IntN(len(scenes))]
			own, t := dir(w), topics[sc.topic]
			a, b, c, d := math.Sqrt(0.3), math.Sqrt(0.3), math.Sqrt(0.4-sc.d2), math.Sqrt(sc.d2)
			v = make([]float64, dim)
			for j := range v {
				v[j] = a*shared[j] + b*t[j] + c*sc.v[j] + d*own[j]
			}
		}
		f := make([]float32, dim)
		for j, x := range v {
			f[j] = float32(x)
		}
		normalise(f)
		out[i] = f
	}
	return out
}

// uniformVectors point in uniformly random directions: the worst case,
// where no cell excludes another.
func uniformVectors(n, dim int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 8))
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		for j := range out[i] {
			out[i][j] = float32(r.NormFloat64())
		}
		normalise(out[i])
	}
	return out
}

// allPairs compares every pair (vector.Dot, then CosineDistance for those
// within rounding of the threshold) on GOMAXPROCS goroutines: the
// brute-force search VectorPairs must equal.
func allPairs(vecs [][]float32, tau float64) map[[2]int32]bool {
	return allPairsAt(vecs, []float64{tau})[0]
}

// allPairsAt is allPairs at several thresholds from one pass over the
// pairs: each pair's Dot (and CosineDistance, when some threshold needs it)
// is computed once and tested against every threshold, as allPairs would
// test it against each alone.
func allPairsAt(vecs [][]float32, taus []float64) []map[[2]int32]bool {
	out := make([]map[[2]int32]bool, len(taus))
	cuts := make([]float32, len(taus))
	for k, tau := range taus {
		out[k], cuts[k] = map[[2]int32]bool{}, float32(1-tau-dotSlack)
	}
	var mu sync.Mutex
	parallelRange(len(vecs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := i + 1; j < len(vecs); j++ {
				dot, cd, haveCD := vector.Dot(vecs[i], vecs[j]), 0.0, false
				for k, tau := range taus {
					if dot < cuts[k] {
						continue
					}
					if !haveCD {
						cd, haveCD = CosineDistance(vecs[i], vecs[j]), true
					}
					if cd < tau {
						mu.Lock()
						out[k][[2]int32{int32(i), int32(j)}] = true
						mu.Unlock()
					}
				}
			}
		}
	})
	return out
}

func pairsOf(vecs [][]float32, tau float64) (map[[2]int32]bool, int) {
	got := map[[2]int32]bool{}
	var mu sync.Mutex
	calls := 0
	VectorPairs(vecs, tau, func(i, j int32, d float64) {
		mu.Lock()
		got[[2]int32{i, j}] = true
		calls++
		mu.Unlock()
	})
	return got, calls
}

// TestVectorPairsExact: the cell search finds exactly the pairs that
// comparing every pair finds, each once: on embedding-like and uniform
// 512-d vectors, on 100-d ones (a last block shorter than blockDims), on
// 3-d ones (dense, every cell touching many), and with identical and zero
// vectors, at several thresholds.
func TestVectorPairsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: pairs of a large set, checked by brute force")
	}
	dup := embeddingLike(400, 64, 9)
	for i := range 300 {
		dup = append(dup, dup[i%3]) // three groups of 100 identical vectors: leaves that cannot split
	}
	dup = append(dup, make([]float32, 64), make([]float32, 64))
	sets := []struct {
		name string
		vecs [][]float32
		taus []float64
	}{
		{"embedding-like 3000x512", embeddingLike(3000, 512, 5), []float64{0.01, DefaultCosine, 0.1, 0.3}},
		{"uniform 2000x512", uniformVectors(2000, 512, 1), []float64{DefaultCosine, 0.9}},
		{"embedding-like 2000x100", embeddingLike(2000, 100, 2), []float64{DefaultCosine, 0.2}},
		{"uniform 3000x3", uniformVectors(3000, 3, 3), []float64{0.0005, DefaultCosine}},
		{"identical and zero 702x64", dup, []float64{DefaultCosine, 1.5}},
	}
	for _, s := range sets {
		wants := allPairsAt(s.vecs, s.taus)
		for k, tau := range s.taus {
			want := wants[k]
			got, calls := pairsOf(s.vecs, tau)
			if calls != len(want) || !maps.Equal(got, want) {
				t.Fatalf("%s, cosine < %g: %d pairs reported (%d distinct), all pairs compared find %d",
					s.name, tau, calls, len(got), len(want))
			}
			t.Logf("%s, cosine < %g: %d pairs, as all pairs compared", s.name, tau, len(want))
		}
	}
}

// BenchmarkVectorGroups100k finds every pair of 100,000 512-d
// embedding-like vectors at cosine distance below DefaultCosine and joins
// them into groups, as a find_duplicates job does after reading them
// (FRAMELAKE_BENCH_VECTORS=uniform: uniformly random vectors instead;
// FRAMELAKE_BENCH_N: another count). It reports wall and CPU seconds, the
// pairs, peak RSS and the load average.
func BenchmarkVectorGroups100k(b *testing.B) {
	n := 100_000
	if s := os.Getenv("FRAMELAKE_BENCH_N"); s != "" {
		fmt.Sscan(s, &n)
	}
	vecs := embeddingLike(n, 512, 5)
	if os.Getenv("FRAMELAKE_BENCH_VECTORS") == "uniform" {
		vecs = uniformVectors(n, 512, 5)
	}
	runtime.GC()
	b.ResetTimer()
	var pairs atomic.Int64
	cpu0, t0 := cpuSeconds(), time.Now()
	for b.Loop() {
		pairs.Store(0)
		u := newUnionFind(len(vecs))
		VectorPairs(vecs, DefaultCosine, func(i, j int32, _ float64) {
			pairs.Add(1)
			u.union(i, j)
		})
	}
	b.ReportMetric(time.Since(t0).Seconds()/float64(b.N), "wall-s")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s")
	b.ReportMetric(float64(pairs.Load()), "pairs")
	b.ReportMetric(maxRSS(), "maxRSS-MiB")
	b.ReportMetric(load1(), "load1")
}

// BenchmarkVectorPairsVsAllPairs runs the cell search and the brute-force
// all-pairs comparison (allPairs) on one sample of 10,000 embedding-like
// vectors, checks they agree, and reports the CPU seconds of each.
func BenchmarkVectorPairsVsAllPairs(b *testing.B) {
	vecs := embeddingLike(100_000, 512, 5)[:10_000]
	for b.Loop() {
		cpu0 := cpuSeconds()
		got, _ := pairsOf(vecs, DefaultCosine)
		cpu1 := cpuSeconds()
		want := allPairs(vecs, DefaultCosine)
		cpu2 := cpuSeconds()
		if !maps.Equal(got, want) {
			b.Fatalf("cell search %d pairs, all pairs %d", len(got), len(want))
		}
		b.ReportMetric(cpu1-cpu0, "cells-cpu-s")
		b.ReportMetric(cpu2-cpu1, "allpairs-cpu-s")
		b.ReportMetric(float64(len(want)), "pairs")
	}
	b.ReportMetric(load1(), "load1")
}

func load1() float64 {
	var l float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscan(string(b), &l)
	}
	return l
}
