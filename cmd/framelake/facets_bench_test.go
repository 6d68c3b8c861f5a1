package main_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/benchlake"
)

// BenchmarkFacets1M times what the web app's sidebar and query bar ask of
// the lake (label, tag and collection counts, histograms, completion lists)
// on the 1,000,000-file, 3,000,000-box lake of BenchmarkLakeQueries1M, in
// process, each the median of 7 runs (FRAMELAKE_BENCH_RUNS) after a warm-up.
// FRAMELAKE_BENCH_FILES builds and uses a smaller lake of that many files
// (three boxes each) instead, in its own folder.
func BenchmarkFacets1M(b *testing.B) {
	spec := benchlake.Spec{Files: 1_000_000, Boxes: 3_000_000, Labels: 50, Collections: 10_000}
	dir := benchDir(b, "lake-1m")
	if n, _ := strconv.Atoi(os.Getenv("FRAMELAKE_BENCH_FILES")); n > 0 {
		spec = benchlake.Spec{Files: n, Boxes: 3 * n, Labels: 50, Collections: n / 100}
		dir = benchDir(b, "lake-"+strconv.Itoa(n))
	}
	ctx := context.Background()
	if err := benchlake.Ensure(ctx, dir, spec); err != nil {
		b.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	l := a.Lake
	// A tagged tenth of the lake, so tag counts have rows to count.
	if _, err := l.TagSelection(ctx, lake.Selection{Query: "createdAt < 2025-03-15"}, []string{"early"}, nil); err != nil {
		b.Fatal(err)
	}
	sets := func(set, q string) func() error {
		return func() error { _, err := l.SetCounts(ctx, lake.Selection{Query: q}, set, 20); return err }
	}
	hist := func(field, q string) func() error {
		return func() error { _, err := l.Histogram(ctx, lake.Selection{Query: q}, field, 24); return err }
	}
	complete := func(vocab, prefix string) func() error {
		return func() error { _, err := l.Complete(ctx, vocab, prefix, 12); return err }
	}
	sources := func(q string) func() error {
		return func() error {
			_, _, err := l.ClauseCounts(ctx, lake.Selection{Query: q}, []string{"annotation.source = human",
				"annotation.source = machine", "annotation.count = 0"})
			return err
		}
	}
	cases := []struct {
		name string
		fn   func() error
	}{
		{"labels", sets("annotation.label", "")},
		{"labels-of-dog", sets("annotation.label", "annotation.label = dog")},
		{"labels-of-a-collection", sets("annotation.label", "collection = collection-00042")},
		{"labels-of-2026", sets("annotation.label", `createdAt >= "2026-01-01"`)},
		{"tags", sets("Tags", "")},
		{"collections", sets("collection", "")},
		{"collections-of-dog", sets("collection", "annotation.label = dog")},
		{"hist-width", hist("width", "")},
		{"hist-fileSize", hist("fileSize", "")},
		{"hist-createdAt", hist("createdAt", "")},
		{"hist-confidence", hist("annotation.confidence", "")},
		{"hist-fileSize-of-dog", hist("fileSize", "annotation.label = dog")},
		{"hist-width-of-dog", hist("width", "annotation.label = dog")},
		{"hist-confidence-of-dog", hist("annotation.confidence", "annotation.label = dog")},
		{"sources", sources("")},
		{"sources-of-dog", sources("annotation.label = dog")},
		{"sources-of-2026", sources(`createdAt >= "2026-01-01"`)},
		// What the web app asks of the lake at a click on a label (the
		// sidebar's counts and histogram, the grid's count and first page, at
		// once), each run a query of its own so no run reuses another's count.
		{"click-label", click(l, "annotation.label = label07 AND fileSize >= ")},
		{"click-machine", click(l, "annotation.source = machine AND fileSize >= ")},
		{"complete-labels", complete("annotation.label", "label1")},
		{"complete-collections", complete("collection", "collection-0004")},
	}
	runs := 7
	if n, _ := strconv.Atoi(os.Getenv("FRAMELAKE_BENCH_RUNS")); n > 0 {
		runs = n
	}
	for b.Loop() {
		for _, c := range cases {
			wall, cpu := medianCPU(b, runs, c.fn)
			b.ReportMetric(ms(wall), c.name+"-ms")
			b.ReportMetric(ms(cpu), c.name+"-cpu-ms")
		}
	}
	b.ReportMetric(loadAvg(), "load")
	for _, q := range []string{"", "annotation.label = dog", "collection = collection-00042", `createdAt >= "2026-01-01"`} {
		r, err := l.SetCounts(ctx, lake.Selection{Query: q}, "annotation.label", 20)
		b.Logf("labels of %q: estimated=%v sampled=%d top %v (err %v)", q, r.Estimated, r.Sampled, r.Values[:min(3, len(r.Values))], err)
	}
}

// click asks the lake at once for what the web app asks at a click that
// makes the query prefix+N (N counting up from 0 at each call, every file
// being larger): the sidebar's label counts (the query without its label
// term: every file), tag, collection and source counts, type counts, the
// width histogram, the grid's count and first page of 250.
func click(l *lake.Lake, prefix string) func() error {
	n := 0
	return func() error {
		q := prefix + strconv.Itoa(n)
		n++
		sel := lake.Selection{Query: q}
		ctx := context.Background()
		var g group
		g.Go(func() error { _, err := l.SetCounts(ctx, lake.Selection{}, "annotation.label", 10); return err })
		for _, set := range []string{"Tags", "collection"} {
			g.Go(func() error { _, err := l.SetCounts(ctx, sel, set, 10); return err })
		}
		g.Go(func() error {
			_, _, err := l.ClauseCounts(ctx, sel, []string{"annotation.source = human", "annotation.source = machine",
				"annotation.count = 0"})
			return err
		})
		g.Go(func() error { _, err := l.Histogram(ctx, sel, "width", 24); return err })
		for range 2 { // the grid's count, and the sidebar's count of its type
			g.Go(func() error { _, err := l.Count(ctx, sel); return err })
		}
		g.Go(func() error { _, err := l.ListFiles(ctx, sel, 0, 250, lake.Sort{}); return err })
		return g.Wait()
	}
}

// group runs functions at once and keeps the first error.
type group struct {
	wg   sync.WaitGroup
	once sync.Once
	err  error
}

func (g *group) Go(fn func() error) {
	g.wg.Go(func() {
		if err := fn(); err != nil {
			g.once.Do(func() { g.err = err })
		}
	})
}

func (g *group) Wait() error { g.wg.Wait(); return g.err }

// medianCPU times fn n times after a warm-up and returns the median wall
// time and the median CPU time of the process (user and system): on a
// machine whose cores are shared, CPU time is the work a call costs, wall
// time what a caller waited.
func medianCPU(b *testing.B, n int, fn func() error) (wall, cpu time.Duration) {
	if err := fn(); err != nil {
		b.Fatal(err)
	}
	used := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	ws, cs := make([]time.Duration, n), make([]time.Duration, n)
	for i := range ws {
		t, c := time.Now(), used()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		ws[i], cs[i] = time.Since(t), used()-c
	}
	slices.Sort(ws)
	slices.Sort(cs)
	return ws[n/2], cs[n/2]
}
