package lake_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestShapeCounts: the sidebar's counts by shape type, annotations and files
// of each type, follow the query, and for the whole lake come from the
// counts triggers keep, which agree with counting the annotations through
// writes, replacements and deletes; annotation.type is a set facet too.
func TestShapeCounts(t *testing.T) {
	ctx := context.Background()
	l, files := lakeOf(t, 3)
	var in []lake.Box
	if err := json.Unmarshal([]byte(shapesJSON), &in); err != nil {
		t.Fatal(err)
	}
	// a.jpg has every shape and a second polygon; b.jpg one box; c.jpg none.
	_, err := l.SetHumanBoxes(ctx, "import:c", []lake.FileBoxes{{UniqueName: files[0].UniqueName, Boxes: append(in, in[1])},
		{UniqueName: files[1].UniqueName, Boxes: in[:1]}})
	if err != nil {
		t.Fatal(err)
	}
	counts := func(q string) string {
		t.Helper()
		got, est, err := l.ShapeCounts(ctx, lake.Selection{ItemType: "image", Query: q})
		if err != nil || est.Estimated {
			t.Fatalf("%q: %v %v", q, est, err)
		}
		return fmt.Sprint(got)
	}
	same := func(when, want string) {
		t.Helper()
		kept, counted := counts(""), counts("fileSize >= 0") // the triggers' table, and a count of the rows
		if kept != want || counted != want {
			t.Errorf("%s: kept %s, counted %s; want %s", when, kept, counted, want)
		}
	}
	same("written", "[{box 2 2} {polygon 2 1} {mask 1 1} {keypoints 1 1} {polyline 1 1} {class 1 1}]")
	if got := counts("uniqueName = " + files[1].UniqueName); got != "[{box 1 1} {polygon 0 0} {mask 0 0} {keypoints 0 0} {polyline 0 0} {class 0 0}]" {
		t.Errorf("b.jpg: %s", got)
	}
	if got := counts("annotation.type = polygon"); got != "[{box 1 1} {polygon 2 1} {mask 1 1} {keypoints 1 1} {polyline 1 1} {class 1 1}]" {
		t.Errorf("files with a polygon: %s", got)
	}
	set, err := l.SetCounts(ctx, lake.Selection{}, "annotation.type", 10)
	if err != nil || fmt.Sprint(set.Values) != "[{box 2} {class 1} {keypoints 1} {mask 1} {polygon 1} {polyline 1}]" {
		t.Errorf("annotation.type facet: %v, %v", set, err)
	}
	set, err = l.SetCounts(ctx, lake.Selection{Query: "annotation.count < 2"}, "annotation.type", 10)
	if err != nil || fmt.Sprint(set.Values) != "[{box 1}]" {
		t.Errorf("annotation.type facet of b.jpg and c.jpg: %v, %v", set, err)
	}
	// a.jpg's shapes become one polygon: its box, mask and the rest go, one polygon stays.
	err = l.DB().Tx(ctx, func(tx *sql.Tx) error {
		return lake.ReplaceBoxes(ctx, tx, files[0].Seq(), lake.Human, "import:c", 0, in[1:2])
	})
	if err != nil {
		t.Fatal(err)
	}
	same("a.jpg replaced", "[{box 1 1} {polygon 1 1} {mask 0 0} {keypoints 0 0} {polyline 0 0} {class 0 0}]")
	if _, err := l.DB().W.ExecContext(ctx, `UPDATE annotation SET type = 'polyline' WHERE type = 'box'`); err != nil {
		t.Fatal(err)
	}
	same("b's box made a polyline", "[{box 0 0} {polygon 1 1} {mask 0 0} {keypoints 0 0} {polyline 1 1} {class 0 0}]")
	if _, err := l.DeleteFile(ctx, files[0].UniqueName); err != nil {
		t.Fatal(err)
	}
	same("a.jpg deleted", "[{box 0 0} {polygon 0 0} {mask 0 0} {keypoints 0 0} {polyline 1 1} {class 0 0}]")
}
