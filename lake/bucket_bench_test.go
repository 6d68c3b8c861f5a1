package lake

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/tests3"
)

// BenchmarkMediaThumbnail is the cold thumbnail, local and bucket
// side by side in one run: a 1080p JPEG shrunk to 256 px with no thumbnail
// cache, the bucket's copy fetched from a versitygw on loopback into an
// emptied stage cache on every call (a cache of 1 byte, which lets go of
// each copy once the thumbnail is made). It reports wall time, this process's
// CPU time, the server's CPU time and the load average at the end.
func BenchmarkMediaThumbnail(b *testing.B) {
	img := testmedia.JPEG(1920, 1080, 7)
	onBothMediaBench(b, func(b *testing.B, l *Lake, srv *tests3.Server) {
		f := addBench(b, l, []Upload{{Name: "frame.jpg", Open: bytesOpen(img)}})[0]
		var wall time.Duration
		cpu, server := cpuTime(), srv.CPU()
		for b.Loop() {
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
		BaseURL: "http://127.0.0.1:8080", StageBytes: 1})
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
