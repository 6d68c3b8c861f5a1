package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func open(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenPragmasAndVec(t *testing.T) {
	db := open(t)
	if !strings.HasPrefix(db.Vec, "v0.1.") {
		t.Fatalf("vec_version = %q", db.Vec)
	}
	for _, pool := range []*sql.DB{db.W, db.R, db.Point} {
		var mode string
		var fk, busy, sync int
		var mmap int64
		if err := pool.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		pool.QueryRow("PRAGMA foreign_keys").Scan(&fk)
		pool.QueryRow("PRAGMA busy_timeout").Scan(&busy)
		pool.QueryRow("PRAGMA synchronous").Scan(&sync)
		pool.QueryRow("PRAGMA mmap_size").Scan(&mmap)
		if mode != "wal" || fk != 1 || busy != 10000 || sync != 1 || mmap != 256<<20 {
			t.Fatalf("pragmas: journal_mode=%s foreign_keys=%d busy_timeout=%d synchronous=%d (1 is NORMAL) mmap_size=%d",
				mode, fk, busy, sync, mmap)
		}
	}
	if _, err := db.R.Exec("CREATE TABLE x (a)"); err == nil {
		t.Fatal("reader pool accepted a write")
	}
}

func TestMigrate(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	v1 := fstest.MapFS{"001_init.sql": {Data: []byte("CREATE TABLE a (id INTEGER PRIMARY KEY) STRICT;")}}
	if err := db.Migrate(ctx, "pkg", v1); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "pkg", v1); err != nil { // idempotent
		t.Fatal(err)
	}
	v2 := fstest.MapFS{
		"001_init.sql": v1["001_init.sql"],
		"002_more.sql": {Data: []byte("CREATE TABLE b (id INTEGER PRIMARY KEY) STRICT; INSERT INTO a VALUES (1);")},
	}
	if err := db.Migrate(ctx, "pkg", v2); err != nil {
		t.Fatal(err)
	}
	var n int
	db.R.QueryRow("SELECT count(*) FROM schema_migrations WHERE owner='pkg'").Scan(&n)
	if n != 2 {
		t.Fatalf("recorded %d migrations, want 2", n)
	}
	if err := db.Migrate(ctx, "pkg", v1); err == nil || !strings.Contains(err.Error(), "upgrade framelake") {
		t.Fatalf("older build on newer database: %v", err)
	}
}

func TestMigrateBadFiles(t *testing.T) {
	db := open(t)
	cases := map[string]fstest.MapFS{
		"gap":      {"001_a.sql": {Data: []byte("SELECT 1;")}, "003_c.sql": {Data: []byte("SELECT 1;")}},
		"bad name": {"1_a.sql": {Data: []byte("SELECT 1;")}},
	}
	for name, fsys := range cases {
		if err := db.Migrate(context.Background(), name, fsys); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A failing migration leaves nothing of itself behind.
	broken := fstest.MapFS{"001_a.sql": {Data: []byte("CREATE TABLE t (a) STRICT; CREATE TABLE t (b);")}}
	if err := db.Migrate(context.Background(), "broken", broken); err == nil {
		t.Fatal("broken migration applied")
	}
	if _, err := db.R.Exec("SELECT * FROM t"); err == nil {
		t.Fatal("half-applied migration visible")
	}
}

func TestTxRollsBack(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	db.W.Exec("CREATE TABLE t (a INTEGER) STRICT")
	boom := errors.New("boom")
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		tx.Exec("INSERT INTO t VALUES (1)")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	var n int
	db.R.QueryRow("SELECT count(*) FROM t").Scan(&n)
	if n != 0 {
		t.Fatal("rolled-back row visible")
	}
}

// TestOwnerOnly: the database holds key hashes, so it and its -wal and -shm
// files are readable by their owner alone, also when an older release left
// them 0644.
func TestOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	check := func(when string) {
		t.Helper()
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if m := fi.Mode().Perm(); m != 0o600 {
				t.Errorf("%s: %s is %o, want 600", when, filepath.Base(p), m)
			}
		}
	}
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec("CREATE TABLE k (h TEXT)"); err != nil {
		t.Fatal(err)
	}
	check("new database")
	db.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check("database an older release made 0644")
}

// A point lookup must not wait for a reader: with every connection of R
// held by long reads, Point still answers (and refuses writes like R).
func TestPointLookupsDoNotQueueBehindReaders(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), Options{Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.W.Exec(`CREATE TABLE k (id TEXT PRIMARY KEY); INSERT INTO k VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	held, err := db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback()
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var id string
	if err := db.Point.QueryRowContext(short, `SELECT id FROM k WHERE id = 'a'`).Scan(&id); err != nil || id != "a" {
		t.Fatalf("point lookup with R busy: %q, %v", id, err)
	}
	if _, err := db.Point.ExecContext(ctx, `INSERT INTO k VALUES ('b')`); err == nil {
		t.Fatal("the point pool wrote")
	}
}

// Turn hands out as many turns as R has connections; the next waits (here
// until its context ends) and gets one as soon as a turn is given back.
func TestTurnsMatchReaders(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), Options{Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first, err := db.Turn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Turn(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := db.Turn(short); err != context.DeadlineExceeded {
		t.Fatalf("a third turn of two: %v, want the context's deadline", err)
	}
	got := make(chan error, 1)
	go func() {
		release, err := db.Turn(ctx)
		if err == nil {
			release()
		}
		got <- err
	}()
	first()
	if err := <-got; err != nil {
		t.Fatalf("a turn after one came back: %v", err)
	}
}

// TestAutoCheckpoint: by default a commit past 1,000 pages of WAL copies
// them into the database and the WAL starts over; with NoAutoCheckpoint no
// connection checkpoints on commit (Litestream must control checkpoints),
// so the WAL keeps growing; CheckpointPages moves the mark.
func TestAutoCheckpoint(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opt        Options
		want       int
		checkpoint bool // 1800 pages written pass the mark
	}{
		{Options{}, 1000, true},
		{Options{NoAutoCheckpoint: true}, 0, false},
		{Options{CheckpointPages: 5000}, 5000, false},
		{Options{CheckpointPages: 500}, 500, true},
	} {
		path := filepath.Join(t.TempDir(), "t.db")
		db, err := Open(ctx, path, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, pool := range []*sql.DB{db.W, db.R, db.Point} {
			var n int
			if err := pool.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&n); err != nil || n != c.want {
				t.Fatalf("%+v: wal_autocheckpoint %d (%v), want %d", c.opt, n, err, c.want)
			}
		}
		if _, err := db.W.ExecContext(ctx, `CREATE TABLE b (x BLOB)`); err != nil {
			t.Fatal(err)
		}
		for range 3 { // 3 x 600 pages of 4 KiB: past 1000 pages
			if _, err := db.W.ExecContext(ctx, `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM s WHERE n < 600)
				INSERT INTO b SELECT randomblob(4000) FROM s`); err != nil {
				t.Fatal(err)
			}
		}
		st, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if pages := st.Size() / (4096 + 24); c.checkpoint == (pages >= 1800) {
			t.Fatalf("%+v: the WAL holds %d pages after 1800 written", c.opt, pages)
		}
		db.Close()
	}
}
