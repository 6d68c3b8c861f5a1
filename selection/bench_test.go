package selection_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/benchlake"
	"github.com/framelake/framelake/selection"
)

// BenchmarkUncertainty1MBoxes selects the 1,000 most uncertain of 100,000
// files from the 1,000,000 scored machine boxes of one operation (a
// generated lake of 3,000,000 boxes, a third of them machine boxes with a
// confidence; built once under .bench/), as a selection job end to end:
// reading the boxes, ranking, tagging (issue 24: < 5 s).
func BenchmarkUncertainty1MBoxes(b *testing.B) {
	dir, err := filepath.Abs(filepath.Join("..", ".bench", "select-100k-3m"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Now()
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: 100_000, Boxes: 3_000_000, Labels: 10, Collections: 100}); err != nil {
		b.Fatal(err)
	}
	b.Logf("lake ready in %s (built once, then reused from %s)", time.Since(t0).Round(time.Second), dir)
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	var n int
	if err := a.Lake.DB().R.QueryRowContext(ctx, `SELECT count(*) FROM annotation WHERE operation = 'op'
		AND source = 'machine' AND confidence IS NOT NULL`).Scan(&n); err != nil || n < 990_000 {
		b.Fatalf("%d scored boxes, %v", n, err)
	}
	cpu0 := cpuTime()
	for b.Loop() {
		jobID, err := a.Selection.Select(ctx, selection.Request{Budget: 1000, Strategy: selection.Uncertainty,
			RunID: "op", Measure: selection.Entropy, Tag: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		j, err := a.Jobs.Wait(ctx, jobID)
		if err != nil || j.Status != "completed" {
			b.Fatalf("%+v %v", j, err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/selection")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/selection")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
