package appliance_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/lake/benchlake"
)

// BenchmarkDiff100kVersions compares two versions of 100,000 frames with 3
// boxes each (issue 21: < 5 s): the second drops 5,000 frames, adds 5,000,
// moves 5,000 to another split and changes a box on 5,000. The lake is
// generated once under .bench/; the versions' rows are written straight
// into it, as a build would leave them.
func BenchmarkDiff100kVersions(b *testing.B) {
	dir, err := filepath.Abs(filepath.Join("..", ".bench", "diff-105k"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: 105_000, Labels: 1, Collections: 1}); err != nil {
		b.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	from, to := diffVersions(b, a)
	cpu0 := cpuTime()
	for b.Loop() {
		d, err := a.Datasets.Diff(ctx, from, to)
		if err != nil || d.Frames.Added != 5000 || d.Frames.Removed != 5000 || d.Frames.Moved != 5000 ||
			d.Boxes["car"].Changed != 5000 {
			b.Fatalf("%+v %v", d.Frames, err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/diff")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/diff")
}

// diffVersions writes (once) a dataset with the two versions and returns their ids.
func diffVersions(b *testing.B, a *appliance.Appliance) (string, string) {
	ctx := context.Background()
	db := a.Lake.DB()
	var n int
	db.R.QueryRowContext(ctx, `SELECT count(*) FROM dataset_version WHERE id IN ('dsv_bench1', 'dsv_bench2')`).Scan(&n)
	if n == 2 {
		return "dsv_bench1", "dsv_bench2"
	}
	splits := []string{"train", "train", "train", "validation", "test"}
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO dataset_group (seq, id, name, seed, created_by, created_at, updated_at)
			VALUES (1, 'dsg_bench', 'bench', 7, 'bench', 0, 0)`); err != nil {
			return err
		}
		for v := 1; v <= 2; v++ {
			if _, err := tx.ExecContext(ctx, `INSERT INTO dataset_version (seq, id, group_seq, version_no, status, job_id,
				recipe, current_build, created_by, created_at, updated_at) VALUES (?, ?, 1, ?, 'ready', 'job_bench',
				'{"labels": ["car", "bus", "person"]}', 1, 'bench', 0, 0)`, v, fmt.Sprintf("dsv_bench%d", v), v); err != nil {
				return err
			}
		}
		st, err := tx.PrepareContext(ctx, `INSERT INTO version_item (version_seq, build, ord, unique_name, name, file_seq,
			split, blob, ext, width, height, boxes, box_count) VALUES (?, 1, ?, ?, ?, ?, ?, 'b', 'jpg', 640, 480, ?, 3)`)
		if err != nil {
			return err
		}
		defer st.Close()
		boxes := func(i int, moved bool) string {
			x := i % 400
			if moved {
				x += 3
			}
			return fmt.Sprintf(`[{"label":"car","x":%d,"y":20,"w":40,"h":30},{"label":"bus","x":300,"y":200,"w":80,"h":60},`+
				`{"label":"person","x":10,"y":400,"w":20,"h":50}]`, x)
		}
		// Version 1 holds files 0..99,999; version 2 files 5,000..104,999, with
		// files 10,000..14,999 in another split and 15,000..19,999's car moved.
		for i := range 100_000 {
			if _, err := st.ExecContext(ctx, 1, i, benchlake.UniqueName(i), benchlake.FileName(i), i+1,
				splits[i%5], boxes(i, false)); err != nil {
				return err
			}
			j := i + 5000
			split := splits[j%5]
			if j >= 10_000 && j < 15_000 {
				split = splits[(j+3)%5]
				if split == splits[j%5] {
					split = map[string]string{"train": "test", "test": "train", "validation": "train"}[split]
				}
			}
			if _, err := st.ExecContext(ctx, 2, i, benchlake.UniqueName(j), benchlake.FileName(j), j+1, split,
				boxes(j, j >= 15_000 && j < 20_000)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return "dsv_bench1", "dsv_bench2"
}
