package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/tests3"
)

// BenchmarkBucketPut stores distinct 163 KB blobs in a bucket of a
// versitygw on loopback, 8 at a time, the way placing a batch does. It
// reports this process's and the server's CPU time per PUT: what the bucket
// adds to an import beyond the local folder's rename.
func BenchmarkBucketPut(b *testing.B) {
	srv := tests3.Shared(b)
	srv.SetEnv(b)
	ctx := context.Background()
	bk, err := openBucket(ctx, srv.Bucket(b, "put"))
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 163_000)
	for i := range body {
		body[i] = byte(i * 7)
	}
	type blob struct {
		hash string
		data []byte
	}
	blobs := make([]blob, b.N)
	for i := range blobs {
		d := append([]byte(fmt.Sprintf("%09d", i)), body[9:]...)
		sum := sha256.Sum256(d)
		blobs[i] = blob{hex.EncodeToString(sum[:]), d}
	}
	next := make(chan int)
	var wg sync.WaitGroup
	fails := make(chan error, 8)
	cpu, server, start := cpuTime(), srv.CPU(), time.Now()
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := bk.putBytes(ctx, blobs[i].hash, "jpg", blobs[i].data); err != nil {
					select {
					case fails <- err:
					default:
					}
				}
			}
		})
	}
	for i := range blobs {
		next <- i
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)
	select {
	case err := <-fails:
		b.Fatal(err)
	default:
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "puts/s")
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/put")
	b.ReportMetric(float64(srv.CPU()-server)/float64(b.N)/1e6, "server-cpu-ms/put")
	b.ReportMetric(loadAverage(), "load")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the machine's one-minute load average.
func loadAverage() float64 {
	var one float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscan(strings.Fields(string(b))[0], &one)
	}
	return one
}
