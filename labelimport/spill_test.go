package labelimport_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/labelimport"
)

// TestImportMemoryBoundedByBatch: a YOLO folder of 200 images with 2,000
// boxes each (400,000) is imported four images a batch; while the first
// batch is stored the live heap holds that batch's boxes, not the folder's
// (the boxes wait in a temporary file): 35 MB and more when every box
// stayed in memory until its batch. The boxes come back as written.
func TestImportMemoryBoundedByBatch(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "images"), 0o755)
	os.MkdirAll(filepath.Join(dir, "labels"), 0o755)
	os.WriteFile(filepath.Join(dir, "classes.txt"), []byte("car\nbus\n"), 0o644)
	var lines strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&lines, "%d 0.%03d 0.5 0.01 0.02\n", i%2, 100+i%800)
	}
	for i := range 200 {
		os.WriteFile(filepath.Join(dir, "images", fmt.Sprintf("%03d.jpg", i)), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(dir, "labels", fmt.Sprintf("%03d.txt", i)), []byte(lines.String()), 0o644)
	}
	var live uint64
	boxes := 0
	first := true
	sink := func(ctx context.Context, b labelimport.Batch) (labelimport.Outcome, error) {
		for _, p := range b.Paths {
			got := b.Boxes(filepath.Base(p), 1000, 1000)
			boxes += len(got)
			if len(got) != 2000 || got[1].Label != "bus" || got[1].X != 96 || got[1].Y != 490 || got[1].W != 10 || got[1].H != 20 {
				t.Fatalf("%s: %d boxes, the second %+v", p, len(got), got[1])
			}
		}
		if first {
			first = false
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			live = ms.HeapAlloc
		}
		return labelimport.Outcome{}, nil
	}
	sum, err := labelimport.Run(context.Background(), dir, labelimport.Options{Collection: "c", Format: format.YOLO,
		Batch: 4, Parallel: 1}, sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live heap %.1f MB while the first batch was stored", float64(live)/1e6)
	if boxes != 400000 || sum.Labels.Boxes != 400000 || live > 16<<20 {
		t.Errorf("%d boxes stored, %d counted, live heap %d bytes", boxes, sum.Labels.Boxes, live)
	}
}
