package lake

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/media"
)

// CountFiles counts the lake's files in a database that need not be open as
// a Lake (framelake restore reports it for the database it restored).
func CountFiles(ctx context.Context, q sqlitedb.Querier) (int, error) {
	n, err := sqlitedb.Int64s(ctx, q, `SELECT count(*) FROM file`)
	if err != nil || len(n) == 0 {
		return 0, err
	}
	return int(n[0]), nil
}

// MediaLocation is where the lake's media lives as its database records it:
// "" for the local folder, else a canonical s3:// URL (media.CanonicalURL).
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
	want, err := media.CanonicalURL(asked)
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
