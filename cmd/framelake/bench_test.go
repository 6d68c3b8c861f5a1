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
		data := b.TempDir()
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
