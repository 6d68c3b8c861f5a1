package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/testmedia"
)

// benchDir is where generated benchmark inputs are kept between runs.
func benchDir(b *testing.B, name string) string {
	root, err := filepath.Abs(filepath.Join("..", "..", ".bench"))
	if err != nil {
		b.Fatal(err)
	}
	return filepath.Join(root, name)
}

// importTarget is a new data folder for one measured import. It is removed
// when the test binary ends (TestMain), not when its benchmark does: this
// machine's file system (ext4 without a journal) skips inodes freed in the
// last minute or more when it makes a file, reading each one's inode table
// entry, so an import that ran right after the previous benchmark had
// removed its 10,000 or 100,000 blobs spent up to 0.3 ms of CPU on every
// file it created, against 0.02 ms on a settled file system.
func importTarget(b *testing.B) string {
	dir, err := os.MkdirTemp("", "framelake-bench-")
	if err != nil {
		b.Fatal(err)
	}
	removeAtExit(dir)
	return dir
}

// BenchmarkImport10k imports 10,000 generated 640x480 JPEGs into a new data
// folder with the real binary and reports files per CPU second and per
// second, the importer's peak RSS and the load average (reportImport).
func BenchmarkImport10k(b *testing.B) {
	const n = 10000
	media := benchDir(b, "jpeg-640x480-10k")
	if entries, _ := os.ReadDir(media); len(entries) != n {
		os.RemoveAll(media)
		if err := testmedia.WriteJPEGs(media, n, 640, 480); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		data := importTarget(b)
		cmd := exec.Command(bin, "import", media, "--data", data, "--collection", "bench", "--json")
		load0 := loadAvg()
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
		reportImport(b, cmd, "files", n, secs, load0)
	}
}

// BenchmarkColdBuild builds the binary with an empty build cache and reports
// the time and the binary's size.
func BenchmarkColdBuild(b *testing.B) {
	for b.Loop() {
		out := filepath.Join(b.TempDir(), "framelake")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, ".")
		cmd.Env = append(os.Environ(), "GOCACHE="+b.TempDir())
		start := time.Now()
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build: %v %s", err, msg)
		}
		b.ReportMetric(time.Since(start).Seconds(), "build-s")
		st, _ := os.Stat(out)
		b.ReportMetric(float64(st.Size())/(1<<20), "binary-MB")
	}
}
