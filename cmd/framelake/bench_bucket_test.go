package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/tests3"
	"github.com/framelake/framelake/internal/testmedia"
)

// BenchmarkImportBucket10k imports the 10,000 generated 640x480 JPEGs of
// BenchmarkImport10k into a new data folder whose media is a bucket of a
// SeaweedFS on loopback, and reports files/s and the importer's peak RSS
// (the server's memory is SeaweedFS's, not framelake's).
func BenchmarkImportBucket10k(b *testing.B) {
	const n = 10000
	media := benchDir(b, "jpeg-640x480-10k")
	if entries, _ := os.ReadDir(media); len(entries) != n {
		os.RemoveAll(media)
		if err := testmedia.WriteJPEGs(media, n, 640, 480); err != nil {
			b.Fatal(err)
		}
	}
	srv := tests3.Shared(b)
	for b.Loop() {
		data := b.TempDir()
		cmd := exec.Command(bin, "import", media, "--data", data, "--collection", "bench", "--json",
			"--media", srv.Bucket(b, "bench"))
		cmd.Env = append(os.Environ(), srv.Env()...)
		start := time.Now()
		out, err := cmd.Output()
		secs := time.Since(start).Seconds()
		if err != nil {
			b.Fatalf("import: %v %s", err, out)
		}
		var sum struct{ Stored int }
		if json.Unmarshal(out, &sum); sum.Stored != n {
			b.Fatalf("stored %d of %d: %s", sum.Stored, n, out)
		}
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
		b.ReportMetric(n/secs, "files/s")
		b.ReportMetric(float64(rss)/1024, "peak-RSS-MB")
	}
}
