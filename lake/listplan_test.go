package lake_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// planLake holds 40 files: f00-f24 in collection north, f25-f39 in south,
// metadata cam = a or b (and an odd numeric iso), a few patched afterwards
// so date_modified differs from upload order.
func planLake(t *testing.T) (*lake.Lake, map[string]string) {
	t.Helper()
	ctx := context.Background()
	l, _ := openLake(t)
	colls := map[string]string{}
	for _, part := range []struct {
		coll     string
		from, to int
	}{{"north", 0, 25}, {"south", 25, 40}} {
		var ups []lake.Upload
		for i := part.from; i < part.to; i++ {
			ups = append(ups, mem(fmt.Sprintf("f%02d.jpg", i), testmedia.JPEG(8+i%5, 8, i)))
		}
		res, err := l.Add(ctx, lake.AddOptions{Collection: part.coll}, ups)
		if err != nil || len(res.Stored) != part.to-part.from {
			t.Fatalf("add: %v", err)
		}
		for i, f := range res.Stored {
			meta := fmt.Sprintf(`{"cam":%q,"iso":%d}`, []string{"a", "b"}[i%2], 100*(i%3))
			if _, err := l.PatchFileMetadata(ctx, f.UniqueName, json.RawMessage(meta)); err != nil {
				t.Fatal(err)
			}
		}
		c, err := l.CollectionByName(ctx, part.coll)
		if err != nil {
			t.Fatal(err)
		}
		colls[part.coll] = c.ID
	}
	return l, colls
}

// want lists the files of sel the slow way (every match, sorted in Go).
func want(t *testing.T, l *lake.Lake, sel lake.Selection, s lake.Sort, page, size int) []string {
	t.Helper()
	var all []lake.File
	if err := l.EachFile(context.Background(), sel, func(f lake.File) error { all = append(all, f); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all, func(a, b lake.File) int {
		var c int
		switch s.Field {
		case "date_created":
			c = a.CreatedAt.Compare(b.CreatedAt)
		case "name":
			c = strings.Compare(a.Name, b.Name)
		case "size":
			c = cmp.Compare(a.Size, b.Size)
		case "video_index":
			c = cmp.Compare(videoIndex(a), videoIndex(b))
		default:
			c = a.UpdatedAt.Compare(b.UpdatedAt)
		}
		if c == 0 {
			c = cmp.Compare(a.Seq(), b.Seq())
		}
		if s.Order == "DESC" {
			c = -c
		}
		return c
	})
	lo, hi := min(page*size, len(all)), min((page+1)*size, len(all))
	return names(all[lo:hi])
}

// videoIndex sorts a missing index first, as SQLite sorts NULL.
func videoIndex(f lake.File) int {
	if f.VideoIndex == nil {
		return -1
	}
	return *f.VideoIndex
}

// TestSetDrivenListingsMatchEveryFile pages through selections that a set
// drives (a collection, a metadata value) in every sort and compares each
// page and count with all matching files sorted in Go, before and after
// patches that move files in date_modified order.
func TestSetDrivenListingsMatchEveryFile(t *testing.T) {
	ctx := context.Background()
	l, colls := planLake(t)
	sels := []lake.Selection{
		{CollectionID: colls["north"]},
		{CollectionID: colls["north"], ItemType: "image", Query: "metadata.cam = a"},
		{Query: "collection = north"},
		{Query: "collection = nowhere"},
		{Query: "collection = south AND name ~ 3"},
		{Query: "metadata.cam = b"},
		{Query: "metadata.iso = 200"},
		{Query: `metadata.iso = "200"`},
		{Query: "metadata.cam = a AND collection = south"},
		{Query: "NOT metadata.cam = a"},
		{Query: `name = "f07.jpg"`},
		{Query: `name IN ("f07.jpg", "f30.jpg") AND collection = south`},
		{},
	}
	check := func(when string) {
		for _, sel := range sels {
			n, err := l.Count(ctx, sel)
			if w := len(want(t, l, sel, lake.Sort{}, 0, 1000)); err != nil || n != w {
				t.Errorf("%s: count %+v = %d, %v; want %d", when, sel, n, err, w)
			}
			for _, field := range []string{"date_modified", "date_created", "name", "size", "video_index"} {
				for _, order := range []string{"ASC", "DESC"} {
					s := lake.Sort{Field: field, Order: order}
					for page := range 5 {
						got, err := l.ListFiles(ctx, sel, page, 4, s)
						if w := want(t, l, sel, s, page, 4); err != nil || !slices.Equal(names(got), w) {
							t.Errorf("%s: %+v %s %s page %d: %v %v, want %v", when, sel, field, order, page, names(got), err, w)
						}
					}
				}
			}
		}
	}
	check("after upload")
	if cs, err := l.ListCollections(ctx, lake.Selection{ItemType: "image_collection", Query: "name = north"}, 1, 1,
		lake.Sort{}); err != nil || len(cs) != 0 {
		t.Errorf("collections named north, page 1: %v %v", cs, err)
	}
	if cs, err := l.ListCollections(ctx, lake.Selection{ItemType: "image_collection", Query: "name = north"}, 0, 1,
		lake.Sort{}); err != nil || len(cs) != 1 || cs[0].Name != "north" {
		t.Errorf("collections named north: %v %v", cs, err)
	}
	for _, n := range []string{"f03.jpg", "f30.jpg", "f11.jpg"} {
		fs, err := l.ListFiles(ctx, lake.Selection{Query: fmt.Sprintf("name = %q", n)}, 0, 1, lake.Sort{})
		if err != nil || len(fs) != 1 {
			t.Fatal(n, err)
		}
		if _, err := l.PatchFileMetadata(ctx, fs[0].UniqueName, json.RawMessage(`{"cam":"b","iso":200}`)); err != nil {
			t.Fatal(err)
		}
	}
	check("after patches")
}

// TestListingPlans pins the index each listing shape reads, as SQLite plans
// it without statistics: the plans are what makes them fast at 100,000 files
// (a timed test would be flaky).
func TestListingPlans(t *testing.T) {
	l, colls := planLake(t)
	type shape struct {
		name  string
		sql   func() (string, []any, error)
		wants []string
	}
	page := func(sel lake.Selection, idx int, s lake.Sort) func() (string, []any, error) {
		return func() (string, []any, error) { return l.PageSQL(sel, idx, 20, s) }
	}
	count := func(sel lake.Selection) func() (string, []any, error) {
		return func() (string, []any, error) { return l.CountSQL(sel) }
	}
	name := lake.Selection{Query: `name = "f07.jpg"`}
	shapes := []shape{
		{"name = page", page(name, 0, lake.Sort{}), []string{"SEARCH f USING INDEX file_type_name (type=? AND name=?)"}},
		{"collection = page 50", page(lake.Selection{Query: "collection = north"}, 50, lake.Sort{}),
			[]string{"SEARCH d USING COVERING INDEX collection_file_updated (collection_seq=?)", "SEARCH f USING INTEGER PRIMARY KEY"}},
		{"collection files by name", page(lake.Selection{CollectionID: colls["south"]}, 50, lake.Sort{Field: "name", Order: "ASC"}),
			[]string{"SEARCH d USING COVERING INDEX collection_file_name (collection_seq=?)"}},
		{"collection files and a query", page(lake.Selection{CollectionID: colls["south"], Query: "width > 3"}, 50, lake.Sort{}),
			[]string{"SEARCH d USING COVERING INDEX collection_file_updated (collection_seq=?)", "SEARCH f USING INTEGER PRIMARY KEY"}},
		{"metadata = page 50", page(lake.Selection{Query: "metadata.cam = a"}, 50, lake.Sort{}),
			[]string{"SEARCH d USING COVERING INDEX file_meta_value (key=? AND value=? AND type=?)"}},
		{"metadata = count", count(lake.Selection{Query: "metadata.cam = a"}),
			[]string{"SEARCH d USING COVERING INDEX file_meta_value (key=? AND value=? AND type=?)"}},
		{"collection = count", count(lake.Selection{Query: "collection = north"}),
			[]string{"SEARCH d USING COVERING INDEX collection_file_"}},
		{"plain page 50", page(lake.Selection{}, 50, lake.Sort{}), []string{"SEARCH f USING COVERING INDEX file_type_updated (type=?)"}},
	}
	for _, s := range shapes {
		q, args, err := s.sql()
		if err != nil {
			t.Fatal(s.name, err)
		}
		rows, err := l.DB().R.Query("EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(s.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		for _, w := range s.wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s: plan lacks %q:\n%s\n%s", s.name, w, text, q)
			}
		}
		if strings.Contains(text, "SCAN f") {
			t.Errorf("%s: plan scans the file table:\n%s", s.name, text)
		}
	}
}

// TestMigrationCopiesExistingRows upgrades a lake made before migration 002:
// collection members get their files' sort keys and every file's scalar
// metadata lands in file_meta, so old lakes list and count as new ones do.
func TestMigrationCopiesExistingRows(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first, err := fs.ReadFile(lake.Migrations, "001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "lake", fstest.MapFS{"001_init.sql": {Data: first}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 257)
	if _, err := db.W.Exec(`INSERT INTO file (seq, id, unique_name, name, type, blob, ext, mime, size, metadata, created_at, updated_at)
		VALUES (1, 'f1', 'u1', 'a.jpg', 'image', 'b', 'jpg', 'image/jpeg', 10, json_object('cam', 'a', 'iso', 100, 'ok', json('true'), 'long', ?, 'o', json('{"k":1}')), 5, 7);
		INSERT INTO collection (seq, id, name, type, created_at, updated_at) VALUES (1, 'c1', 'north', 'image_collection', 0, 0);
		INSERT INTO collection_file (collection_seq, file_seq, added_at) VALUES (1, 1, 0)`, long); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	var typ, name string
	var updated, created, size int64
	if err := db.R.QueryRow(`SELECT type, updated_at, created_at, name, size FROM collection_file`).Scan(&typ, &updated, &created, &name, &size); err != nil ||
		typ != "image" || updated != 7 || created != 5 || name != "a.jpg" || size != 10 {
		t.Errorf("member keys: %s %d %d %s %d %v", typ, updated, created, name, size, err)
	}
	rows, err := db.R.Query(`SELECT key || '=' || value || ':' || typeof(value) FROM file_meta ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		got = append(got, s)
	}
	rows.Close()
	if want := []string{"cam=a:text", "iso=100:integer", "ok=1:integer"}; !slices.Equal(got, want) {
		t.Errorf("file_meta %v, want %v", got, want)
	}
}
