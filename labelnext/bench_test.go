package labelnext_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/labelnext"
	"github.com/framelake/framelake/lake/benchlake"
)

// BenchmarkUncertainty1MBoxes selects the 1,000 most uncertain of 100,000
// files from 1,000,000 scored machine boxes of one run (10 a file, spread
// over the lake), as a selection job end to end: reading the boxes,
// ranking, tagging (issue 24: < 5 s). The lake is generated once under
// .bench/.
func BenchmarkUncertainty1MBoxes(b *testing.B) {
	dir, err := filepath.Abs(filepath.Join("..", ".bench", "select-100k"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: 100_000, Labels: 1, Collections: 1}); err != nil {
		b.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	db := a.Lake.DB()
	var n int
	if err := db.R.QueryRowContext(ctx, `SELECT count(*) FROM annotation WHERE operation = 'run_bench'`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n == 0 {
		t0 := time.Now()
		_, err := db.W.ExecContext(ctx, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence,
			source, operation, created_at, updated_at)
			WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999999)
			SELECT printf('ann_b%09d', i), 1 + (i * 7919) % 100000, 0, 'car', 10, 20, 30, 40,
				((i * 2654435761) % 1000003) / 1000003.0, 'machine', 'run_bench', 0, 0 FROM n`)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("1,000,000 boxes written in %s", time.Since(t0).Round(time.Second))
	}
	cpu0 := cpuTime()
	for b.Loop() {
		jobID, err := a.LabelNext.Select(ctx, labelnext.Request{Budget: 1000, Strategy: labelnext.Uncertainty,
			RunID: "run_bench", Measure: labelnext.Entropy, Tag: "bench"})
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
