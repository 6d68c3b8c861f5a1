package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/tests3"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake/benchlake"
)

// BenchmarkReplicaLag imports the 4,000 JPEGs of about 163 KB of
// BenchmarkImportBucket into a lake whose media and replica are buckets of
// a versitygw on loopback, while a probe commits a small write (an API key)
// every 50 ms and times how long until the replica holds it. Litestream
// numbers its syncs of the WAL; a commit made while local sync N is the
// newest is in sync N+1, or in N+2 when N+1 was reading the WAL already:
// the lag reported is until N+2 is uploaded, an upper bound (lower-*: until
// N+1, a lower bound).
func BenchmarkReplicaLag(b *testing.B) {
	const n = 4000
	media := benchDir(b, "jpeg-163k-4k")
	if entries, _ := os.ReadDir(media); len(entries) != n {
		os.RemoveAll(media)
		if err := writeNumberedJPEGs(media, n, 1400, 1050); err != nil {
			b.Fatal(err)
		}
	}
	srv := tests3.Shared(b)
	srv.SetEnv(b)
	// idle: the probe alone for 20 s, the floor of the lag on this machine.
	for _, importing := range []bool{true, false} {
		b.Run(map[bool]string{true: "import", false: "idle"}[importing], func(b *testing.B) {
			for b.Loop() {
				replicaLag(b, srv, media, importing)
			}
		})
	}
}

func replicaLag(b *testing.B, srv *tests3.Server, media string, importing bool) {
	ctx := context.Background()
	a, err := appliance.Open(ctx, appliance.Config{DataDir: b.TempDir(), JobWorkers: -1,
		Media: srv.Bucket(b, "media"), Replica: srv.Bucket(b, "db")})
	if err != nil {
		b.Fatal(err)
	}
	load0, cpu0, start := loadAvg(), cpuTime(), time.Now()
	done := make(chan struct{})
	var sum labelimport.Summary
	var importErr error
	go func() {
		defer close(done)
		if !importing {
			time.Sleep(20 * time.Second)
			return
		}
		sum, importErr = labelimport.Run(ctx, media, labelimport.Options{Collection: "bench"},
			labelimport.LakeSink(a.Lake, a.Annotate, "bench"), a.Annotate)
	}()
	lower, upper := probeLag(b, a, done)
	secs, cpu := time.Since(start).Seconds(), cpuTime()-cpu0
	if importing && (importErr != nil || sum.Stored == 0) {
		b.Fatalf("import: stored %d: %v", sum.Stored, importErr)
	}
	if err := a.Close(); err != nil {
		b.Fatal(err)
	}
	pct := func(lags []time.Duration, p float64) float64 {
		slices.Sort(lags)
		return float64(lags[int(p*float64(len(lags)-1))].Milliseconds())
	}
	b.ReportMetric(pct(upper, 0.5), "lag-p50-ms")
	b.ReportMetric(pct(upper, 0.99), "lag-p99-ms")
	b.ReportMetric(pct(upper, 1), "lag-max-ms")
	b.ReportMetric(pct(lower, 0.5), "lower-p50-ms")
	b.ReportMetric(pct(lower, 0.99), "lower-p99-ms")
	b.ReportMetric(float64(len(upper)), "probes")
	b.ReportMetric(float64(sum.Stored)/secs, "files/s")
	b.ReportMetric(cpu.Seconds(), "cpu-s")
	b.ReportMetric((load0+loadAvg())/2, "load-avg")
}

// probeLag commits a write every 50 ms until done closes and returns, for
// each, the time until the replica held sync N+1 and N+2 (see
// BenchmarkReplicaLag). After done it goes on committing, unrecorded, so
// the last probes' N+2 comes.
func probeLag(b *testing.B, a *appliance.Appliance, done <-chan struct{}) (lower, upper []time.Duration) {
	type probe struct {
		at    time.Time
		local uint64
	}
	var mu sync.Mutex
	var pending []probe // waiting for N+2
	var early []probe   // waiting for N+1
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			_, up := a.ReplicaPositions()
			now := time.Now()
			mu.Lock()
			for len(early) > 0 && early[0].local+1 <= up {
				lower = append(lower, now.Sub(early[0].at))
				early = early[1:]
			}
			for len(pending) > 0 && pending[0].local+2 <= up {
				upper = append(upper, now.Sub(pending[0].at))
				pending = pending[1:]
			}
			left := len(pending)
			mu.Unlock()
			select {
			case <-done:
				if left == 0 {
					return
				}
			default:
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	for i := 0; ; i++ {
		time.Sleep(50 * time.Millisecond)
		record := true
		select {
		case <-watched:
			return lower, upper
		case <-done:
			record = false
		default:
		}
		if _, _, err := a.Keys.Create(context.Background(), fmt.Sprintf("probe-%d", i), auth.Read, 0); err != nil {
			b.Fatal(err)
		}
		if record {
			at := time.Now()
			local, _ := a.ReplicaPositions()
			mu.Lock()
			pending = append(pending, probe{at, local})
			early = append(early, probe{at, local})
			mu.Unlock()
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplicaRestore100k replicates a generated lake of 100,000 files
// and 300,000 boxes to a bucket of a versitygw on loopback and times
// `framelake restore --from` into a new folder with the real binary.
func BenchmarkReplicaRestore100k(b *testing.B) {
	ctx := context.Background()
	lake := benchDir(b, "lake-100k-replica")
	if err := benchlake.Ensure(ctx, lake, benchlake.Spec{Files: 100_000, Boxes: 300_000, Labels: 10, Collections: 10}); err != nil {
		b.Fatal(err)
	}
	srv := tests3.Shared(b)
	srv.SetEnv(b)
	url := srv.Bucket(b, "db")
	// Replicate a copy: Litestream leaves its state beside the database.
	data := b.TempDir()
	if out, err := exec.Command("cp", "-a", lake+"/.", data).CombinedOutput(); err != nil {
		b.Fatalf("cp: %v %s", err, out)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: data, JobWorkers: -1, Replica: url})
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Close(); err != nil { // the close uploads what is left
		b.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(data, "framelake.db"))
	for b.Loop() {
		out := filepath.Join(b.TempDir(), "restored")
		cmd := exec.Command(bin, "restore", "--from", url, "--data", out, "--json")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		load0, start := loadAvg(), time.Now()
		stdout, err := cmd.Output()
		secs := time.Since(start).Seconds()
		var r replicaRestored
		if err != nil || json.Unmarshal(stdout, &r) != nil || r.Files != 100_000 {
			b.Fatalf("restore: %v %s %s", err, stdout, stderr.String())
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		b.ReportMetric(secs, "restore-s")
		b.ReportMetric(time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds(), "cpu-s")
		b.ReportMetric(float64(st.Size())/1e6, "db-MB")
		b.ReportMetric((load0+loadAvg())/2, "load-avg")
	}
}
