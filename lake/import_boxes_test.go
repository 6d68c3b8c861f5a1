package lake_test

import (
	"context"
	"database/sql"
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

// TestInsertHumanBoxesInAdd: boxes inserted in the transaction that stores
// their files (70 on one file: two full multi-row inserts and a tail, none
// on another) read back in order and are what SetHumanBoxes finds
// unchanged; a bad box fails the Add, storing neither file nor box.
func TestInsertHumanBoxesInAdd(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t)
	var many []lake.Box
	for i := range 70 {
		many = append(many, lake.Box{Label: fmt.Sprint("c", i%3), X: float64(i % 50), Y: 1, W: 4, H: 5,
			Attributes: json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`)})
	}
	add := func(name string, seed uint8, boxes []lake.Box) (lake.AddResult, lake.SetBoxesResult, error) {
		var res lake.SetBoxesResult
		ar, err := l.Add(ctx, lake.AddOptions{Collection: "c", InTx: func(ctx context.Context, tx *sql.Tx, stored []lake.File) (err error) {
			res, err = lake.InsertHumanBoxesTx(ctx, tx, "import:c", stored, func(f lake.File) []lake.Box {
				if f.Name == name {
					return boxes
				}
				return nil
			})
			return err
		}}, []lake.Upload{mem(name, jpegBytes(t, 64, 48, seed)), mem("empty.jpg", jpegBytes(t, 64, 48, seed+1))})
		return ar, res, err
	}
	ar, res, err := add("a.jpg", 1, many)
	if err != nil || len(ar.Stored) != 2 || res.Changed != 1 || res.Unchanged != 1 {
		t.Fatalf("add: %+v %+v %v", ar, res, err)
	}
	a := ar.Stored[0]
	got, _ := l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{a.Seq()}})
	if len(got) != 70 || got[69].X != 19 || string(got[69].Attributes) != `{"i":69}` || got[0].Operation != "import:c" {
		t.Fatalf("%d boxes, last %+v", len(got), got[len(got)-1])
	}
	if r, err := l.SetHumanBoxes(ctx, "import:c", []lake.FileBoxes{{UniqueName: a.UniqueName, Boxes: many}}); err != nil || r.Unchanged != 1 {
		t.Errorf("the same boxes through SetHumanBoxes: %+v %v", r, err)
	}
	if _, _, err := add("b.jpg", 5, []lake.Box{{Label: "car", X: 1, Y: 1, W: 0, H: 5}}); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("zero-width box: %v", err)
	}
	var files, boxes int
	l.DB().R.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM file), (SELECT count(*) FROM annotation)`).Scan(&files, &boxes)
	if files != 2 || boxes != 70 {
		t.Errorf("after the failed Add: %d files, %d boxes; want the 2 and 70 before", files, boxes)
	}
}
