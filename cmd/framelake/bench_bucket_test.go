package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/tests3"
)

// BenchmarkImportMedia imports 4,000 generated JPEGs of about 163 KB
// (1400x1050, distinct bytes: 256 images, each with a comment segment
// numbering its copy) into a new data folder, local media and a bucket of
// a versitygw on loopback side by side in one run. It reports files/s,
// files per CPU second of the importer, the server's CPU seconds, the
// importer's peak RSS (the server's memory is versitygw's, not
// framelake's) and the load average at the end.
func BenchmarkImportMedia(b *testing.B) {
	const n = 4000
	media := benchDir(b, "jpeg-163k-4k")
	if entries, _ := os.ReadDir(media); len(entries) != n {
		os.RemoveAll(media)
		if err := writeNumberedJPEGs(media, n, 1400, 1050); err != nil {
			b.Fatal(err)
		}
	}
	var bytes int64
	entries, _ := os.ReadDir(media)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			bytes += info.Size()
		}
	}
	srv := tests3.Shared(b)
	for _, where := range []string{"local", "bucket"} {
		b.Run(where, func(b *testing.B) {
			for b.Loop() {
				data := importTarget(b)
				args := []string{"import", media, "--data", data, "--collection", "bench", "--json"}
				if where == "bucket" {
					args = append(args, "--media", srv.Bucket(b, "bench"))
				}
				cmd := exec.Command(bin, args...)
				cmd.Env = append(os.Environ(), srv.Env()...)
				start, server := time.Now(), srv.CPU()
				out, err := cmd.Output()
				secs := time.Since(start).Seconds()
				if err != nil {
					b.Fatalf("import: %v %s", err, out)
				}
				var sum struct{ Stored int }
				if json.Unmarshal(out, &sum); sum.Stored != n {
					b.Fatalf("stored %d of %d: %s", sum.Stored, n, out)
				}
				ps := cmd.ProcessState
				rss := ps.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
				b.ReportMetric(n/secs, "files/s")
				b.ReportMetric(n/(ps.UserTime()+ps.SystemTime()).Seconds(), "files/cpu-s")
				b.ReportMetric((srv.CPU() - server).Seconds(), "server-cpu-s")
				b.ReportMetric(float64(rss)/1024, "peak-RSS-MB")
				b.ReportMetric(float64(bytes)/n/1000, "avg-KB")
				b.ReportMetric(loadAvg(), "load")
			}
		})
	}
}

// writeNumberedJPEGs writes n JPEGs made from 256 images of w x h, copy i
// carrying i in a comment segment so every file is a distinct blob.
func writeNumberedJPEGs(dir string, n, w, h int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := make([][]byte, 256)
	for i := range base {
		base[i] = testmedia.JPEG(w, h, i)
	}
	for i := range n {
		img := append([]byte{0xFF, 0xD8, 0xFF, 0xFE, 0, 6, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)},
			base[i%len(base)][2:]...)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("img-%05d.jpg", i)), img, 0o644); err != nil {
			return err
		}
	}
	return nil
}
