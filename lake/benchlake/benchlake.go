// Package benchlake builds large generated lakes for benchmarks: file,
// collection and annotation rows written straight into a data folder's
// database (no media bytes), reproducible from a fixed seed.
package benchlake

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// Spec sizes a generated lake.
type Spec struct {
	Files, Boxes, Labels, Collections int
	// Cameras > 0 gives file i the metadata {"camera": "cam-<letter>"} of
	// camera i%Cameras and makes the collections one per camera, named like
	// their camera (Collections is then ignored): the shapes the load test
	// lists and counts.
	Cameras int
	// Media stores real JPEGs (a few, shared by the files) so media fetches
	// and uploads of the same bytes work against the generated rows.
	Media bool
}

// Camera is the name of camera i, also the name of its collection.
func Camera(i int) string { return fmt.Sprintf("cam-%c", 'a'+i) }

// FileName is the name of generated file i; UniqueName is its unique name.
func FileName(i int) string   { return fmt.Sprintf("img-%07d.jpg", i) }
func UniqueName(i int) string { return fmt.Sprintf("bench-img-%07d-x", i) }

// Labels are the generated label names: "dog" first, then label01, label02, ...
func Labels(n int) []string {
	out := []string{"dog"}
	for i := 1; i < n; i++ {
		out = append(out, fmt.Sprintf("label%02d", i))
	}
	return out
}

// Ensure builds the lake in dir unless a complete one is already there.
func Ensure(ctx context.Context, dir string, s Spec) error {
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Only the lake's tables: the binary adds the other owners' tables, the
	// signing key and the rest of the folder the first time it opens it.
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	span := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() - start
	if s.Cameras > 0 {
		s.Collections = s.Cameras
	}
	if err := insertCollections(ctx, db.W, s, start); err != nil {
		return err
	}
	blobs := []string{}
	if s.Media {
		if blobs, err = writeMedia(filepath.Join(dir, "media")); err != nil {
			return err
		}
	}
	if err := insertFiles(ctx, db.W, r, s, blobs, start, span); err != nil {
		return err
	}
	if err := insertBoxes(ctx, db.W, r, s, start, span); err != nil {
		return err
	}
	// No ANALYZE: framelake never runs it, and the query compiler's SQL
	// shapes are tuned for the planner without statistics.
	return os.WriteFile(done, []byte(fmt.Sprintf("%+v\n", s)), 0o644)
}

// batched runs fn for i in [0, n) in transactions of 50,000 rows.
func batched(ctx context.Context, db *sql.DB, n int, q string, fn func(i int, st *sql.Stmt) error) error {
	for lo := 0; lo < n; lo += 50000 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			tx.Rollback()
			return err
		}
		for i := lo; i < min(n, lo+50000); i++ {
			if err := fn(i, st); err != nil {
				tx.Rollback()
				return err
			}
		}
		st.Close()
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func insertCollections(ctx context.Context, db *sql.DB, s Spec, start int64) error {
	return batched(ctx, db, s.Collections, `INSERT INTO collection (seq, id, name, type, created_at, updated_at)
		VALUES (?, ?, ?, 'image_collection', ?, ?)`, func(i int, st *sql.Stmt) error {
		name := fmt.Sprintf("collection-%05d", i)
		if s.Cameras > 0 {
			name = Camera(i)
		}
		_, err := st.ExecContext(ctx, i+1, fmt.Sprintf("col_%010d", i), name, start, start)
		return err
	})
}

func insertFiles(ctx context.Context, db *sql.DB, r *rand.Rand, s Spec, blobs []string, start, span int64) error {
	err := batched(ctx, db, s.Files, `INSERT INTO file (seq, id, unique_name, name, type, blob, ext, mime, size,
		format, width, height, frame_count, metadata, created_at, updated_at)
		VALUES (?, ?, ?, ?, 'image', ?, 'jpg', 'image/jpeg', ?, 'jpeg', 640, 480, 1, ?, ?, ?)`,
		func(i int, st *sql.Stmt) error {
			created := start + r.Int64N(span)
			updated := created + r.Int64N(30*24*3600*1000)
			blob, meta := fmt.Sprintf("%064x", i), "{}"
			if len(blobs) > 0 {
				blob = blobs[i%len(blobs)]
			}
			if s.Cameras > 0 {
				meta = fmt.Sprintf(`{"camera":%q,"shot":%d}`, Camera(i%s.Cameras), i)
			}
			_, err := st.ExecContext(ctx, i+1, fmt.Sprintf("fil_%012d", i), UniqueName(i),
				FileName(i), blob, 20000+r.IntN(80000), meta, created, updated)
			return err
		})
	if err != nil {
		return err
	}
	return batched(ctx, db, s.Files, `INSERT INTO collection_file (collection_seq, file_seq, added_at) VALUES (?, ?, 0)`,
		func(i int, st *sql.Stmt) error {
			_, err := st.ExecContext(ctx, i%s.Collections+1, i+1)
			return err
		})
}

func insertBoxes(ctx context.Context, db *sql.DB, r *rand.Rand, s Spec, start, span int64) error {
	labels := Labels(s.Labels)
	return batched(ctx, db, s.Boxes, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence,
		source, operation, created_at, updated_at) VALUES (?, ?, 0, ?, 10, 20, 30, 40, ?, ?, 'op', ?, ?)`,
		func(i int, st *sql.Stmt) error {
			source, conf := "human", any(nil)
			if i%3 == 0 {
				source, conf = "machine", 0.5+r.Float64()/2
			}
			t := start + r.Int64N(span)
			_, err := st.ExecContext(ctx, fmt.Sprintf("ann_%012d", i), 1+r.IntN(s.Files), labels[r.IntN(len(labels))],
				conf, source, t, t)
			return err
		})
}
