package evaluate_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/lake/benchlake"
)

// The figure: 100,000 images with 1,000,000 human and 2,000,000
// predicted boxes (10 and 20 a file: each human box found again with a
// jitter, and 10 spurious boxes), 10 labels.
const (
	benchFiles    = 100_000
	benchHuman    = 10
	benchSpurious = 10
	benchRun      = "run_bench"
)

// BenchmarkEvaluate1M runs a whole evaluation job (stream, match, write 3M
// outcomes and 100k file counts, figures) over the generated lake, kept in
// $FRAMELAKE_EVAL_BENCH_DIR (default a folder in the temp dir) between runs.
// It reports the peak RSS of the evaluation alone (VmHWM reset before it).
//
//	go test ./evaluate -run '^$' -bench Evaluate1M -benchtime 1x -cpu 2
func BenchmarkEvaluate1M(b *testing.B) {
	a := openBenchLake(b, "FRAMELAKE_EVAL_BENCH_DIR", "framelake-eval-bench-v1", ensureBoxes)
	evaluateEach(b, a, evaluate.Request{PredRunID: benchRun})
}

// openBenchLake opens the benchmark lake in $env (default the temp dir's
// folder name), made once by ensure and kept between runs, with what an
// interrupted run left cleared.
func openBenchLake(b *testing.B, env, name string, ensure func(context.Context, string) error) *appliance.Appliance {
	dir := os.Getenv(env)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), name)
	}
	ctx := context.Background()
	if err := ensure(ctx, dir); err != nil {
		b.Fatal(err)
	}
	if err := clearEvaluations(ctx, dir); err != nil {
		b.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	return a
}

// evaluateEach runs req as a whole evaluation job once a benchmark round,
// under a new key each round, and reports its CPU time and the peak RSS of
// the evaluation alone (VmHWM reset before it).
func evaluateEach(b *testing.B, a *appliance.Appliance, req evaluate.Request) {
	ctx := context.Background()
	n := 0
	for b.Loop() {
		req.Key = fmt.Sprintf("bench%d", n)
		n++
		b.StopTimer()
		a.Evaluate.Delete(ctx, req.Key)                       // a key left by an interrupted run
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset the peak RSS
		b.StartTimer()
		t0, cpu0 := time.Now(), cpuTime()
		jobID, err := a.Evaluate.Start(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		j, err := a.Jobs.Wait(ctx, jobID)
		if err != nil || j.Status != "completed" {
			b.Fatalf("%+v %v", j, err)
		}
		b.StopTimer()
		res, err := a.Evaluate.Get(ctx, req.Key)
		if err != nil {
			b.Fatal(err)
		}
		cpu := cpuTime() - cpu0
		b.Logf("%s (%s): %v wall, %v CPU (user+sys), peak RSS %d MiB, mAP %.3f AP50 %.3f, label00 %+v", req.Key,
			res.IoUType, time.Since(t0).Round(time.Millisecond), cpu.Round(time.Millisecond), peakRSS()>>20, res.MAP,
			res.AP50, res.Labels["label00"])
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(peakRSS()>>20), "peakRSS-MiB")
		a.Evaluate.Delete(ctx, req.Key)
		b.StartTimer()
	}
}

// clearEvaluations removes what an interrupted run left: its job is
// cancelled before a queue with workers could resume it, then its evaluation
// deleted.
func clearEvaluations(ctx context.Context, dir string) error {
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer a.Close()
	list, err := a.Evaluate.List(ctx)
	if err != nil {
		return err
	}
	for _, ev := range list {
		a.Jobs.Cancel(ctx, ev.JobID)
	}
	if err := a.Jobs.Settle(ctx); err != nil {
		return err
	}
	for _, ev := range list {
		if err := a.Evaluate.Delete(ctx, ev.Key); err != nil {
			return err
		}
	}
	return nil
}

// cpuTime is the process's user and system CPU time so far: on a shared
// machine the wall time says more about the neighbours than about us.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS reads VmHWM in bytes.
func peakRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// ensureBoxes makes the lake's files (benchlake) and then the boxes.
func ensureBoxes(ctx context.Context, dir string) error {
	done := filepath.Join(dir, "boxes-complete")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	os.RemoveAll(dir)
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: benchFiles, Labels: 10, Collections: 1}); err != nil {
		return err
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer a.Close()
	r := rand.New(rand.NewPCG(3, 4))
	db := a.Lake.DB().W
	for lo := 0; lo < benchFiles; lo += 5000 {
		if err := insertBoxes(ctx, db, r, lo, min(benchFiles, lo+5000)); err != nil {
			return err
		}
	}
	return os.WriteFile(done, nil, 0o644)
}

func insertBoxes(ctx context.Context, db *sql.DB, r *rand.Rand, lo, hi int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence,
		source, operation, created_at, updated_at) VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)`)
	if err != nil {
		return err
	}
	defer st.Close()
	n := lo * (benchHuman*2 + benchSpurious)
	add := func(file int, label string, x, y, w, h float64, conf any, source, op string) error {
		n++
		_, err := st.ExecContext(ctx, fmt.Sprintf("ann_b%010d", n), file+1, label, x, y, w, h, conf, source, op)
		return err
	}
	for f := lo; f < hi; f++ {
		for range benchHuman {
			label := fmt.Sprintf("label%02d", r.IntN(10))
			x, y, w, h := r.Float64()*540, r.Float64()*380, 8+r.Float64()*150, 8+r.Float64()*150
			if err := add(f, label, x, y, w, h, nil, "human", "import:bench"); err != nil {
				return err
			}
			if r.IntN(10) == 0 { // now and then the model calls it something else
				label = fmt.Sprintf("label%02d", r.IntN(10))
			}
			j := func(v float64) float64 { return v + (r.Float64()-0.5)*v*0.2 }
			if err := add(f, label, j(x), j(y), j(w), j(h), r.Float64(), "machine", benchRun); err != nil {
				return err
			}
		}
		for range benchSpurious {
			if err := add(f, fmt.Sprintf("label%02d", r.IntN(10)), r.Float64()*540, r.Float64()*380,
				8+r.Float64()*150, 8+r.Float64()*150, r.Float64()*0.6, "machine", benchRun); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
