package lake

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

// MediaLocation is where the lake's media lives as its database records it:
// "" for the local folder, else a canonical s3:// URL (CanonicalMediaURL).
// A database without the table yet (a first start interrupted) is local.
func MediaLocation(ctx context.Context, q sqlitedb.Querier) (string, error) {
	rows, err := q.QueryContext(ctx, `SELECT url FROM media_location WHERE id = 1`)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("media location: %w", err)
	}
	defer rows.Close()
	var url string
	if rows.Next() {
		if err := rows.Scan(&url); err != nil {
			return "", fmt.Errorf("media location: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("media location: %w", err)
	}
	return url, nil
}

// SetMediaLocation records where the media lives; "" is the local folder.
func SetMediaLocation(ctx context.Context, db *sqlitedb.DB, url string) error {
	return db.Tx(ctx, func(tx *sql.Tx) error {
		if url == "" {
			_, err := tx.ExecContext(ctx, `DELETE FROM media_location`)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO media_location (id, url) VALUES (1, ?)
			ON CONFLICT (id) DO UPDATE SET url = excluded.url`, url)
		return err
	})
}

// resolveMedia picks the lake's media location: the one the database
// records, which asked (Options.Media) must match unless the lake holds no
// file yet, when asked is recorded. Moving media that exists is the work of
// framelake media migrate, never of a flag.
func resolveMedia(ctx context.Context, db *sqlitedb.DB, asked string) (string, error) {
	want, err := CanonicalMediaURL(asked)
	if err != nil {
		return "", err
	}
	have, err := MediaLocation(ctx, db.R)
	if err != nil || asked == "" || want == have {
		return have, err
	}
	var used bool
	if err := db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM file)`).Scan(&used); err != nil {
		return "", err
	}
	if used {
		return "", errs.New(errs.FailedPrecondition, "media", "the lake's media is in %s, not %s: "+
			"framelake media migrate --to URL moves it", describeMedia(have), describeMedia(want))
	}
	return want, SetMediaLocation(ctx, db, want)
}

// describeMedia names a media location for people.
func describeMedia(url string) string {
	if url == "" {
		return "the local folder (local)"
	}
	return url
}

// openStore opens the store for a media location: the local folder, or a
// bucket with the local folder for temp files, journals and staged copies.
func openStore(ctx context.Context, dir, url string, stageBytes int64) (*DiskStore, error) {
	store, err := OpenDiskStore(dir)
	if err != nil || url == "" {
		return store, err
	}
	b, err := OpenBucket(ctx, url)
	if err != nil {
		return nil, err
	}
	return store, store.UseBucket(b, stageBytes)
}
