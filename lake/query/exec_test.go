package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/sqlitedb"
)

// lakeDB opens a real database with the lake schema and a handful of files,
// collections, tags and boxes.
func lakeDB(t testing.TB) *sqlitedb.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "lake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "lake", os.DirFS("../migrations")); err != nil {
		t.Fatal(err)
	}
	const day = 86400000
	const jan1 = 1767225600000 // 2026-01-01T00:00:00Z
	stmts := []string{
		fmt.Sprintf(`INSERT INTO file (seq, id, unique_name, name, type, blob, ext, mime, size, width, height, frame_count, frame_rate, metadata, created_at, updated_at) VALUES
			(1, 'f1', 'u1', 'dog.JPG',   'image', 'b1', 'jpg', 'image/jpeg', 1000,     640,  480,  NULL, NULL,  '{"camera":"Canon EOS","iso":100}', %[1]d - 1, %[1]d),
			(2, 'f2', 'u2', 'cat.png',   'image', 'b2', 'png', 'image/png',  2000000,  1920, 1080, NULL, NULL,  '{"camera":"Nikon","iso":"100"}',  %[1]d,     %[1]d + 1),
			(3, 'f3', 'u3', 'clip.mp4',  'video', 'b3', 'mp4', 'video/mp4',  50000000, NULL, NULL, 300,  29.97, '{"iso":800,"Tags":"meta"}',       %[1]d + 30*%[2]d + %[2]d/2, %[1]d + 40*%[2]d),
			(4, 'f4', 'u4', 'notes.txt', 'other', 'b4', 'txt', 'text/plain', 10,       NULL, NULL, NULL, NULL,  '{}',                              %[1]d + 31*%[2]d, %[1]d + 31*%[2]d)`, jan1, day),
		`INSERT INTO file_tag (file_seq, name, created_at) VALUES (1, 'outdoor', 0), (1, 'dog', 0), (2, 'indoor', 0), (4, 'dog-ish', 0)`,
		`INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence, source, operation, created_at, updated_at) VALUES
			('a1', 1, 0,  'dog',    0, 0, 1, 1, NULL, 'human',   'p1', 0, 0),
			('a2', 1, 0,  'dog',    0, 0, 1, 1, 0.9,  'machine', 'r1', 0, 0),
			('a3', 1, 0,  'cat',    0, 0, 1, 1, 0.4,  'machine', 'r1', 0, 0),
			('a4', 2, 0,  'cat',    0, 0, 1, 1, NULL, 'human',   'p1', 0, 0),
			('a5', 3, 10, 'dog',    0, 0, 1, 1, 0.5,  'machine', 'r2', 0, 0),
			('a6', 3, 11, 'person', 0, 0, 1, 1, 0.7,  'machine', 'r2', 0, 0)`,
		`INSERT INTO collection (seq, id, name, type, metadata, created_at, updated_at) VALUES
			(1, 'c1', 'Summer', 'image_collection', '{"season":"summer"}', 0, 0),
			(2, 'c2', 'Clips',  'video_collection', '{}', 0, 0)`,
		`INSERT INTO collection_file (collection_seq, file_seq, added_at) VALUES (1, 1, 0), (1, 2, 0), (2, 3, 0)`,
		`INSERT INTO collection_tag (collection_seq, name, created_at) VALUES (1, 'best', 0)`,
	}
	for _, s := range stmts {
		if _, err := db.W.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return db
}

func TestExecute(t *testing.T) {
	db := lakeDB(t)
	files := []struct {
		q    string
		want []int
	}{
		{`annotation.label=dog`, []int{1, 3}},
		{`annotation.label=dog AND createdAt >= "2026-01-01"`, []int{3}},
		{`annotation.label != dog`, []int{2, 4}},
		{`NOT annotation.label = dog`, []int{2, 4}},
		{`annotation.label IN (person, cat) AND fileSize < 10MB`, []int{1, 2}},
		{`annotation.label ~ ERS`, []int{3}},
		{`annotation.source=human AND annotation.confidence >= 0.8`, []int{1}},
		{`annotation.confidence < 0.6`, []int{1, 3}},
		{`annotation.operation = r2`, []int{3}},
		{`annotation(label = dog AND source = machine)`, []int{1, 3}},
		{`annotation(label = cat AND source = human)`, []int{2}},
		{`annotation(label = dog AND confidence >= 0.8)`, []int{1}},
		{`annotation(label = dog AND NOT confidence >= 0.8)`, []int{1, 3}},
		{`annotation(label != dog)`, []int{1, 2, 3}},
		{`NOT annotation(label = dog)`, []int{2, 4}},
		{`annotation(frame >= 11 OR operation = p1)`, []int{1, 2, 3}},
		{`annotation.count >= 2`, []int{1, 3}},
		{`annotation.count(dog) >= 2`, []int{1}},
		{`annotation.count = 0`, []int{4}},
		{`annotation.count < 1`, []int{4}},
		{`annotation.count > 0`, []int{1, 2, 3}},
		{`annotation.count >= 1`, []int{1, 2, 3}},
		{`annotation.count != 0`, []int{1, 2, 3}},
		{`NOT annotation.count = 0`, []int{1, 2, 3}},
		{`annotation.count(dog) = 0`, []int{2, 4}},
		{`annotation.count(dog) > 0 AND annotation.count(cat) = 0`, []int{3}},
		{`Tags = dog`, []int{1}},
		{`metadata.Tags = dog`, []int{1}},
		{`Tags != dog`, []int{2, 3, 4}},
		{`Tags ~ DOG`, []int{1, 4}},
		{`Tags IN (indoor, outdoor)`, []int{1, 2}},
		{`Tags NOT IN (indoor, outdoor)`, []int{3, 4}},
		{`metadata."Tags" = meta`, []int{3}},
		{`collection = Summer`, []int{1, 2}},
		{`collection != Summer`, []int{3, 4}},
		{`type = video OR type = other`, []int{3, 4}},
		{`type != image`, []int{3, 4}},
		{`fileSize > 1MB`, []int{2, 3}},
		{`fileSize <= 10`, []int{4}},
		{`width >= 1920`, []int{2}},
		{`width != 640`, []int{2, 3, 4}},
		{`NOT width > 1000`, []int{1, 3, 4}},
		{`NOT (width > 1000 OR name = x)`, []int{1, 3, 4}},
		{`frameRate > 29 AND frameCount = 300`, []int{3}},
		{`metadata.iso >= 100`, []int{1, 3}},
		{`metadata.iso = "100"`, []int{2}},
		{`metadata.iso != 100`, []int{2, 3, 4}},
		{`metadata.camera ~ canon`, []int{1}},
		{`metadata.camera !~ canon`, []int{2, 3, 4}},
		{`metadata.camera > "M"`, []int{2}},
		{`metadata.iso IN (800, "100")`, []int{2, 3}},
		{`createdAt <= 2025-12-31`, []int{1}},
		{`createdAt < 2026-01-01T00:00:00Z`, []int{1}},
		{`createdAt = 2026-01`, []int{2, 3}},
		{`createdAt > 2026-01`, []int{4}},
		{`createdAt = 2026-01-31`, []int{3}},
		{`createdAt != 2026-01-31`, []int{1, 2, 4}},
		{`updatedAt >= 2026-02-01 AND updatedAt < 2026-03`, []int{3, 4}},
		{`name ~ .jp`, []int{1}},
		{`uniqueName = u2`, []int{2}},
		{`name >= d AND name < n`, []int{1}},
		{`(annotation.label = dog OR Tags = indoor) AND NOT type = video`, []int{1, 2}},
		{`annotation.label = "dog'; DROP TABLE file; --"`, nil},
		{``, []int{1, 2, 3, 4}},
	}
	for _, tt := range files {
		for _, shape := range []Shape{Page, Count} {
			got := run(t, db, tt.q, Options{Target: Files, Alias: "f", Shape: shape})
			if !slices.Equal(got, tt.want) {
				t.Errorf("files %q shape %d: got %v, want %v", tt.q, shape, got, tt.want)
			}
		}
	}
	collections := []struct {
		q    string
		want []int
	}{
		{`annotation.label = person`, []int{2}},
		{`annotation.count(dog) = 2`, []int{1}},
		{`fileCount >= 2`, []int{1}},
		{`fileSize > 10MB`, []int{2}},
		{`frameCount >= 300`, []int{2}},
		{`frameCount = 2`, []int{1}},
		{`Tags = best`, []int{1}},
		{`annotation(label = cat AND source = human)`, []int{1}},
		{`Tags != best`, []int{2}},
		{`type = video`, []int{2}},
		{`type IN (image_collection, other)`, []int{1}},
		{`metadata.season = summer OR name = Clips`, []int{1, 2}},
		{`createdAt < 2026-01-01`, []int{1, 2}},
	}
	for _, tt := range collections {
		for _, shape := range []Shape{Page, Count} {
			got := run(t, db, tt.q, Options{Target: Collections, Alias: "c", Shape: shape})
			if !slices.Equal(got, tt.want) {
				t.Errorf("collections %q shape %d: got %v, want %v", tt.q, shape, got, tt.want)
			}
		}
	}
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM file`).Scan(&n); err != nil || n != 4 {
		t.Fatalf("files after the queries: %d, %v", n, err)
	}
}

func run(t *testing.T, db *sqlitedb.DB, q string, o Options) []int {
	t.Helper()
	e, err := Parse(q)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	where, args, err := CompileWith(e, o)
	if err != nil {
		t.Fatalf("Compile(%q): %v", q, err)
	}
	table := map[Target]string{Files: "file", Collections: "collection"}[o.Target]
	stmt := fmt.Sprintf("SELECT %[1]s.seq FROM %[2]s %[1]s WHERE %[3]s ORDER BY %[1]s.seq", o.Alias, table, where)
	rows, err := db.R.Query(stmt, args...)
	if err != nil {
		t.Fatalf("%q: %s: %v", q, stmt, err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var seq int
		if err := rows.Scan(&seq); err != nil {
			t.Fatal(err)
		}
		got = append(got, seq)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLimitsExecute runs the largest queries the limits allow, so SQLite's own
// limits (expression depth, bound parameters) are known to be out of reach.
func TestLimitsExecute(t *testing.T) {
	db := lakeDB(t)
	values := strings.Repeat("x, ", MaxInList-1) + "dog"
	notDog := []int{1} // an even number of NOTs cancels out
	if MaxDepth%2 == 1 {
		notDog = []int{2, 3, 4}
	}
	cases := []struct {
		q    string
		want []int
	}{
		{strings.Repeat("(", MaxDepth) + "Tags = dog" + strings.Repeat(")", MaxDepth), []int{1}},
		{strings.Repeat("NOT ", MaxDepth) + "Tags = dog", notDog},
		{strings.Repeat("metadata.iso >= 1 AND ", MaxTerms-1) + "Tags = dog", []int{1}},
		{strings.Repeat("metadata.iso = 1 OR ", MaxTerms-1) + "Tags = dog", []int{1}},
		{strings.Repeat("Tags IN ("+values+") OR ", MaxValues/MaxInList-1) + "Tags IN (" + values + ")", []int{1}},
		{strings.Repeat("(NOT width = 640 OR ", MaxDepth/2) + "Tags = dog" + strings.Repeat(")", MaxDepth/2), []int{1, 2, 3, 4}},
	}
	for _, c := range cases {
		for _, shape := range []Shape{Page, Count} {
			if got := run(t, db, c.q, Options{Target: Files, Alias: "f", Shape: shape}); !slices.Equal(got, c.want) {
				t.Errorf("%.60s... (shape %v): got files %v, want %v", c.q, shape, got, c.want)
			}
		}
	}
}

// TestPlan pins the plans the benchmark query relies on. Without ANALYZE
// statistics (a fresh lake) SQLite plans by fixed heuristics, the same on
// four files as on a million.
func TestPlan(t *testing.T) {
	db := lakeDB(t)
	e, err := Parse(`annotation.label=dog AND createdAt >= "2026-01-01"`)
	if err != nil {
		t.Fatal(err)
	}
	plan := func(shape Shape, stmt string) string {
		where, args, err := CompileWith(e, Options{Target: Files, Alias: "f", Shape: shape})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.R.Query("EXPLAIN QUERY PLAN "+strings.Replace(stmt, "<q>", where, 1), append([]any{"image"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var id, parent, unused int
			var detail string
			rows.Scan(&id, &parent, &unused, &detail)
			b.WriteString(detail + "\n")
		}
		return b.String()
	}
	// A page walks the updated_at index and probes the annotation index per file.
	p := plan(Page, "SELECT f.id FROM file f WHERE f.type = ? AND <q> ORDER BY f.updated_at DESC, f.seq DESC LIMIT 20")
	if !strings.Contains(p, "USING INDEX file_type_updated") || strings.Contains(p, "TEMP B-TREE") ||
		!strings.Contains(p, "annotation_label (label=? AND file_seq=?)") {
		t.Errorf("page plan:\n%s", p)
	}
	// A count tests membership in the label's file list (index annotation_label).
	p = plan(Count, "SELECT count(*) FROM file f WHERE f.type = ? AND <q>")
	if !strings.Contains(p, "LIST SUBQUERY") || !strings.Contains(p, "COVERING INDEX annotation_label (label=?)") {
		t.Errorf("count plan:\n%s", p)
	}
}
