package curate

import (
	"maps"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/testphotos"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
)

// BenchmarkScore1080p scores 1920x1080 JPEGs of a real photo (darknet's
// dog, resized up and encoded at quality 90), on every core the benchmark is
// given (-cpu 2 for the figure), from bytes in memory.
func BenchmarkScore1080p(b *testing.B) {
	dog := testphotos.Read(b, testphotos.Darknet+"dog.jpg")
	img, _, _, err := vips.ThumbnailJPEG(dog, 1920, 1080, 90)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuSeconds()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := Score(img, 1920, 1080); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
	b.ReportMetric(float64(b.N)/(cpuSeconds()-cpu0), "images/cpu-s")
}

// cpuSeconds is the CPU time of the process so far (user and system): on a
// shared machine, images per CPU-second shows the cost wall time hides.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// plantedHashes are n 64-bit hashes: random ones, and every tenth a copy
// of an earlier one with 0 to 6 bits flipped (a near duplicate).
func plantedHashes(n int) []uint64 {
	r := rand.New(rand.NewPCG(3, 4))
	h := make([]uint64, n)
	for i := range h {
		if i%10 == 9 {
			h[i] = h[r.IntN(i)]
			for range r.IntN(7) {
				h[i] ^= 1 << r.IntN(64)
			}
			continue
		}
		h[i] = r.Uint64()
	}
	return h
}

func maxRSS() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// BenchmarkHashGroups1M finds every pair within DefaultHamming among
// 1,000,000 hashes (plantedHashes) and joins them into groups, as a
// find_duplicates job does after reading the hashes. It reports the pairs,
// the groups and the peak RSS of the test process (MiB).
func BenchmarkHashGroups1M(b *testing.B) {
	hashes := plantedHashes(1_000_000)
	runtime.GC()
	b.ResetTimer()
	var pairs atomic.Int64
	var groups int
	for b.Loop() {
		pairs.Store(0)
		u := newUnionFind(len(hashes))
		HashPairs(hashes, DefaultHamming, func(i, j int32, _ int) {
			pairs.Add(1)
			u.union(i, j)
		})
		groups = 0
		for i := range hashes {
			if u.find(int32(i)) == int32(i) {
				groups++
			}
		}
	}
	b.ReportMetric(float64(pairs.Load()), "pairs")
	b.ReportMetric(float64(len(hashes)-groups), "joined")
	b.ReportMetric(maxRSS(), "maxRSS-MiB")
}

// TestHashPairsExact compares HashPairs with all pairs compared one by one,
// at every threshold, on hashes with many near pairs.
func TestHashPairsExact(t *testing.T) {
	hashes := plantedHashes(3000)
	for i := 100; i < 400; i++ { // a cluster: distances spread over 0..16
		hashes[i] = hashes[50] ^ (uint64(1)<<(i%17) - 1)
	}
	for th := 0; th <= MaxHamming; th++ {
		want := map[[2]int32]int{}
		for i := range hashes {
			for j := i + 1; j < len(hashes); j++ {
				if d := bits.OnesCount64(hashes[i] ^ hashes[j]); d <= th {
					want[[2]int32{int32(i), int32(j)}] = d
				}
			}
		}
		got := map[[2]int32]int{}
		var mu sync.Mutex
		reported := 0
		HashPairs(hashes, th, func(i, j int32, d int) {
			mu.Lock()
			got[[2]int32{i, j}] = d
			reported++
			mu.Unlock()
		})
		if reported != len(want) || !maps.Equal(got, want) {
			t.Fatalf("threshold %d: %d pairs reported (%d distinct), %d exist", th, reported, len(got), len(want))
		}
		if th == DefaultHamming {
			t.Logf("threshold %d: %d pairs among %d hashes, as all pairs compared one by one", th, len(want), len(hashes))
		}
	}
}

// TestHashMatchesExact compares HashMatches with every query and hash
// compared one by one, at every threshold.
func TestHashMatchesExact(t *testing.T) {
	hashes := plantedHashes(2000)
	queries := plantedHashes(2600)[1000:] // near copies of hashes among them
	for th := 0; th <= MaxHamming; th++ {
		want := map[[2]int32]int{}
		for q, h := range queries {
			for i, o := range hashes {
				if d := bits.OnesCount64(h ^ o); d <= th {
					want[[2]int32{int32(q), int32(i)}] = d
				}
			}
		}
		got := map[[2]int32]int{}
		var mu sync.Mutex
		reported := 0
		HashMatches(hashes, queries, th, func(q, i int32, d int) {
			mu.Lock()
			got[[2]int32{q, i}] = d
			reported++
			mu.Unlock()
		})
		if reported != len(want) || !maps.Equal(got, want) {
			t.Fatalf("threshold %d: %d matches reported (%d distinct), %d exist", th, reported, len(got), len(want))
		}
	}
}

// BenchmarkScoredPairs1M is the pair search of a find_duplicates job by
// hash over 1,000,000 images: plantedHashes as the whole-image hashes, and
// two centre hashes each (random, but every tenth image's first centre hash
// is a near copy of an earlier image's whole hash: a crop of it).
func BenchmarkScoredPairs1M(b *testing.B) {
	hashes := plantedHashes(1_000_000)
	r := rand.New(rand.NewPCG(7, 8))
	items := make([]lake.Scored, len(hashes))
	for i, h := range hashes {
		items[i] = lake.Scored{PHash: h, CentreHashes: [2]uint64{r.Uint64(), r.Uint64()}, HasCentre: true}
		if i%10 == 5 {
			items[i].CentreHashes[0] = hashes[r.IntN(i)] ^ 1<<r.IntN(64)
		}
	}
	runtime.GC()
	b.ResetTimer()
	cpu0, t0 := cpuSeconds(), time.Now()
	pairs := 0
	for b.Loop() {
		pairs = 0
		ScoredPairs(items, DefaultHamming, func(i, j int32, _ int) { pairs++ })
	}
	b.ReportMetric(time.Since(t0).Seconds()/float64(b.N), "wall-s")
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s")
	b.ReportMetric(float64(pairs), "pairs")
	b.ReportMetric(maxRSS(), "maxRSS-MiB")
	b.ReportMetric(load1(), "load1")
}
