package dataset

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// TestItemOutlivesFileMigration: a database made before migration 003 keeps
// its version items through it, and afterwards a deleted file leaves its
// items (file_seq NULL) while a deleted version still takes its own.
func TestItemOutlivesFileMigration(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "t.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{}
	for _, name := range []string{"001_init.sql", "002_item_blob.sql"} {
		b, err := fs.ReadFile(Migrations, name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = &fstest.MapFile{Data: b}
	}
	if err := db.Migrate(ctx, "dataset", old); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.W.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO file (seq, id, unique_name, name, type, blob, ext, mime, size, created_at, updated_at)
		VALUES (1, 'fil_1', 'a-1', 'a.jpg', 'image', 'h1', 'jpg', 'image/jpeg', 3, 0, 0)`)
	exec(`INSERT INTO dataset_group (seq, id, name, seed, created_by, created_at, updated_at) VALUES (1, 'dsg_1', 'g', 7, 'me', 0, 0)`)
	exec(`INSERT INTO dataset_version (seq, id, group_seq, version_no, status, job_id, recipe, current_build, created_by,
		created_at, updated_at) VALUES (1, 'dsv_1', 1, 1, 'ready', 'job_1', '{}', 1, 'me', 0, 0)`)
	exec(`INSERT INTO version_item (version_seq, build, ord, unique_name, name, file_seq, split, blob, ext, width, height,
		boxes, box_count) VALUES (1, 1, 0, 'a-1', 'a.jpg', 1, 'train', 'h1', 'jpg', 4, 3, '[{"label":"car"}]', 1)`)
	if err := db.Migrate(ctx, "dataset", Migrations); err != nil {
		t.Fatal(err)
	}
	var name, boxes string
	var fileSeq sql.NullInt64
	if err := db.R.QueryRowContext(ctx, `SELECT name, file_seq, boxes FROM version_item WHERE version_seq = 1`).
		Scan(&name, &fileSeq, &boxes); err != nil || name != "a.jpg" || fileSeq.Int64 != 1 || boxes != `[{"label":"car"}]` {
		t.Fatalf("item after the migration: %q %v %q %v", name, fileSeq, boxes, err)
	}
	exec(`DELETE FROM file WHERE seq = 1`)
	if err := db.R.QueryRowContext(ctx, `SELECT file_seq FROM version_item WHERE version_seq = 1`).Scan(&fileSeq); err != nil || fileSeq.Valid {
		t.Fatalf("item after its file was deleted: %v %v", fileSeq, err)
	}
	exec(`DELETE FROM dataset_version WHERE seq = 1`)
	var n int
	db.R.QueryRowContext(ctx, `SELECT count(*) FROM version_item`).Scan(&n)
	if n != 0 {
		t.Errorf("%d items outlive their version", n)
	}
	var idx int
	db.R.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('version_item_file', 'version_item_blob')`).Scan(&idx)
	if idx != 2 {
		t.Errorf("%d of the two indexes after the rebuild", idx)
	}
}
