package vector

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkVsFAISS measures this package against FAISS IndexFlatIP on the
// same random 512-d vectors and queries: insert rate into sqlite-vec, load
// time and memory of the in-memory copy, top-10 cosine query median for the
// in-memory and the sqlite-vec path, and recall of both against FAISS. Run:
//
//	go test ./vector -run '^$' -bench VsFAISS -benchtime 1x -timeout 60m
//
// 1,000,000 vectors only with FRAMELAKE_BENCH_1M=1. Needs Debian's
// python3-faiss under /usr/bin/python3, and fails without it.
func BenchmarkVsFAISS(b *testing.B) {
	sizes := []int{100_000}
	if os.Getenv("FRAMELAKE_BENCH_1M") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				benchVsFAISS(b, n)
			}
		})
	}
}

const (
	benchDim     = 512
	benchQueries = 100
	benchK       = 10
)

func benchVsFAISS(b *testing.B, n int) {
	ctx := context.Background()
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(uint64(n), 512))
	vecs, queries := randVecs(r, n, benchDim), randVecs(r, benchQueries, benchDim)
	faiss := runFAISS(b, dir, vecs, queries) // first: it needs the most memory while Go's is low

	db := openDB(b, filepath.Join(dir, "bench.db"))
	names := addFiles(b, db, n)
	s := openStore(b, db, Options{CacheBytes: 8 << 30, NoBackgroundLoad: true})
	recs := records(names, vecs)
	t0, cpu0 := time.Now(), cpuTime()
	if _, err := s.InsertMany(ctx, "clip", benchDim, recs); err != nil {
		b.Fatal(err)
	}
	// Per CPU-second too: the wall-clock rate depends on what else runs.
	insertRate, insertCPU := float64(n)/time.Since(t0).Seconds(), float64(n)/(cpuTime()-cpu0).Seconds()
	recs, vecs = nil, nil // let the copy's memory be measured alone
	heap0, rss0 := memNow()
	t0 = time.Now()
	if err := s.Warm(ctx, "clip"); err != nil {
		b.Fatal(err)
	}
	load := time.Since(t0)
	heap1, rss1 := memNow()

	memMed, memRecall := benchQueriesOn(b, s, queries, benchQueries, faiss.IDs)
	vecOnly := openStore(b, db, Options{CacheBytes: -1})
	vq := max(3, min(benchQueries, 20_000_000/n)) // sqlite-vec takes ~1 s per query at 1M
	vecMed, vecRecall := benchQueriesOn(b, vecOnly, queries[:vq], vq, faiss.IDs)

	b.ReportMetric(insertRate, "insert/s")
	b.ReportMetric(insertCPU, "insert/cpu-s")
	b.ReportMetric(faiss.AddPerS, "faiss-add/s")
	b.ReportMetric(memMed, "mem-ms/query")
	b.ReportMetric(vecMed, "sqlitevec-ms/query")
	b.ReportMetric(faiss.QueryMedianMs, "faiss-ms/query")
	b.ReportMetric(memRecall, "mem-recall")
	b.ReportMetric(vecRecall, "sqlitevec-recall")
	b.ReportMetric(float64(heap1-heap0)/1e6, "copy-heap-MB")
	b.ReportMetric(float64(rss1)/1e6, "rss-MB")
	b.ReportMetric(faiss.IndexMB, "faiss-index-MB")
	b.Logf("n=%d dim=%d GOMAXPROCS=%d faiss %s threads=%d", n, benchDim, runtime.GOMAXPROCS(0), faiss.Version, faiss.Threads)
	b.Logf("insert %.0f vectors/s, %.0f per CPU-second (FAISS add %.0f/s); copy load %v, heap +%.0f MB, RSS %.0f→%.0f MB (FAISS index %.0f MB)",
		insertRate, insertCPU, faiss.AddPerS, load.Round(time.Millisecond), float64(heap1-heap0)/1e6, float64(rss0)/1e6, float64(rss1)/1e6, faiss.IndexMB)
	b.Logf("top-%d cosine, median of %d: in-memory %.2f ms, sqlite-vec %.2f ms (median of %d), FAISS %.2f ms (batched %.2f ms/query); recall vs FAISS %.4f / %.4f",
		benchK, benchQueries, memMed, vecMed, vq, faiss.QueryMedianMs, faiss.BatchMsPerQuery, memRecall, vecRecall)
}

// benchQueriesOn returns the median latency in ms of the first nq queries
// and their mean recall against FAISS's ids (row i is file seq i+1).
func benchQueriesOn(b *testing.B, s *Store, queries [][]float32, nq int, want [][]int64) (float64, float64) {
	ctx := context.Background()
	if _, err := s.Search(ctx, SearchQuery{Model: "clip", Vector: queries[0], K: benchK}); err != nil { // warm-up
		b.Fatal(err)
	}
	var times []float64
	var recall float64
	for i, q := range queries[:nq] {
		t0 := time.Now()
		hits, err := s.Search(ctx, SearchQuery{Model: "clip", Vector: q, K: benchK})
		times = append(times, float64(time.Since(t0).Microseconds())/1e3)
		if err != nil {
			b.Fatal(err)
		}
		ids := map[string]bool{}
		for _, id := range want[i] {
			ids["u"+strconv.FormatInt(id+1, 10)] = true
		}
		for _, h := range hits {
			if ids[h.UniqueName] {
				recall++
			}
		}
	}
	slices.Sort(times)
	return times[len(times)/2], recall / float64(nq*benchK)
}

type faissResult struct {
	Version         string    `json:"faiss_version"`
	Threads         int       `json:"threads"`
	AddPerS         float64   `json:"add_per_s"`
	QueryMedianMs   float64   `json:"query_median_ms"`
	BatchMsPerQuery float64   `json:"batch_ms_per_query"`
	IndexMB         float64   `json:"index_mb"`
	IDs             [][]int64 `json:"ids"`
}

// runFAISS writes the vectors and queries for testdata/faiss_bench.py and
// runs it with Debian's interpreter, which has python3-faiss.
func runFAISS(b *testing.B, dir string, vecs, queries [][]float32) *faissResult {
	path := filepath.Join(dir, "vectors.bin")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, x := range []int32{int32(len(vecs)), benchDim, int32(len(queries)), benchK} {
		binary.Write(w, binary.LittleEndian, x)
	}
	var buf [4]byte
	for _, v := range slices.Concat(vecs, queries) {
		for _, x := range v {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(x))
			w.Write(buf[:])
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "testdata/faiss_bench.py", path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("FAISS benchmark failed (is Debian's python3-faiss installed? apt-get install python3-faiss): %v\n%s", err, stderr.String())
	}
	var res faissResult
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatalf("FAISS output: %v", err)
	}
	os.Remove(path)
	return &res
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memNow returns the live heap after a GC and the process's resident set.
func memNow() (heap, rss uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				rss = kb * 1024
			}
		}
	}
	return ms.HeapAlloc, rss
}

// BenchmarkDot is the inner loop alone: one 512-d dot product.
func BenchmarkDot(b *testing.B) {
	v := randVecs(rand.New(rand.NewPCG(1, 1)), 2, benchDim)
	var s float32
	for b.Loop() {
		s += dot(v[0], v[1])
	}
	_ = s
}
