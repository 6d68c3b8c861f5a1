package lake_test

import (
	"context"
	"encoding/json"
	"testing"

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
