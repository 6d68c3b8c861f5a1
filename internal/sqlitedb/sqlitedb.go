// Package sqlitedb opens framelake's SQLite database: the modernc driver with
// sqlite-vec loaded, pragmas in the DSN so every pooled connection gets them,
// one writer connection (SQLite allows one writer; a Go-side single connection
// turns lock contention into queueing), a read-only pool for readers and a
// small read-only pool for point lookups. Every connection keeps its
// recently used statements prepared (stmtcache.go).
//
// Each domain package owns its tables and embeds its own numbered migrations
// (migrations/001_init.sql, ...); Migrate applies them in one transaction each
// and records them per package in schema_migrations.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite"     // database/sql driver "sqlite"
	_ "modernc.org/sqlite/vec" // registers sqlite-vec on every connection
)

// DB is a framelake database: W for writes (one connection), R for reads.
// Point is for reads of a row or a few by a unique key (an API key, a file
// by its unique name): on R such a lookup waited for whole listings ahead of
// it (file details at 0.29 ms alone took 350 ms at 64 clients); Point never
// holds one.
type DB struct {
	W     *sql.DB
	R     *sql.DB
	Point *sql.DB
	Path  string
	Vec   string // sqlite-vec version, checked at open

	turns    chan struct{} // Turn's queue: Options.Turns slots
	write    chan struct{} // Tx's queue: the one writer, one slot
	stats    writerStats
	prepares atomic.Int64 // statements the pools' connections prepared (stmtcache.go)
}

// Turn waits, first come first served, until one of R's connections is this
// caller's to use, and returns the function that gives it back. database/sql
// hands a freed connection to a random waiter, so on a saturated server an
// unlucky listing was passed over again and again (lists at 64 clients had a
// p99 of 300-344 ms); goroutines blocked sending on a channel are woken in
// order. Long reads of R (listings, counts) take a turn; others need not.
// There are Options.Turns of them, by default one a core: long reads are
// work for a core each, and more of them at once only shared the cores
// with the write transactions and point lookups of other requests (see
// Options.Turns).
func (db *DB) Turn(ctx context.Context) (release func(), err error) {
	select {
	case db.turns <- struct{}{}:
		return func() { <-db.turns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Options tune Open; the zero value is the production default.
type Options struct {
	Readers int // size of the reader pool; default max(4, 2*GOMAXPROCS)
	Points  int // size of the point-lookup pool; default max(4, 2*GOMAXPROCS), as Readers
	// Turns is how many long reads run at once (Turn); default max(2,
	// GOMAXPROCS), at most Readers. With one a reader connection (4 on 2
	// cores) the mixed load at 64 clients kept 4 listings running on 2 cores:
	// a write transaction then held the one writer about 12 ms for 2 ms of
	// work, waiting for a core, and every write queued behind it. Side by
	// side on a loaded machine, 2 turns against 4: 284 against 158 req/s,
	// p99 of uploads 323 against 397 ms, frame edits 333 against 492, file
	// details 111 against 300, lists 1.0-1.3 s against 1.5-1.7 s. Readers
	// past Turns serve reads that take no turn.
	Turns int
	// MmapSize is how much of the file is memory-mapped for reads; default
	// 256 MiB. Mapped pages count in the process's RSS, so the window is a
	// memory budget: reads past it go through SQLite's page cache.
	MmapSize int64
	// NoAutoCheckpoint leaves checkpoints to another party: Litestream,
	// which replicates the database from its WAL, must control them
	// (internal/replica). Without it SQLite checkpoints every 1000 pages.
	NoAutoCheckpoint bool
	// CheckpointPages is how many pages the WAL grows to before a commit
	// copies them into the database file; default SQLite's 1,000. A bulk
	// writer with no readers (import --data) wants more: an index page that
	// every batch touches is then written out once a checkpoint, not once a
	// commit or two.
	CheckpointPages int
}

var pragmas = []string{
	"busy_timeout(10000)",
	"journal_mode(WAL)",
	"foreign_keys(1)",
	"synchronous(NORMAL)",
	"temp_store(MEMORY)",
	"cache_size(-16000)", // 16 MB of page cache per connection
}

func dsn(path string, opt Options, readOnly bool) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", opt.MmapSize))
	switch {
	case opt.NoAutoCheckpoint:
		q.Add("_pragma", "wal_autocheckpoint(0)")
	case opt.CheckpointPages > 0:
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", opt.CheckpointPages))
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate") // take the write lock at BEGIN: no upgrade deadlocks
		// The one writer walks every index an insert touches; past a million
		// rows their interior pages outgrow 16 MB and each insert misses.
		q.Add("_pragma", "cache_size(-131072)")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens or creates the database at path.
func Open(ctx context.Context, path string, opt Options) (*DB, error) {
	if opt.Readers <= 0 {
		opt.Readers = max(4, 2*runtime.GOMAXPROCS(0))
	}
	if opt.Points <= 0 {
		opt.Points = max(4, 2*runtime.GOMAXPROCS(0))
	}
	if opt.Turns <= 0 {
		opt.Turns = max(2, runtime.GOMAXPROCS(0))
	}
	opt.Turns = min(opt.Turns, opt.Readers)
	if opt.MmapSize <= 0 {
		opt.MmapSize = 256 << 20
	}
	if err := ownerOnly(path); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{Path: path, turns: make(chan struct{}, opt.Turns), write: make(chan struct{}, 1)}
	w, err := openCaching(dsn(path, opt, false), &db.prepares)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	db.W = w
	// The writer creates the file and switches it to WAL before readers connect.
	if err := w.QueryRowContext(ctx, "SELECT vec_version()").Scan(&db.Vec); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: sqlite-vec not available: %w", path, err)
	}
	if db.R, err = readers(ctx, path, opt, opt.Readers, &db.prepares); err != nil {
		w.Close()
		return nil, err
	}
	if db.Point, err = readers(ctx, path, opt, opt.Points, &db.prepares); err != nil {
		w.Close()
		db.R.Close()
		return nil, err
	}
	return db, nil
}

// ownerOnly creates the database file readable by its owner alone, as it
// holds API key hashes, and narrows one a release before made 0644. SQLite
// gives the -wal and -shm files the database file's mode; ones left by an
// older release are narrowed too.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func readers(ctx context.Context, path string, opt Options, n int, prepares *atomic.Int64) (*sql.DB, error) {
	r, err := openCaching(dsn(path, opt, true), prepares)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return r, nil
}

// Close closes the pools.
func (db *DB) Close() error {
	return errors.Join(db.Point.Close(), db.R.Close(), db.W.Close())
}

// Tx runs fn in a write transaction, committing when it returns nil.
//
// Transactions take the one writer first come first served: database/sql
// hands its freed connection to a random waiter, so under a mixed load at
// 64 clients an unlucky upload or patch was passed over again and again
// (upload p99 944 ms, over ten times its p50). Goroutines blocked sending on
// a channel are woken in order. How long each waited and held the writer is
// counted in WriterStats.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	asked := time.Now()
	select {
	case db.write <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	got := time.Now()
	defer func() {
		<-db.write
		db.stats.add(got.Sub(asked), time.Since(got))
	}()
	tx, err := db.W.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
