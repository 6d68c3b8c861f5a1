package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/lake/benchlake"
)

// BenchmarkWebApp times the web app in headless Chromium against the real
// binary on a generated lake (FRAMELAKE_BENCH_UI_FILES files, default
// 1,000,000, with three boxes each over 50 labels and real JPEGs shared by
// the files): the first grid page with its thumbnails loaded, a jump to
// item 900,000, a facet click and a typed query until the count changes
// (web/ui/test/bench.mjs), medians of five rounds, each with the CPU time
// the server and Chromium spent on it (<figure>ServerCpu-ms, BrowserCpu-ms), the server's peak
// RSS (and at the end its anonymous and file-backed parts) and the one-minute load average
// before and after.
func BenchmarkWebApp(b *testing.B) {
	files := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("FRAMELAKE_BENCH_UI_FILES")); err == nil && n > 0 {
		files = n
	}
	node, ui := needBrowser(b)
	dir := benchDir(b, fmt.Sprintf("ui-lake-%d", files))
	ctx := context.Background()
	t0 := time.Now()
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: files, Boxes: 3 * files, Labels: 50, Collections: 100, Media: true}); err != nil {
		b.Fatal(err)
	}
	b.Logf("lake ready in %s (built once, then reused from %s)", time.Since(t0).Round(time.Second), dir)
	// The figures are those of a server whose database is in the page cache,
	// as after its first minutes of use: read once here, it is, whatever ran
	// before. Evicted by 10 GB of other writes, the 1.3 GB database gave a
	// label click of 0.5-1.2 s in every round.
	if err := readThrough(filepath.Join(dir, "framelake.db")); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(bin, "keys", "create", "--data", dir, "--name", "bench", "--role", "read", "--json").Output()
	var key map[string]string
	if err != nil || json.Unmarshal(out, &key) != nil {
		b.Fatalf("keys create: %v %s", err, out)
	}
	for b.Loop() {
		addr := freeAddr(b)
		srv := exec.Command(bin, "serve", "--data", dir, "--addr", addr, "--log-format", "json")
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		base := "http://" + addr
		for i := 0; i < 600 && client.New(base, "", "").Health(ctx) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		cmd := exec.Command(node, "test/bench.mjs")
		cmd.Dir = ui
		cmd.Env = append(os.Environ(), "BASE="+base, "KEY="+key["key"], "SECRET="+key["secret"],
			"JUMP="+strconv.Itoa(files*9/10), "SERVER_PID="+strconv.Itoa(srv.Process.Pid))
		load0 := loadAvg()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		res, err := cmd.Output()
		rss := peakRSS(b, srv.Process.Pid)
		// The peak is mostly SQLite's memory-mapped database (up to
		// sqlitedb.Options.MmapSize per connection, file pages the kernel
		// may drop), not the heap: the end's split says which.
		anon, file := procKB(b, srv.Process.Pid, "RssAnon"), procKB(b, srv.Process.Pid, "RssFile")
		srv.Process.Kill()
		srv.Wait()
		if err != nil {
			b.Fatalf("bench.mjs: %v\n%s%s", err, res, stderr.String())
		}
		var figures map[string][]float64
		if err := json.Unmarshal(res, &figures); err != nil {
			b.Fatalf("bench.mjs printed %q: %v", res, err)
		}
		b.Logf("rounds (ms): %s", res)
		b.ReportMetric(load0, "load-before")
		b.ReportMetric(loadAvg(), "load-after")
		for name, ms := range figures {
			slices.Sort(ms)
			b.ReportMetric(ms[len(ms)/2], name+"-ms")
		}
		b.ReportMetric(float64(rss)/1024, "server-peak-RSS-MB")
		b.ReportMetric(float64(anon)/1024, "server-end-RSS-anon-MB")
		b.ReportMetric(float64(file)/1024, "server-end-RSS-file-MB")
	}
}

// readThrough reads a file to its end, which leaves it in the page cache.
func readThrough(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}
