package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
)

// BenchmarkMixedLoad is issue 31 item 17's run with the server in this
// process, so go test's -cpuprofile, -blockprofile and -mutexprofile profile
// the server under the load (the load's own CPU is in the CPU profile too:
// focus on the server's handlers). It runs the mixed load (`framelake-load
// run`) at FRAMELAKE_LOAD_CLIENTS clients (default 64) for
// FRAMELAKE_LOAD_DURATION (default 30s) against the lake built by
// `framelake-load lake` in FRAMELAKE_LOAD_DATA (skipped without it), and
// reports the p99 of the worst operation, the process's CPU a request, the
// writer's mean wait and hold a transaction and the load average. The lake is
// written to (uploads, patches, frame edits): load a copy.
//
//	framelake-load lake --data /tmp/lake-20k --files 20000
//	FRAMELAKE_LOAD_DATA=/tmp/lake-20k go test ./cmd/framelake-load -run '^$' -bench MixedLoad -benchtime 1x \
//	    -cpuprofile cpu.out -blockprofile block.out -mutexprofile mutex.out
func BenchmarkMixedLoad(b *testing.B) {
	data := os.Getenv("FRAMELAKE_LOAD_DATA")
	if data == "" {
		b.Skip("FRAMELAKE_LOAD_DATA names no lake (build one with framelake-load lake)")
	}
	d, clients := 30*time.Second, 64
	if v := os.Getenv("FRAMELAKE_LOAD_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			b.Fatal(err)
		}
	}
	if v := os.Getenv("FRAMELAKE_LOAD_CLIENTS"); v != "" {
		var err error
		if clients, err = strconv.Atoi(v); err != nil || clients < 1 {
			b.Fatalf("FRAMELAKE_LOAD_CLIENTS=%q: want a positive number", v)
		}
	}
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		a, err := appliance.Open(ctx, appliance.Config{DataDir: data, Addr: "127.0.0.1:0", JobWorkers: -1,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx) }()
		k, secret, err := a.Keys.Create(ctx, "load", auth.Write, 0)
		if err != nil {
			b.Fatal(err)
		}
		l, err := newLoad(ctx, a.BaseURL(), k.Key, secret, 8)
		if err != nil {
			b.Fatal(err)
		}
		load0, cpu0, w0 := loadAvg(), cpuTime(), a.Lake.DB().WriterStats()
		res := l.phase(ctx, clients, d, 1)
		cpu, w := cpuTime()-cpu0, a.Lake.DB().WriterStats()
		cancel()
		<-done
		a.Close()
		var out strings.Builder
		res.print(&out, "mixed load")
		os.Stdout.WriteString(out.String()) // all of it: a benchmark's log is cut at 10 lines
		n, worst := 0, 0.0
		for _, o := range ops {
			if res.errs[o.name] > 0 {
				b.Errorf("%s: %d errors", o.name, res.errs[o.name])
			}
			n += len(res.took[o.name])
			worst = max(worst, quantileMs(res.took[o.name], 0.99))
		}
		b.ReportMetric(float64(n)/res.elapsed.Seconds(), "req/s")
		b.ReportMetric(worst, "worst-p99-ms")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(max(n, 1)), "cpu-ms/req")
		if tx := w.Transactions - w0.Transactions; tx > 0 {
			b.ReportMetric(float64(tx), "writes")
			b.ReportMetric((w.WaitTotalMs-w0.WaitTotalMs)/float64(tx), "writer-wait-ms")
			b.ReportMetric((w.HoldTotalMs-w0.HoldTotalMs)/float64(tx), "writer-hold-ms")
		}
		b.ReportMetric((load0+loadAvg())/2, "load")
	}
}
