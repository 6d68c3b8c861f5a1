package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/dataset"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// cmdMedia runs the media subcommands; migrate is the one there is.
func cmdMedia(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "migrate" {
		return errors.New("usage: framelake media migrate --to URL [--data DIR]")
	}
	fs := flag.NewFlagSet("media migrate", flag.ContinueOnError)
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA); no server may be running on it")
	to := fs.String("to", "", "new media location: local, or s3://bucket/prefix?endpoint=URL&region=R "+
		"(credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)")
	workers := fs.Int("workers", 8, "blobs copied at once")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if err := parse(fs, args[1:], 0); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("--to is required (local, or an s3:// URL)")
	}
	dbPath := filepath.Join(*data, "framelake.db")
	if _, err := os.Stat(dbPath); err != nil {
		return fmt.Errorf("%s is not a framelake data folder: %w", *data, err)
	}
	lock, alone, err := appliance.TryExclusive(*data)
	if err != nil {
		return err
	}
	defer lock.Release()
	if !alone {
		return fmt.Errorf("a server or import has %s open: stop it, then migrate (the database must not change meanwhile)", *data)
	}
	db, err := sqlitedb.Open(ctx, dbPath, sqlitedb.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		return err
	}
	start := time.Now()
	r, err := lake.MigrateMedia(ctx, db, filepath.Join(*data, "media"), *to, *workers, dataset.VersionBlobs)
	if err != nil {
		return fmt.Errorf("media migrate: %w (run it again to resume; the lake still uses %s)", err, where(r.From))
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	fmt.Printf("media migrated from %s to %s: %d blobs, %d copied and verified now, %d by an earlier run, in %.1fs\n"+
		"the old location was left as it was; remove it once you no longer need it\n",
		where(r.From), where(r.To), r.Blobs, r.Copied, r.Resumed, time.Since(start).Seconds())
	return nil
}

// where names a media location for the command's output.
func where(url string) string {
	if url == "" {
		return "local"
	}
	return url
}
