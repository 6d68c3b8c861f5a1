package evaluate_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/benchlake"
)

// TestBoxPairsInPages: the boxes an evaluation reads come in file and
// insertion order and are the same whatever the page size, though pages
// are read on several connections at once and may finish in any order.
func TestBoxPairsInPages(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "lake")
	const files = 97
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: files, Labels: 10, Collections: 1}); err != nil {
		t.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := insertBoxes(ctx, a.Lake.DB().W, rand.New(rand.NewPCG(5, 6)), 0, files); err != nil {
		t.Fatal(err)
	}
	read := func(pageFiles int) string {
		var b strings.Builder
		last := int64(0)
		err := a.Lake.EachFileBoxPair(ctx, lake.BoxPairQuery{Selection: lake.Selection{ItemType: "image"},
			MachineOperation: benchRun, PageFiles: pageFiles}, func(fb lake.BoxPair) error {
			if fb.Seq <= last {
				return fmt.Errorf("file %d after %d", fb.Seq, last)
			}
			last = fb.Seq
			fmt.Fprintf(&b, "%d:", fb.Seq)
			for _, x := range append(fb.Human, fb.Machine...) {
				fmt.Fprintf(&b, " %d/%s/%.2f/%v", x.Seq, x.Label, x.Score, x.Human)
			}
			b.WriteString("\n")
			return nil
		})
		if err != nil {
			t.Fatalf("pages of %d: %v", pageFiles, err)
		}
		return b.String()
	}
	whole := read(1000)
	if n := strings.Count(whole, "\n"); n != files || strings.Count(whole, "/true") != files*benchHuman ||
		strings.Count(whole, "/false") != files*(benchHuman+benchSpurious) {
		t.Fatalf("one page: %d files, %d human and %d machine boxes", n, strings.Count(whole, "/true"), strings.Count(whole, "/false"))
	}
	for _, size := range []int{1, 7, 96} {
		if got := read(size); got != whole {
			t.Errorf("pages of %d read other boxes than one page", size)
		}
	}
}
