package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/framelake/framelake/internal/replica"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// replicaRestore is what restore --from URL prints.
type replicaRestore struct {
	Out string `json:"out"`
	// Position is Litestream's: the last transaction restored and when its
	// sync read the WAL. Every write acknowledged before that time is in.
	Position replica.Position `json:"position"`
	Files    int              `json:"files"` // rows of the lake
	// Media is the bucket the lake's media lives in, "" for the data
	// folder's media/, which the replica does not hold.
	Media   string  `json:"media,omitempty"`
	Seconds float64 `json:"seconds"`
}

// restoreReplica brings a data folder up from a replica: the database as
// of the newest replicated transaction, or as of at. The URL-signing key is
// made anew at the first start (media links signed before stop working).
func restoreReplica(ctx context.Context, from, data, at string, asJSON bool) error {
	var when time.Time
	if at != "" {
		var err error
		if when, err = time.Parse(time.RFC3339Nano, at); err != nil {
			return fmt.Errorf("--timestamp %q: use RFC 3339, e.g. 2026-11-25T16:04:05Z", at)
		}
	}
	if err := emptyFolder(data); err != nil {
		return err
	}
	start := time.Now()
	out := replicaRestore{Out: data}
	path := filepath.Join(data, "framelake.db")
	var err error
	// Litestream's progress notes would mix with what restore prints.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	slog.SetDefault(quiet)
	if out.Position, err = replica.Restore(ctx, from, path, when, quiet); err != nil {
		return err
	}
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Options{Readers: 1, Points: 1})
	if err != nil {
		return err
	}
	defer db.Close()
	if out.Media, err = lake.MediaLocation(ctx, db.R); err != nil {
		return err
	}
	if out.Files, err = lake.CountFiles(ctx, db.R); err != nil {
		return fmt.Errorf("read restored database: %w", err)
	}
	out.Seconds = time.Since(start).Seconds()
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(out)
	}
	fmt.Printf("restored the database to %s in %.1fs: %d files, as of %s (Litestream transaction %d)\n",
		data, out.Seconds, out.Files, out.Position.Time.Format(time.RFC3339Nano), out.Position.TXID)
	if out.Media != "" {
		fmt.Printf("the media is in %s, which the database names\n", out.Media)
	} else if out.Files > 0 {
		fmt.Printf("the media was in the old data folder's media/, which the replica does not hold: "+
			"copy it into %s (framelake check names what is missing)\n", filepath.Join(data, "media"))
	}
	return nil
}
