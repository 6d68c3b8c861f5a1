package appliance_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/benchlake"
)

// BenchmarkLeakage100k is get_dataset_leakage's work (read the version's
// frames and their hashes, find the pairs within 10 bits, count those across
// splits) on a version of 100,000 frames: generated lake rows, scores with
// random hashes of which every tenth is a near copy of an earlier one, and
// the version's rows written straight into the database, split 70/20/10.
func BenchmarkLeakage100k(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	dir := b.TempDir()
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: n, Labels: 1, Collections: 1}); err != nil {
		b.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	r := rand.New(rand.NewPCG(7, 8))
	scores := map[int64]lake.Quality{}
	hashes := make([]uint64, 0, n)
	err = a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT seq, unique_name FROM file ORDER BY seq`)
		if err != nil {
			return err
		}
		type file struct {
			seq  int64
			name string
		}
		var files []file
		for rows.Next() {
			var f file
			if err := rows.Scan(&f.seq, &f.name); err != nil {
				return err
			}
			files = append(files, f)
		}
		rows.Close()
		if _, err := tx.ExecContext(ctx, `INSERT INTO dataset_group (seq, id, name, seed, created_by, created_at, updated_at)
			VALUES (1, 'dsg_bench', 'bench', 1, 'bench', 0, 0)`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO dataset_version (seq, id, group_seq, version_no, status, job_id, recipe,
			current_build, created_by, created_at, updated_at) VALUES (1, 'dsv_bench', 1, 1, 'ready', 'job_bench', '{}', 1, 'bench', 0, 0)`); err != nil {
			return err
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO version_item (version_seq, build, ord, unique_name, name, file_seq,
			split, blob, ext, width, height) VALUES (1, 1, ?, ?, ?, ?, ?, 'x', 'jpg', 640, 480)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for i, f := range files {
			h := r.Uint64()
			if i%10 == 9 {
				h = hashes[r.IntN(i)] ^ 1<<r.IntN(64) ^ 1<<r.IntN(64)
			}
			hashes = append(hashes, h)
			scores[f.seq] = lake.Quality{Sharpness: 100, PHash: h}
			split := []string{"train", "train", "train", "train", "train", "train", "train", "test", "test", "validation"}[r.IntN(10)]
			if _, err := ins.ExecContext(ctx, i, f.name, f.name, f.seq, split); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = a.Lake.PutQuality(ctx, scores)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		l, err := a.Datasets.Leakage(ctx, "dsv_bench", 10)
		if err != nil || l.Frames != n || l.Crossing == 0 {
			b.Fatalf("%+v %v", l, err)
		}
		b.ReportMetric(float64(l.Pairs), "pairs")
		b.ReportMetric(float64(l.Crossing), "crossing")
	}
}
