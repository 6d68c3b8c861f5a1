package vector

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkProjection100k fits the embedding map of 100,000 512-d vectors
// (50 clusters) from sqlite-vec: the time of UpdateProjection alone and the
// process's peak resident set during it (the high-water mark is reset first).
// Then 1,000 new vectors are placed incrementally. Run:
//
//	GOMAXPROCS=2 go test ./vector -run '^$' -bench Projection100k -benchtime 1x -timeout 30m
func BenchmarkProjection100k(b *testing.B) {
	ctx := context.Background()
	const n, dim = 100_000, 512
	db := openDB(b, filepath.Join(b.TempDir(), "bench.db"))
	names := addFiles(b, db, n+1000)
	s := openStore(b, db, Options{CacheBytes: -1})
	vecs := clustered(rand.New(rand.NewPCG(5, 6)), n+1000, dim, 50, 0.3)
	if _, err := s.InsertMany(ctx, "clip", dim, records(names[:n], vecs[:n])); err != nil {
		b.Fatal(err)
	}
	later := records(names[n:], vecs[n:])
	vecs = nil // the fit's memory is measured without the benchmark's own copy
	for range b.N {
		debug.FreeOSMemory() // the resident set starts from what is live
		_, before := memNow()
		b.ReportMetric(float64(before)/(1<<20), "rss-before-MB")
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
		t0, cpu0 := time.Now(), cpuTime()
		if err := s.UpdateProjection(ctx, "clip", true); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "fit-s")
		b.ReportMetric((cpuTime() - cpu0).Seconds(), "fit-cpu-s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
	}
	if _, err := s.InsertMany(ctx, "clip", dim, later); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := s.UpdateProjection(ctx, "clip", false); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(t0).Seconds()*1000, "place-1000-ms")
	if st, err := s.RefreshProjection(ctx, "clip", false); err != nil || st.PointCount != n+1000 || st.FittedCount != n {
		b.Fatalf("after placing: %+v, %v", st, err)
	}
}

// peakRSS is the process's VmHWM in bytes.
func peakRSS() uint64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}
