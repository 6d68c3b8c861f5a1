package lake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/tests3"
)

// BenchmarkMediaThumbnail is the cold thumbnail, local and bucket
// side by side in one run: a 1080p JPEG shrunk to 256 px with no thumbnail
// cache, the bucket's copy fetched from a versitygw on loopback into an
// emptied stage cache on every call. It reports wall time, this process's
// CPU time, the server's CPU time and the load average at the end.
func BenchmarkMediaThumbnail(b *testing.B) {
	img := testmedia.JPEG(1920, 1080, 7)
	onBothMediaBench(b, func(b *testing.B, l *Lake, srv *tests3.Server) {
		f := addBench(b, l, []Upload{{Name: "frame.jpg", Open: bytesOpen(img)}})[0]
		var wall time.Duration
		cpu, server := cpuTime(), srv.CPU()
		for b.Loop() {
			if l.store.stage != nil {
				dropStaged(l.store.stage, blobKey{f.Blob, f.Ext})
			}
			start := time.Now()
			if _, err := l.Thumbnail(context.Background(), f, 256); err != nil {
				b.Fatal(err)
			}
			wall += time.Since(start)
		}
		b.ReportMetric(float64(wall)/float64(b.N)/1e6, "wall-ms/op")
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		b.ReportMetric(float64(srv.CPU()-server)/float64(b.N)/1e6, "server-cpu-ms/op")
		b.ReportMetric(float64(len(img))/1024, "source-KiB")
		b.ReportMetric(loadAverage(), "load")
	})
}

// BenchmarkMediaFirstPage lists the first page (20, newest first) of a lake
// of 2,000 files with their signed media links, local and bucket side by
// side: the rows and links are local either way.
func BenchmarkMediaFirstPage(b *testing.B) {
	const n = 2000
	ups := make([]Upload, n)
	for i := range ups {
		ups[i] = Upload{Name: fmt.Sprintf("f%04d.jpg", i), Open: bytesOpen(testmedia.JPEG(32, 24, i))}
	}
	onBothMediaBench(b, func(b *testing.B, l *Lake, srv *tests3.Server) {
		for i := 0; i < n; i += 200 {
			addBench(b, l, ups[i:i+200])
		}
		ctx := context.Background()
		var links int
		cpu, server := cpuTime(), srv.CPU()
		for b.Loop() {
			page, err := l.ListFiles(ctx, Selection{}, 0, DefaultPageSize, Sort{Field: "date_created", Order: "DESC"})
			if err != nil || len(page) != DefaultPageSize {
				b.Fatalf("%d files, %v", len(page), err)
			}
			for _, f := range page {
				links += len(l.URL(f))
			}
		}
		if links == 0 {
			b.Fatal("no links")
		}
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e3, "cpu-us/op")
		b.ReportMetric(float64(srv.CPU()-server)/float64(b.N)/1e3, "server-cpu-us/op")
		b.ReportMetric(loadAverage(), "load")
	})
}

// onBothMediaBench runs f on a new lake with local media, then on one with
// a bucket of the shared server (srv is that server in both, so both
// report its CPU: none for local).
func onBothMediaBench(b *testing.B, f func(b *testing.B, l *Lake, srv *tests3.Server)) {
	srv := tests3.Shared(b)
	srv.SetEnv(b)
	for _, where := range []string{"local", "bucket"} {
		b.Run(where, func(b *testing.B) {
			media := ""
			if where == "bucket" {
				media = srv.Bucket(b, "bench")
			}
			f(b, openBenchLake(b, media), srv)
		})
	}
}

func openBenchLake(b *testing.B, media string) *Lake {
	ctx := context.Background()
	dir := b.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "lake", Migrations); err != nil {
		b.Fatal(err)
	}
	l, err := Open(ctx, db, Options{MediaDir: filepath.Join(dir, "media"), SigningKey: make([]byte, 32), Media: media,
		BaseURL: "http://127.0.0.1:8080"})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func addBench(b *testing.B, l *Lake, ups []Upload) []File {
	res, err := l.Add(context.Background(), AddOptions{}, ups)
	if err != nil || len(res.Stored) != len(ups) {
		b.Fatalf("stored %d of %d: %v", len(res.Stored), len(ups), err)
	}
	return res.Stored
}

func bytesOpen(p []byte) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(p)), nil }
}

// loadAverage is the machine's one-minute load average.
func loadAverage() float64 {
	var one float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscan(strings.Fields(string(b))[0], &one)
	}
	return one
}

// dropStaged forgets and removes the staged copy of k, so the next read fetches it.
func dropStaged(c *stageCache, k blobKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil {
		delete(c.m, k)
		c.total -= e.size
		os.Remove(c.path(k))
	}
}

// BenchmarkBucketPut stores distinct 163 KB blobs in a bucket of a
// versitygw on loopback, 8 at a time, the way placing a batch does. It
// reports this process's and the server's CPU time per PUT: what the bucket
// adds to an import beyond the local folder's rename.
func BenchmarkBucketPut(b *testing.B) {
	srv := tests3.Shared(b)
	srv.SetEnv(b)
	ctx := context.Background()
	bk, err := OpenBucket(ctx, srv.Bucket(b, "put"))
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
