package lake_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// TestBulkCountsEqualTheTriggers: an import's boxes, written with the count
// triggers off and their counts kept per call (migration 015), leave the
// counts the triggers leave when the same boxes are written row by row:
// boxes inserted with their new files, re-imported (a label, a type gone
// from the whole lake, a file labelled empty, a file unchanged) over files
// that also have a model's boxes, a refused re-import, and a file deleted.
// The bulk lake's counts also equal counting its annotations afresh.
func TestBulkCountsEqualTheTriggers(t *testing.T) {
	ctx := context.Background()
	bulk, _ := openLake(t)
	rows, _ := openLake(t)
	poly := func(label string, x float64) lake.Box {
		return lake.Box{Label: label, Geometry: shape.Geometry{Type: shape.Polygon,
			Polygon: [][]float64{{x, 1, x + 10, 1, x + 10, 12, x, 9}}}}
	}
	rounds := [][][]lake.Box{{
		{box("car", 1), box("car", 5), poly("person", 20)},
		{box("car", 1)},
		{poly("dog", 3)},
		{box("person", 7)},
		{box("dog", 2), poly("person", 30)},
		nil, // no labels name it
	}, {
		{box("car", 1), box("bus", 9)},
		{box("car", 1)},
		{box("person", 3)},
		{}, // labelled empty
		{box("person", 2)},
		nil,
	}}
	var ups []lake.Upload
	for i := range rounds[0] {
		ups = append(ups, mem(fmt.Sprintf("f%d.jpg", i), jpegBytes(t, 64, 48, uint8(10*i))))
	}
	byName := func(fs []lake.File) map[string]lake.File {
		m := map[string]lake.File{}
		for _, f := range fs {
			m[f.Name] = f
		}
		return m
	}
	shapes := func(r int) func(lake.File) []lake.Box {
		return func(f lake.File) []lake.Box {
			var i int
			fmt.Sscanf(f.Name, "f%d.jpg", &i)
			return rounds[r][i]
		}
	}
	// The bulk lake stores the files with their boxes; the other gets its
	// boxes a row at a time, each row firing the triggers.
	added, err := bulk.Add(ctx, lake.AddOptions{Collection: "c", InTx: func(ctx context.Context, tx *sql.Tx, stored []lake.File) error {
		_, err := lake.InsertHumanBoxesTx(ctx, tx, "import:c", stored, shapes(0))
		return err
	}}, ups)
	if err != nil || len(added.Stored) != len(ups) {
		t.Fatal(added, err)
	}
	bulkFiles := byName(added.Stored)
	added, err = rows.Add(ctx, lake.AddOptions{Collection: "c"}, ups)
	if err != nil {
		t.Fatal(err)
	}
	rowFiles := byName(added.Stored)
	replace := func(l *lake.Lake, f lake.File, src lake.Source, op string, boxes []lake.Box) {
		t.Helper()
		if err := l.DB().Tx(ctx, func(tx *sql.Tx) error { return lake.ReplaceBoxes(ctx, tx, f.Seq(), src, op, -1, boxes) }); err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range rowFiles {
		replace(rows, f, lake.Human, "import:c", shapes(0)(f))
		if name == "f1.jpg" || name == "f2.jpg" { // a model's boxes on two files, in both lakes
			replace(rows, f, lake.Machine, "run:1", []lake.Box{box("car", 4), box("cat", 6)})
			replace(bulk, bulkFiles[name], lake.Machine, "run:1", []lake.Box{box("car", 4), box("cat", 6)})
		}
	}
	// A file no import names, with a model's box and a person's polygon:
	// its counts stay as they are in both lakes.
	other := mem("other.jpg", jpegBytes(t, 64, 48, 99))
	for _, l := range []*lake.Lake{bulk, rows} {
		res, err := l.Add(ctx, lake.AddOptions{Collection: "o"}, []lake.Upload{other})
		if err != nil || len(res.Stored) != 1 {
			t.Fatal(res, err)
		}
		replace(l, res.Stored[0], lake.Machine, "run:1", []lake.Box{box("car", 4)})
		replace(l, res.Stored[0], lake.Human, "prj_1", []lake.Box{poly("person", 2)})
	}
	gen := generation(t, bulk)
	same(t, "imported", bulk, rows)
	if g := generation(t, bulk); g <= 0 {
		t.Errorf("list generation %d after an import", g)
	}

	var again []lake.FileBoxes
	for _, f := range bulkFiles {
		again = append(again, lake.FileBoxes{UniqueName: f.UniqueName, Boxes: shapes(1)(f)})
	}
	slices.SortFunc(again, func(a, b lake.FileBoxes) int { return len(a.Boxes) - len(b.Boxes) })
	bad := slices.Clone(again)
	bad[len(bad)-1].Boxes = []lake.Box{box("car", 1), {Label: "car", X: 1, Y: 1, W: 0, H: 2}}
	if _, err := bulk.SetHumanBoxes(ctx, "import:c", bad); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("a zero-width box in a re-import: %v", err)
	}
	same(t, "a refused re-import", bulk, rows)
	if res, err := bulk.SetHumanBoxes(ctx, "import:c", again); err != nil || res.Changed != 4 || res.Unchanged != 2 {
		t.Fatalf("re-import: %+v %v", res, err)
	}
	for _, f := range rowFiles {
		if f.Name != "f1.jpg" { // unchanged: SetHumanBoxes leaves it as it is
			replace(rows, f, lake.Human, "import:c", shapes(1)(f))
		}
	}
	same(t, "re-imported", bulk, rows)
	if g := generation(t, bulk); g <= gen {
		t.Errorf("list generation %d after a re-import that changed labels, was %d", g, gen)
	}
	var dogs, polygons int
	bulk.DB().R.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM label_files WHERE label = 'dog'),
		(SELECT annotations FROM shape_counts WHERE type = 'polygon')`).Scan(&dogs, &polygons)
	if dogs != 0 || polygons != 1 {
		t.Errorf("re-import left %d label_files rows of dog and %d polygons, want none and other.jpg's", dogs, polygons)
	}

	if err := bulk.Delete(ctx, bulkFiles["f1.jpg"].UniqueName); err != nil {
		t.Fatal(err)
	}
	if err := rows.Delete(ctx, rowFiles["f1.jpg"].UniqueName); err != nil {
		t.Fatal(err)
	}
	same(t, "a file deleted", bulk, rows)
}

// generation is the lake's list generation.
func generation(t *testing.T, l *lake.Lake) int {
	t.Helper()
	var n int
	if err := l.DB().R.QueryRow(`SELECT n FROM list_generation`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// countTables are the tables the triggers keep, with label_file's files by
// name (seqs and times differ between two lakes), and each one counted
// afresh from annotation and file.
var countTables = []struct{ name, kept, counted string }{
	{"label_files", `SELECT label, files FROM label_files`,
		`SELECT label, count(DISTINCT file_seq) FROM annotation GROUP BY label`},
	{"shape_counts", `SELECT type, annotations, files FROM shape_counts`,
		`SELECT type, count(*), count(DISTINCT file_seq) FROM annotation GROUP BY type`},
	{"source_files", `SELECT source, type, files FROM source_files`,
		`SELECT a.source, f.type, count(DISTINCT a.file_seq) FROM annotation a JOIN file f ON f.seq = a.file_seq GROUP BY 1, 2`},
	{"label_file", `SELECT l.label, f.name, l.type FROM label_file l JOIN file f ON f.seq = l.file_seq`,
		`SELECT DISTINCT a.label, f.name, f.type FROM annotation a JOIN file f ON f.seq = a.file_seq`},
}

// same fails t where bulk's kept counts differ from rows' or from bulk's
// own annotations, or where bulk holds its bulk_write marker.
func same(t *testing.T, when string, bulk, rows *lake.Lake) {
	t.Helper()
	for _, c := range countTables {
		kept := tableRows(t, bulk, c.kept)
		if len(kept) == 0 {
			t.Errorf("%s: %s is empty", when, c.name)
		}
		if want := tableRows(t, rows, c.kept); !slices.Equal(kept, want) {
			t.Errorf("%s: %s after the bulk writes\n%v\nafter rows one by one\n%v", when, c.name, kept, want)
		}
		if counted := tableRows(t, bulk, c.counted); !slices.Equal(kept, counted) {
			t.Errorf("%s: %s kept\n%v\ncounted\n%v", when, c.name, kept, counted)
		}
	}
	for _, d := range maintainedDiffs(t, bulk.DB().R) {
		t.Errorf("%s: %s", when, d)
	}
	if marks := tableRows(t, bulk, `SELECT one FROM bulk_write`); len(marks) > 0 {
		t.Errorf("%s: bulk_write holds %v after the writes", when, marks)
	}
}

// tableRows are q's rows, each as text, sorted.
func tableRows(t *testing.T, l *lake.Lake, q string) []string {
	t.Helper()
	rs, err := l.DB().R.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	slices.Sort(out)
	return out
}

// TestImportChangeLogEqualsTheTriggers: an import's insert into new files
// logs their sources in the writer's change log once, at its end, and
// leaves the log holding the rows its triggers log row by row (each file
// given a box once in the human source's listing, at its key; the label and
// file rows as before), and nothing deferred. Its counts stay those the
// triggers keep, and a file given to it that has annotations already (which
// its callers never do) is counted by the set-based statements instead.
func TestImportChangeLogEqualsTheTriggers(t *testing.T) {
	ctx := context.Background()
	boxes := [][]lake.Box{{box("car", 1), box("car", 5), box("person", 2)}, {box("dog", 3)}, {}, nil, {box("car", 7)}}
	var ups []lake.Upload
	for i := range boxes {
		ups = append(ups, mem(fmt.Sprintf("f%d.jpg", i), jpegBytes(t, 64, 48, uint8(10*i))))
	}
	write := func(l *lake.Lake) lake.File {
		t.Helper()
		res, err := l.Add(ctx, lake.AddOptions{Collection: "c", InTx: func(ctx context.Context, tx *sql.Tx, stored []lake.File) error {
			_, err := lake.InsertHumanBoxesTx(ctx, tx, "import:c", stored, func(f lake.File) []lake.Box {
				var i int
				fmt.Sscanf(f.Name, "f%d.jpg", &i)
				return boxes[i]
			})
			return err
		}}, ups)
		if err != nil || len(res.Stored) != len(ups) {
			t.Fatal(res, err)
		}
		return slices.DeleteFunc(res.Stored, func(f lake.File) bool { return f.Name != "f0.jpg" })[0]
	}
	logs := map[bool][]string{}
	lakes := map[bool]*lake.Lake{}
	first := map[bool]lake.File{}
	for _, deferred := range []bool{true, false} {
		l, _ := openLake(t)
		lake.MakeChangeLog(l)
		restore := lake.SetDeferSourceLog(deferred)
		first[deferred] = write(l)
		restore()
		rows, left, err := lake.ChangeLogRows(l)
		if err != nil || left != 0 {
			t.Fatalf("deferred %v: %d rows left deferred, %v", deferred, left, err)
		}
		logs[deferred], lakes[deferred] = rows, l
	}
	if !slices.Equal(logs[true], logs[false]) {
		t.Errorf("change log after the import's insert\n%v\nlogged row by row\n%v", logs[true], logs[false])
	}
	if n := len(slices.DeleteFunc(slices.Clone(logs[true]), func(r string) bool { return !strings.HasPrefix(r, "source human") })); n != 3 {
		t.Errorf("%d rows of the human source's listing, want 3 (the files given boxes): %v", n, logs[true])
	}
	same(t, "an import with the change log", lakes[true], lakes[false])

	// A file with annotations given to the insert again: counted from the rows.
	for deferred, l := range lakes {
		err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
			_, err := lake.InsertHumanBoxesTx(ctx, tx, "import:c", []lake.File{first[deferred]},
				func(lake.File) []lake.Box { return []lake.Box{box("bus", 4), box("car", 9)} })
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	same(t, "an insert into files with annotations", lakes[true], lakes[false])
}
