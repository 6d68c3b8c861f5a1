package lake_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// maintainedDiffs compares the tables migration 014's triggers keep with
// what counting the base tables gives: label_file with every (label, file)
// of annotation and its file's type and updated_at, source_files with the
// files of each source and type. It returns each difference.
func maintainedDiffs(t *testing.T, db *sql.DB) []string {
	t.Helper()
	checks := []struct{ name, kept, counted string }{
		{"label_file", `SELECT label, file_seq, type, updated_at FROM label_file`,
			`SELECT DISTINCT a.label, a.file_seq, f.type, f.updated_at FROM annotation a JOIN file f ON f.seq = a.file_seq`},
		{"source_files", `SELECT source, type, files FROM source_files`,
			`SELECT a.source, f.type, count(DISTINCT a.file_seq) FROM annotation a JOIN file f ON f.seq = a.file_seq GROUP BY 1, 2`},
	}
	var out []string
	for _, c := range checks {
		for _, q := range []string{c.kept + ` EXCEPT ` + c.counted, c.counted + ` EXCEPT ` + c.kept} {
			rows, err := db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				rows.Scan(ptrs...)
				out = append(out, fmt.Sprintf("%s: %v only in %q", c.name, vals, q[:20]))
			}
			rows.Close()
		}
	}
	return out
}

func box(label string, x float64) lake.Box { return lake.Box{Label: label, X: x, Y: 1, W: 2, H: 2} }

// TestMaintainedTablesFollowEveryWrite writes through every path that
// changes annotations or files (uploads, an import's boxes, a model's, a
// person's edit and its history restore, a project taking boxes over,
// metadata patches, direct updates of a box's label, source and file and
// of a file's type, a file's and a collection's delete) and after each
// compares label_file and source_files with count(*) over annotation and
// file.
func TestMaintainedTablesFollowEveryWrite(t *testing.T) {
	ctx := lake.WithActor(context.Background(), lake.Actor{Who: "ana", Via: "test"})
	l, colls := planLake(t)
	db := l.DB()
	check := func(when string) {
		t.Helper()
		for _, d := range maintainedDiffs(t, db.R) {
			t.Errorf("%s: %s", when, d)
		}
	}
	check("uploaded")
	all, err := l.ListFiles(ctx, lake.Selection{}, 0, 100, lake.Sort{Field: "name", Order: "ASC"})
	if err != nil || len(all) != 40 {
		t.Fatal(len(all), err)
	}
	var imp []lake.FileBoxes
	for i, f := range all[:20] {
		imp = append(imp, lake.FileBoxes{UniqueName: f.UniqueName, Boxes: []lake.Box{box([]string{"dog", "cat", "bus"}[i%3], 1), box("dog", 3)}})
	}
	if _, err := l.SetHumanBoxes(ctx, "import:coco", imp); err != nil {
		t.Fatal(err)
	}
	check("imported")
	replace := func(f lake.File, src lake.Source, op string, boxes ...lake.Box) {
		t.Helper()
		if err := db.Tx(ctx, func(tx *sql.Tx) error { return lake.ReplaceBoxes(ctx, tx, f.Seq(), src, op, 0, boxes) }); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range all[10:30] {
		replace(f, lake.Machine, "run:1", box("dog", 1), box([]string{"car", "cat"}[i%2], 4))
	}
	check("a model's boxes")
	replace(all[0], lake.Human, "prj_1", box("person", 1))
	replace(all[0], lake.Human, "prj_1", box("bike", 1), box("person", 2))
	replace(all[1], lake.Human, "import:coco") // every human box of the import gone
	check("edited")
	changes, err := l.History(ctx, lake.HistoryQuery{UniqueName: all[0].UniqueName})
	if err != nil || len(changes) < 2 {
		t.Fatal(changes, err)
	}
	for _, c := range []lake.Change{changes[len(changes)-1], changes[0]} {
		if err := l.RestoreChange(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		check("restored " + c.ID)
	}
	if err := db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := lake.TakeOverHumanBoxesTx(ctx, tx, []int64{all[2].Seq(), all[3].Seq()}, []string{"dog", "cat", "bus"}, nil, "prj_2")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	check("taken over")
	if _, err := l.PatchFileMetadata(ctx, all[4].UniqueName, json.RawMessage(`{"cam":"c"}`)); err != nil {
		t.Fatal(err)
	}
	check("metadata patched")
	for _, q := range []string{
		`UPDATE annotation SET label = 'zebra' WHERE file_seq = ` + fmt.Sprint(all[5].Seq()),
		`UPDATE annotation SET source = 'machine', confidence = 0.5 WHERE file_seq = ` + fmt.Sprint(all[6].Seq()) + ` AND label = 'dog'`,
		`UPDATE annotation SET file_seq = ` + fmt.Sprint(all[35].Seq()) + ` WHERE file_seq = ` + fmt.Sprint(all[7].Seq()),
		`UPDATE file SET type = 'other' WHERE seq = ` + fmt.Sprint(all[8].Seq()),
		`UPDATE file SET updated_at = updated_at + 1 WHERE seq = ` + fmt.Sprint(all[9].Seq()),
	} {
		if _, err := db.W.Exec(q); err != nil {
			t.Fatal(q, err)
		}
		check(q)
	}
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("notes.txt", []byte("not an image"))})
	if err != nil || len(res.Stored) != 1 {
		t.Fatal(err, res.Rejected)
	}
	replace(res.Stored[0], lake.Machine, "run:1", box("dog", 1))
	check("a file of another type with a box")
	if _, err := l.DeleteFile(ctx, all[10].UniqueName); err != nil {
		t.Fatal(err)
	}
	check("a file deleted")
	if _, err := l.DeleteCollection(ctx, colls["south"], true); err != nil {
		t.Fatal(err)
	}
	check("a collection deleted with its files")
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM label_file`).Scan(&n); err != nil || n < 20 {
		t.Errorf("label_file holds %d rows (%v): the checks compared too little", n, err)
	}
}

// anchoredSels are listings of each anchored shape (and a query that keeps
// OFFSET, as a control).
func anchoredSels(colls map[string]string) []lake.Selection {
	return []lake.Selection{
		{},
		{Query: "annotation.label = dog"},
		{Query: "annotation.source = machine"},
		{Query: "annotation.source = human"},
		{Query: "collection = north"},
		{CollectionID: colls["south"]},
		{Query: "annotation.label = dog AND collection = north"},
	}
}

// TestAnchoredPagesEqualOffset pages every anchored shape, in both date
// orders, with anchors 4 rows apart, and compares each page with every
// match sorted in Go (what OFFSET gives); then, between pages, writes that
// move files in the order and in and out of the shapes, and pages again:
// anchors found before a write are never used after it unless moved by
// every change the writer's log holds since them. It runs with the log
// (anchors moved across writes) and without (walked again after each),
// and the log must save most of the walking after writes; a write from
// another connection, which the log does not see, must make the next
// pages walk rather than use anchors moved by half the changes.
func TestAnchoredPagesEqualOffset(t *testing.T) {
	defer lake.SetAnchorStep(4)()
	var steps [2]int64
	for i, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("log %v", on), func(t *testing.T) {
			defer lake.SetChangeLog(on)()
			moves, walked := anchoredPagesAcrossWrites(t)
			if on && moves < 30 || !on && moves != 0 {
				t.Errorf("anchor sets moved by the log: %d", moves)
			}
			steps[i] = walked
		})
	}
	t.Logf("anchors walked after the writes: %d with the change log, %d without", steps[0], steps[1])
	if t.Failed() || 2*steps[0] > steps[1] {
		t.Errorf("anchors walked after the writes: %d with the change log, %d without", steps[0], steps[1])
	}
}

// anchoredPagesAcrossWrites is TestAnchoredPagesEqualOffset on a new lake:
// the anchor sets the change log moved, and the anchors walked, during the
// writes between pages.
func anchoredPagesAcrossWrites(t *testing.T) (moves, walked int64) {
	ctx := context.Background()
	l, colls := planLake(t)
	db := l.DB()
	// Another connection to the same file: its writes bypass the writer's
	// TEMP triggers, as another process's would.
	other, err := sql.Open("sqlite", "file:"+db.Path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	all, err := l.ListFiles(ctx, lake.Selection{}, 0, 100, lake.Sort{Field: "name", Order: "ASC"})
	if err != nil {
		t.Fatal(err)
	}
	replace := func(f lake.File, src lake.Source, boxes ...lake.Box) {
		t.Helper()
		if err := db.Tx(ctx, func(tx *sql.Tx) error { return lake.ReplaceBoxes(ctx, tx, f.Seq(), src, "op", 0, boxes) }); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range all {
		switch i % 4 {
		case 0:
			replace(f, lake.Human, box("dog", 1))
		case 1:
			replace(f, lake.Machine, box("dog", 1), box("cat", 2))
		case 2:
			replace(f, lake.Machine, box("cat", 1))
		}
	}
	page := func(when string, sel lake.Selection, s lake.Sort, p, size int) {
		t.Helper()
		got, err := l.ListFiles(ctx, sel, p, size, s)
		if w := want(t, l, sel, s, p, size); err != nil || !slices.Equal(names(got), w) {
			t.Errorf("%s: %+v %s page %d of %d: %v %v, want %v", when, sel, s.Order, p, size, names(got), err, w)
		}
	}
	sorts := []lake.Sort{{Field: "date_modified", Order: "DESC"}, {Field: "date_modified", Order: "ASC"}}
	for _, sel := range anchoredSels(colls) {
		for _, s := range sorts {
			for _, size := range []int{3, 4, 10} {
				for p := range 45/size + 2 {
					page("built", sel, s, p, size)
				}
			}
		}
	}
	if sets, most := l.AnchorSets(); sets < 10 || most < 4 {
		t.Fatalf("anchors of %d shapes, at most %d: the pages did not use them", sets, most)
	}
	// Writes between the pages of one walk through each listing.
	n := 0 // writes so far: each picks other files than the last time
	writes := []func(){
		func() { replace(all[37], lake.Human, box("dog", 5)) },           // joins dog and human, moves first
		func() { replace(all[(4*n+3)%40], lake.Machine, box("cat", 3)) }, // joins machine, moves first
		func() { // a machine file moves first
			l.PatchFileMetadata(ctx, all[(4*n+1)%40].UniqueName, json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)))
		},
		func() { replace(all[0], lake.Human) }, // leaves dog and human
		func() {
			db.W.Exec(`UPDATE file SET updated_at = ? WHERE seq = ?`, 5+n, all[(4*n+2)%40].Seq()) // a machine file moves last
		},
		func() { replace(all[(4*n+7)%40], lake.Machine) },                                       // leaves machine
		func() { l.PatchFileMetadata(ctx, all[20].UniqueName, json.RawMessage(`{"cam":"z"}`)) }, // moves first
		func() { l.DeleteFile(ctx, all[12].UniqueName) },
		func() {
			l.Add(ctx, lake.AddOptions{Collection: "north"}, []lake.Upload{mem("new.jpg", testmedia.JPEG(9, 9, 99))})
		},
		func() {
			db.W.Exec(`UPDATE file SET updated_at = 0 WHERE seq = ?`, all[3].Seq()) // moves last
		},
		func() { // moves first, unseen by the log
			if _, err := other.Exec(`UPDATE file SET updated_at = updated_at + 100000 WHERE seq = ?`, all[30].Seq()); err != nil {
				t.Fatal(err)
			}
		},
	}
	moves0, walked0 := l.AnchorWork()
	for _, sel := range anchoredSels(colls) {
		for _, s := range sorts {
			for p := range 12 {
				page("written between pages", sel, s, p, 3)
				writes[p%len(writes)]()
				n++
				page("right after a write", sel, s, p, 3)
			}
		}
	}
	for _, d := range maintainedDiffs(t, db.R) {
		t.Error(d)
	}
	moves, walked = l.AnchorWork()
	return moves - moves0, walked - walked0
}

// TestLabelMembersMigration makes a lake at migration 013, writes files,
// boxes and collections into it, migrates it, and checks that migration 014
// filled label_file and source_files from them and that its listings and
// counts of a label and a source equal every match counted.
func TestLabelMembersMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{}
	ms, err := fs.ReadDir(lake.Migrations, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name() < "014" {
			b, _ := fs.ReadFile(lake.Migrations, m.Name())
			old[m.Name()] = &fstest.MapFile{Data: b}
		}
	}
	if len(old) != 13 {
		t.Fatalf("%d migrations before 014", len(old))
	}
	if err := db.Migrate(ctx, "lake", old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`INSERT INTO collection (seq, id, name, type, created_at, updated_at) VALUES (1, 'c1', 'north', 'image_collection', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 30; i++ {
		typ := "image"
		if i%10 == 0 {
			typ = "other"
		}
		_, err := db.W.Exec(`INSERT INTO file (seq, id, unique_name, name, type, blob, ext, mime, size, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'b', 'jpg', 'image/jpeg', 10, ?, ?)`, i, fmt.Sprint("f", i), fmt.Sprint("u", i), fmt.Sprint("f", i, ".jpg"), typ, i, (i*7)%31)
		if err == nil && i%2 == 0 {
			_, err = db.W.Exec(`INSERT INTO collection_file (collection_seq, file_seq, added_at) VALUES (1, ?, 0)`, i)
		}
		for j := 0; err == nil && j < i%4; j++ {
			src := []string{"human", "machine"}[(i+j)%2]
			_, err = db.W.Exec(`INSERT INTO annotation (id, file_seq, label, x, y, w, h, source, operation, created_at, updated_at)
				VALUES (?, ?, ?, 1, 1, 2, 2, ?, 'op', 0, 0)`, fmt.Sprint("a", i, "-", j), i, []string{"dog", "cat", "dog"}[j], src)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	for _, d := range maintainedDiffs(t, db.R) {
		t.Error(d)
	}
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM label_file`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("label_file empty after the migration: %v", err)
	}
	db.Close()
	defer lake.SetAnchorStep(4)()
	l, _ := reopenLake(t, dir)
	newest := lake.Sort{Field: "date_modified", Order: "DESC"}
	for _, sel := range []lake.Selection{{Query: "annotation.label = dog"}, {Query: "annotation.source = machine"},
		{ItemType: "other", Query: "annotation.label = dog"}, {ItemType: "other", Query: "annotation.source = human"}} {
		n, err := l.Count(ctx, sel)
		counted := len(want(t, l, sel, newest, 0, 1000))
		if err != nil || n != counted || n == 0 && sel.ItemType == "" {
			t.Errorf("count %+v = %d %v, counted %d", sel, n, err, counted)
		}
		for p := range 6 {
			got, err := l.ListFiles(ctx, sel, p, 3, newest)
			if w := want(t, l, sel, newest, p, 3); err != nil || !slices.Equal(names(got), w) {
				t.Errorf("%+v page %d: %v %v, want %v", sel, p, names(got), err, w)
			}
		}
	}
}
