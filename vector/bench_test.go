package vector

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
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

// BenchmarkVsFAISS measures this package against FAISS IndexFlatIP and numpy
// brute force on the same random 512-d vectors and queries: insert rate into
// sqlite-vec, load time and memory of the in-memory copy, top-10 cosine query
// median for the in-memory and the sqlite-vec path, and recall of both
// against FAISS. The in-memory path, numpy and FAISS are timed in turns,
// ROUNDS rounds (default 3) of 100 queries each, in one run, so a shared
// machine's load falls on all three alike; the ratio to numpy is the median
// of the rounds' ratios. Run:
//
//	go test ./vector -run '^$' -bench VsFAISS -benchtime 1x -timeout 60m
//
// 1,000,000 vectors only with FRAMELAKE_BENCH_1M=1. Needs Debian's
// python3-faiss and python3-numpy under /usr/bin/python3, and fails without.
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
	ref := startRef(b, dir, vecs, queries) // first: it needs the most memory while Go's is low
	faiss := ref.setup

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

	memMed, numpyMed, faissMed, ratio, memRecall := benchRounds(b, s, ref, queries)
	vecOnly := openStore(b, db, Options{CacheBytes: -1})
	vq := max(3, min(benchQueries, 20_000_000/n)) // sqlite-vec takes ~1 s per query at 1M
	vecMed, vecRecall := benchQueriesOn(b, vecOnly, queries[:vq], vq, faiss.IDs)

	b.ReportMetric(insertRate, "insert/s")
	b.ReportMetric(insertCPU, "insert/cpu-s")
	b.ReportMetric(faiss.AddPerS, "faiss-add/s")
	b.ReportMetric(memMed, "mem-ms/query")
	b.ReportMetric(vecMed, "sqlitevec-ms/query")
	b.ReportMetric(faissMed, "faiss-ms/query")
	b.ReportMetric(numpyMed, "numpy-ms/query")
	b.ReportMetric(ratio, "mem/numpy")
	b.ReportMetric(memRecall, "mem-recall")
	b.ReportMetric(vecRecall, "sqlitevec-recall")
	b.ReportMetric(float64(heap1-heap0)/1e6, "copy-heap-MB")
	b.ReportMetric(float64(rss1)/1e6, "rss-MB")
	b.ReportMetric(faiss.IndexMB, "faiss-index-MB")
	b.Logf("n=%d dim=%d GOMAXPROCS=%d faiss %s threads=%d numpy BLAS %s", n, benchDim, runtime.GOMAXPROCS(0), faiss.Version, faiss.Threads, faiss.BLAS)
	b.Logf("insert %.0f vectors/s, %.0f per CPU-second (FAISS add %.0f/s); copy load %v, heap +%.0f MB, RSS %.0f→%.0f MB (FAISS index %.0f MB)",
		insertRate, insertCPU, faiss.AddPerS, load.Round(time.Millisecond), float64(heap1-heap0)/1e6, float64(rss0)/1e6, float64(rss1)/1e6, faiss.IndexMB)
	b.Logf("top-%d cosine, median of the rounds' medians: in-memory %.2f ms, numpy %.2f ms (in-memory/numpy %.2fx), FAISS %.2f ms (batched %.2f ms/query); sqlite-vec %.2f ms (median of %d); recall vs FAISS %.4f / %.4f",
		benchK, memMed, numpyMed, ratio, faissMed, faiss.BatchMsPerQuery, vecMed, vq, memRecall, vecRecall)
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

// benchRounds times the in-memory path, numpy and FAISS in turns and returns
// the medians over rounds of each one's median, the median of the rounds'
// in-memory/numpy ratios, and the in-memory path's recall.
func benchRounds(b *testing.B, s *Store, ref *refProc, queries [][]float32) (mem, numpy, faiss, ratio, recall float64) {
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	var mems, numpys, faisses, ratios []float64
	for r := range rounds {
		m, rec := benchQueriesOn(b, s, queries, benchQueries, ref.setup.IDs)
		np, fs := ref.round(b, "numpy"), ref.round(b, "faiss")
		b.Logf("round %d: in-memory %.2f ms, numpy %.2f ms, FAISS %.2f ms a query (medians of %d): in-memory/numpy %.2fx",
			r+1, m, np, fs, benchQueries, m/np)
		mems, numpys, faisses, ratios = append(mems, m), append(numpys, np), append(faisses, fs), append(ratios, m/np)
		recall = rec
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	return med(mems), med(numpys), med(faisses), med(ratios), recall
}

type faissResult struct {
	Version         string    `json:"faiss_version"`
	Threads         int       `json:"threads"`
	AddPerS         float64   `json:"add_per_s"`
	QueryMedianMs   float64   `json:"query_median_ms"`
	BatchMsPerQuery float64   `json:"batch_ms_per_query"`
	IndexMB         float64   `json:"index_mb"`
	IDs             [][]int64 `json:"ids"`
	BLAS            string    `json:"blas"`
}

// refProc is testdata/faiss_bench.py, running, with FAISS's index built; it
// times a round of queries when asked.
type refProc struct {
	setup *faissResult
	in    io.WriteCloser
	out   *bufio.Scanner
}

func (p *refProc) round(b *testing.B, kind string) float64 {
	if _, err := io.WriteString(p.in, kind+"\n"); err != nil {
		b.Fatal(err)
	}
	if !p.out.Scan() {
		b.Fatalf("reference benchmark ended: %v", p.out.Err())
	}
	var res struct {
		MedianMs float64 `json:"median_ms"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &res); err != nil {
		b.Fatalf("reference output: %v", err)
	}
	return res.MedianMs
}

// startRef writes the vectors and queries for testdata/faiss_bench.py and
// starts it with Debian's interpreter, which has python3-faiss and numpy.
func startRef(b *testing.B, dir string, vecs, queries [][]float32) *refProc {
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
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<26)
	if !out.Scan() {
		cmd.Wait()
		b.Fatalf("FAISS benchmark failed (is Debian's python3-faiss installed? apt-get install python3-faiss python3-numpy): %v\n%s", out.Err(), stderr.String())
	}
	var res faissResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		b.Fatalf("FAISS output: %v", err)
	}
	os.Remove(path)
	return &refProc{setup: &res, in: in, out: out}
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

// BenchmarkScan100k is the in-memory scan alone (no database) over 100,000
// random 512-d unit vectors, top 10, with both workers: the two passes
// against scoring every row.
func BenchmarkScan100k(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	x := quantMatrix(r, benchDim, true, randVecs(r, 100_000, benchDim))
	q := randVecs(r, 1, benchDim)[0]
	normalize(q)
	workers := runtime.GOMAXPROCS(0)
	b.Run("two-pass", func(b *testing.B) {
		for b.Loop() {
			x.scanQuant(q, benchK, nil, 0, workers)
		}
	})
	b.Run("exact", func(b *testing.B) {
		for b.Loop() {
			x.scanExact(q, benchK, nil, 0, workers)
		}
	})
}
