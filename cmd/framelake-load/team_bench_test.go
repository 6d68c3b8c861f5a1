package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
)

// BenchmarkTeamSaves is issue 35's figure in one command: a server on
// loopback, 20 annotators signed in as people (an account, a job and a
// session each) saving an edit of their frames every 2 s (one in ten on a
// stale version, a 409), a reviewer paging the task, its frames and the
// project's history and a curator querying, every 500 ms each. It reports a
// save's p50 and p99 (ms, at the client), the 409's p50 beside them (the same
// checks without a write: a reference in the same run), the process's CPU
// a request (server and load together, both run here), the writer's mean
// wait and hold a transaction and its hold's p99, and the load average; any
// error fails it.
//
//	go test ./cmd/framelake-load -run '^$' -bench TeamSaves -benchtime 1x   # FRAMELAKE_TEAM_DURATION=60s by default
func BenchmarkTeamSaves(b *testing.B) {
	d := 60 * time.Second
	if v := os.Getenv("FRAMELAKE_TEAM_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		a, err := appliance.Open(ctx, appliance.Config{DataDir: b.TempDir(), Addr: "127.0.0.1:0", JobWorkers: -1,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx) }()
		k, secret, err := a.Keys.Create(ctx, "load", auth.Admin, 0)
		if err != nil {
			b.Fatal(err)
		}
		var cpu0 time.Duration
		w0 := a.Lake.DB().WriterStats()
		o := teamOptions{annotators: 20, boxes: 20, every: 2 * time.Second, page: 500 * time.Millisecond, duration: d,
			people: true, started: func() { cpu0, w0 = cpuTime(), a.Lake.DB().WriterStats() }}
		load0 := loadAvg()
		res, err := runTeam(ctx, a.BaseURL(), k.Key, secret, o)
		cpu, w := cpuTime()-cpu0, a.Lake.DB().WriterStats()
		cancel()
		<-done
		a.Close()
		if err != nil {
			b.Fatal(err)
		}
		var out strings.Builder
		res.printRows(&out, "team", teamOps)
		n := 0
		for _, name := range teamOps {
			if res.errs[name] > 0 {
				b.Fatalf("%s: %d errors\n%s", name, res.errs[name], out.String())
			}
			n += len(res.took[name])
		}
		b.Log(out.String())
		b.ReportMetric(quantileMs(res.took[opEdit], 0.5), "save-p50-ms")
		b.ReportMetric(quantileMs(res.took[opEdit], 0.99), "save-p99-ms")
		b.ReportMetric(quantileMs(res.took[opConflict], 0.5), "409-p50-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/req")
		if tx := w.Transactions - w0.Transactions; tx > 0 {
			b.ReportMetric((w.WaitTotalMs-w0.WaitTotalMs)/float64(tx), "writer-wait-ms")
			b.ReportMetric((w.HoldTotalMs-w0.HoldTotalMs)/float64(tx), "writer-hold-ms")
		}
		b.ReportMetric(w.HoldP99Ms, "writer-hold-p99-ms") // since the server started, its setup's transactions too
		b.ReportMetric((load0+loadAvg())/2, "load")
	}
}

// quantileMs is the p quantile of ds in milliseconds, as printRows reads it.
func quantileMs(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Sorted(slices.Values(ds))
	return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg is the machine's one-minute load average.
func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}
