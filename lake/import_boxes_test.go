package lake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// TestSetHumanBoxes: an import's boxes land as human boxes under its
// operation; the same boxes again change nothing (not even updatedAt);
// other boxes replace them; a box outside the image or an operation that
// is not import:... changes nothing.
func TestSetHumanBoxes(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t)
	res, err := l.Add(ctx, lake.AddOptions{Collection: "c"}, []lake.Upload{mem("a.jpg", jpegBytes(t, 64, 48, 1))})
	if err != nil || len(res.Stored) != 1 {
		t.Fatal(res, err)
	}
	f := res.Stored[0]
	boxes := []lake.Box{{Label: "car", X: 1, Y: 2, W: 10, H: 20, Attributes: json.RawMessage(`{"occluded":true}`)},
		{Label: "person", X: 30, Y: 4, W: 5.5, H: 6}}
	set := func(op string, b []lake.Box) (lake.SetBoxesResult, error) {
		return l.SetHumanBoxes(ctx, op, []lake.FileBoxes{{UniqueName: f.UniqueName, Boxes: b}})
	}
	if r, err := set("import:c", boxes); err != nil || r.Changed != 1 {
		t.Fatalf("first set: %+v %v", r, err)
	}
	before, _ := l.File(ctx, f.UniqueName)
	if r, err := set("import:c", boxes); err != nil || r.Changed != 0 || r.Unchanged != 1 {
		t.Fatalf("same boxes again: %+v %v", r, err)
	}
	if after, _ := l.File(ctx, f.UniqueName); !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("unchanged boxes moved updatedAt %v → %v", before.UpdatedAt, after.UpdatedAt)
	}
	got, _ := l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}})
	if len(got) != 2 || got[0].Source != lake.Human || got[0].Operation != "import:c" || string(got[0].Attributes) != `{"occluded":true}` ||
		got[1].W != 5.5 {
		t.Fatalf("boxes %+v", got)
	}
	if r, err := set("import:c", boxes[:1]); err != nil || r.Changed != 1 {
		t.Fatalf("fewer boxes: %+v %v", r, err)
	}
	if _, err := set("import:c", []lake.Box{{Label: "car", X: 70, Y: 2, W: 10, H: 20}}); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("box outside the 64x48 image: %v", err)
	}
	if _, err := set("prj_x", boxes); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("operation prj_x: %v", err)
	}
	if _, err := l.SetHumanBoxes(ctx, "import:c", []lake.FileBoxes{{UniqueName: "nope"}}); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown file: %v", err)
	}
	if got, _ := l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}}); len(got) != 1 {
		t.Errorf("after refusals %d boxes, want the 1 set before", len(got))
	}
}

// BenchmarkSetHumanBoxes sets 10 boxes on each of 1,000 files, 64 files a
// call as import does, and reports files/s.
func BenchmarkSetHumanBoxes(b *testing.B) {
	ctx := context.Background()
	l, _ := openLake(b)
	var names []string
	for i := 0; i < 1000; i += 100 {
		var ups []lake.Upload
		for j := i; j < i+100; j++ {
			ups = append(ups, mem(fmt.Sprintf("f%04d.jpg", j), jpegBytes(b, 64, 48, uint8(j))))
		}
		res, err := l.Add(ctx, lake.AddOptions{Collection: "c"}, ups)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range append(res.Stored, res.Skipped...) {
			names = append(names, f.UniqueName)
		}
	}
	round := 0
	for b.Loop() {
		round++
		start := time.Now()
		for i := 0; i < len(names); i += 64 {
			var files []lake.FileBoxes
			for _, n := range names[i:min(i+64, len(names))] {
				fb := lake.FileBoxes{UniqueName: n}
				for j := range 10 {
					fb.Boxes = append(fb.Boxes, lake.Box{Label: "car", X: float64(j + round%2), Y: 1, W: 10, H: 10})
				}
				files = append(files, fb)
			}
			if _, err := l.SetHumanBoxes(ctx, "import:c", files); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(names))/time.Since(start).Seconds(), "files/s")
	}
}
