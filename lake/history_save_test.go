package lake

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// TestSaveWritesOnlyWhatChanged: a save of a frame's 20 boxes with one
// moved rewrites that one row (a new id) and keeps the others' rows and ids;
// a new label replaces its row in place; boxes added and removed come and
// go at the end. Every save reads back in the order given, the counting
// tables agree with the rows, and the history holds each save's change.
func TestSaveWritesOnlyWhatChanged(t *testing.T) {
	l, seq := historyLake(t)
	ctx := WithActor(context.Background(), Actor{Who: "ana", Via: "web app"})
	boxes := make([]Box, 20)
	for i := range boxes {
		boxes[i] = Box{Label: "car", X: float64(i * 30), Y: 40, W: 25, H: 20}
	}
	type row struct {
		seq     int64
		id, lab string
		x       float64
	}
	save := func() []row {
		t.Helper()
		if err := l.db.Tx(ctx, func(tx *sql.Tx) error { return ReplaceBoxes(ctx, tx, seq, Human, "prj_1", 0, boxes) }); err != nil {
			t.Fatal(err)
		}
		var out []row
		rows, err := l.db.R.QueryContext(ctx, `SELECT seq, id, label, x FROM annotation WHERE file_seq = ? ORDER BY seq`, seq)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.seq, &r.id, &r.lab, &r.x); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		if len(out) != len(boxes) {
			t.Fatalf("%d rows for %d boxes", len(out), len(boxes))
		}
		for i, r := range out {
			if r.lab != boxes[i].Label || r.x != boxes[i].X {
				t.Fatalf("row %d is %s at x %g, want %s at %g (the order given)", i, r.lab, r.x, boxes[i].Label, boxes[i].X)
			}
		}
		for _, label := range []string{"car", "person"} {
			var files, want int
			_ = l.db.R.QueryRowContext(ctx, `SELECT coalesce((SELECT files FROM label_files WHERE label = ?), 0)`, label).Scan(&files)
			if slices.ContainsFunc(boxes, func(b Box) bool { return b.Label == label }) {
				want = 1
			}
			if files != want {
				t.Fatalf("label_files says %d files with %s, want %d", files, label, want)
			}
		}
		return out
	}
	first := save()
	boxes[7].X = 215.5
	moved := save()
	for i := range moved {
		if kept := moved[i].id == first[i].id && moved[i].seq == first[i].seq; kept != (i != 7) {
			t.Errorf("box %d: row %d id %s, before row %d id %s: only box 7 moved", i, moved[i].seq, moved[i].id,
				first[i].seq, first[i].id)
		}
	}
	boxes[3].Label = "person"
	relabelled := save()
	if relabelled[3].seq != moved[3].seq || relabelled[3].id == moved[3].id || relabelled[4].id != moved[4].id {
		t.Errorf("a new label: row %+v, before %+v; want the same seq and a new id, the next box untouched", relabelled[3], moved[3])
	}
	boxes = append(boxes[:18:18], Box{Label: "person", X: 1, Y: 1, W: 5, H: 5})
	shrunk := save()
	if shrunk[17].id != relabelled[17].id || shrunk[18].seq != relabelled[18].seq || shrunk[18].id == relabelled[18].id {
		t.Errorf("19 boxes, the last one another: %+v, before %+v", shrunk[17:], relabelled[17:])
	}
	boxes = append(boxes, Box{Label: "car", X: 2, Y: 2, W: 5, H: 5})
	grown := save()
	if grown[18] != shrunk[18] || grown[19].seq <= grown[18].seq {
		t.Errorf("a box added: %+v, before %+v", grown[18:], shrunk[18:])
	}
	changes, err := l.History(ctx, HistoryQuery{Limit: 10})
	if err != nil || len(changes) != 5 {
		t.Fatalf("%d changes for 5 saves: %v", len(changes), err)
	}
	for i, want := range [][2]int{{0, 1}, {2, 1}, {1, 1}, {1, 1}} { // newest first
		if c := changes[i]; len(c.Removed) != want[0] || len(c.Added) != want[1] {
			t.Errorf("change %d removed %d and added %d shapes, want %d and %d", i, len(c.Removed), len(c.Added), want[0], want[1])
		}
	}
}
