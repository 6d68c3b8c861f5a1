package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
)

var migrationName = regexp.MustCompile(`^(\d{3})_[a-z0-9_]+\.sql$`)

type migration struct {
	version int
	name    string
	sql     string
}

// Migrate applies the migrations in fsys (files named NNN_what.sql at its root,
// numbered from 001 without gaps) that owner has not applied yet, each in its
// own transaction. Applied migrations are never edited; a new change is a new file.
func (db *DB) Migrate(ctx context.Context, owner string, fsys fs.FS) error {
	ms, err := readMigrations(fsys)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", owner, err)
	}
	if _, err := db.W.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		owner      TEXT NOT NULL,
		version    INTEGER NOT NULL,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
		PRIMARY KEY (owner, version)
	) STRICT`); err != nil {
		return fmt.Errorf("migrate %s: %w", owner, err)
	}
	var current int
	if err := db.W.QueryRowContext(ctx,
		`SELECT coalesce(max(version), 0) FROM schema_migrations WHERE owner = ?`, owner).Scan(&current); err != nil {
		return fmt.Errorf("migrate %s: %w", owner, err)
	}
	if current > len(ms) {
		return fmt.Errorf("migrate %s: database is at version %d, this build knows %d: upgrade framelake", owner, current, len(ms))
	}
	for _, m := range ms[current:] {
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (owner, version, name) VALUES (?, ?, ?)`,
				owner, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s %s: %w", owner, m.name, err)
		}
	}
	return nil
}

func readMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		match := migrationName.FindStringSubmatch(e.Name())
		if e.IsDir() || match == nil {
			return nil, fmt.Errorf("unexpected migration file %q (want NNN_name.sql)", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(".", e.Name()))
		if err != nil {
			return nil, err
		}
		v, _ := strconv.Atoi(match[1])
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s out of sequence: want %03d", m.name, i+1)
		}
	}
	return ms, nil
}
