package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/web"
)

// BenchmarkMixedLoad is issue 31 item 17's run with the server in this
// process, so go test's -cpuprofile, -blockprofile and -mutexprofile profile
// the server under the load (the load's own CPU is in the CPU profile too:
// focus on the server's handlers). It copies the lake built by
// `framelake-load lake` in FRAMELAKE_LOAD_DATA (skipped without it) to a
// temp folder, since the load writes (uploads, patches, frame edits), and
// runs the mixed load (`framelake-load run`) on the copy at
// FRAMELAKE_LOAD_CLIENTS clients (default 64) for FRAMELAKE_LOAD_DURATION
// (default 30s). It reports the p99 of the worst operation, the process's
// CPU a request, the writer's mean wait and hold a transaction and the load
// average.
//
// FRAMELAKE_LOAD_INFLIGHT compares bounds of requests at work
// (web.ServerOptions.MaxInFlight) side by side on the one copy: e.g.
// "off,8,16" serves the appliance three times, one server per bound, and
// runs FRAMELAKE_LOAD_ROUNDS rounds (default 3) of one phase per server in
// turn, each a round's share of the duration, so every bound meets the same
// machine load; each metric is then reported per bound. Unset, one server
// with the default bound.
//
//	framelake-load lake --data /tmp/lake-20k --files 20000
//	FRAMELAKE_LOAD_DATA=/tmp/lake-20k go test ./cmd/framelake-load -run '^$' -bench MixedLoad -benchtime 1x \
//	    -cpuprofile cpu.out -blockprofile block.out -mutexprofile mutex.out
//	FRAMELAKE_LOAD_DATA=/tmp/lake-20k FRAMELAKE_LOAD_INFLIGHT=off,8 FRAMELAKE_LOAD_DURATION=60s \
//	    go test ./cmd/framelake-load -run '^$' -bench MixedLoad -benchtime 1x
func BenchmarkMixedLoad(b *testing.B) {
	src := os.Getenv("FRAMELAKE_LOAD_DATA")
	if src == "" {
		b.Skip("FRAMELAKE_LOAD_DATA names no lake (build one with framelake-load lake)")
	}
	d := time.Duration(envNumber(b, "FRAMELAKE_LOAD_DURATION", 30*time.Second, time.ParseDuration))
	clients := envNumber(b, "FRAMELAKE_LOAD_CLIENTS", 64, strconv.Atoi)
	bounds, names := inflightBounds(b)
	rounds := envNumber(b, "FRAMELAKE_LOAD_ROUNDS", map[bool]int{true: 3, false: 1}[len(bounds) > 1], strconv.Atoi)
	for b.Loop() {
		data := filepath.Join(b.TempDir(), "lake")
		if out, err := exec.Command("cp", "-a", src, data).CombinedOutput(); err != nil {
			b.Fatalf("copy the lake: %v %s", err, out)
		}
		ctx, cancel := context.WithCancel(context.Background())
		a, err := appliance.Open(ctx, appliance.Config{DataDir: data, Addr: "127.0.0.1:0", JobWorkers: -1,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		k, secret, err := a.Keys.Create(ctx, "load", auth.Write, 0)
		if err != nil {
			b.Fatal(err)
		}
		sides := make([]*side, len(bounds))
		for i, bound := range bounds {
			sides[i] = serveSide(ctx, b, a, bound, k.Key, secret)
		}
		load0 := loadAvg()
		for r := range rounds {
			for _, s := range sides {
				s.run(ctx, a.Lake.DB(), clients, d/time.Duration(rounds), uint64(r+1))
			}
		}
		load := (load0 + loadAvg()) / 2
		cancel()
		for _, s := range sides {
			s.srv.Close()
		}
		a.Close()
		for i, s := range sides {
			s.report(b, names[i], load)
		}
	}
}

// envNumber parses the environment variable name, def when it is unset.
func envNumber[T int | time.Duration](b *testing.B, name string, def T, parse func(string) (T, error)) T {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := parse(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive value", name, v)
	}
	return n
}

// inflightBounds reads FRAMELAKE_LOAD_INFLIGHT: MaxInFlight values, off as
// -1, and the name each metric is reported under.
func inflightBounds(b *testing.B) ([]int, []string) {
	v := os.Getenv("FRAMELAKE_LOAD_INFLIGHT")
	if v == "" {
		return []int{0}, []string{""}
	}
	var bounds []int
	var names []string
	for _, f := range strings.Split(v, ",") {
		n := -1
		if f != "off" {
			var err error
			if n, err = strconv.Atoi(f); err != nil || n < 0 {
				b.Fatalf("FRAMELAKE_LOAD_INFLIGHT: %q is not a bound (a number, 0 for the default, or off)", f)
			}
		}
		bounds = append(bounds, n)
		names = append(names, "@inflight-"+f)
	}
	return bounds, names
}

// side is one server of the appliance, with its bound, and what the load
// measured against it over its phases.
type side struct {
	srv     interface{ Close() error }
	bound   int
	l       *load
	res     *results
	cpu     time.Duration
	w       sqlitedb.WriterStats // sums over the phases
	writers int64
}

func serveSide(ctx context.Context, b *testing.B, a *appliance.Appliance, bound int, key, secret string) *side {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv, cl := web.NewServer(a.Handler(), ln, web.ServerOptions{MaxInFlight: bound})
	go srv.Serve(cl)
	base := "http://" + ln.Addr().String()
	l, err := newLoad(ctx, base, key, secret, 8)
	if err != nil {
		b.Fatal(err)
	}
	// Signed media and thumbnail links name the appliance's own address,
	// which nobody serves here: a request there would wait unanswered.
	for _, urls := range [][]string{l.urls, l.x.thumbs} {
		for i, u := range urls {
			urls[i] = strings.Replace(u, a.BaseURL(), base, 1)
		}
	}
	return &side{srv: srv, bound: web.ServerOptions{MaxInFlight: bound}.EffectiveMaxInFlight(), l: l, res: newResults()}
}

func (s *side) run(ctx context.Context, db *sqlitedb.DB, clients int, d time.Duration, seed uint64) {
	cpu0, w0 := cpuTime(), db.WriterStats()
	res := s.l.phase(ctx, clients, d, seed)
	s.cpu += cpuTime() - cpu0
	w := db.WriterStats()
	s.writers += w.Transactions - w0.Transactions
	s.w.WaitTotalMs += w.WaitTotalMs - w0.WaitTotalMs
	s.w.HoldTotalMs += w.HoldTotalMs - w0.HoldTotalMs
	s.res.merge(res)
	s.res.elapsed += res.elapsed
}

func (s *side) report(b *testing.B, name string, load float64) {
	var out strings.Builder
	s.res.print(&out, fmt.Sprintf("mixed load, at most %d requests at work (0: no bound)", s.bound))
	os.Stdout.WriteString(out.String()) // all of it: a benchmark's log is cut at 10 lines
	n, worst := 0, 0.0
	for _, o := range ops {
		if s.res.errs[o.name] > 0 {
			b.Errorf("%s%s: %d errors", o.name, name, s.res.errs[o.name])
		}
		n += len(s.res.took[o.name])
		worst = max(worst, quantileMs(s.res.took[o.name], 0.99))
	}
	b.ReportMetric(float64(n)/s.res.elapsed.Seconds(), "req/s"+name)
	b.ReportMetric(worst, "worst-p99-ms"+name)
	b.ReportMetric(float64(s.cpu.Microseconds())/1000/float64(max(n, 1)), "cpu-ms/req"+name)
	if s.writers > 0 {
		b.ReportMetric(float64(s.writers), "writes"+name)
		b.ReportMetric(s.w.WaitTotalMs/float64(s.writers), "writer-wait-ms"+name)
		b.ReportMetric(s.w.HoldTotalMs/float64(s.writers), "writer-hold-ms"+name)
	}
	b.ReportMetric(load, "load")
}
