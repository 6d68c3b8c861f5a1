package evaluate_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/lake/benchlake"
	"github.com/framelake/framelake/lake/shape"
)

// The segm figure: 20,000 images (640x480) with 100,000 human and
// 200,000 predicted masks (5 and 10 a file: each human mask found again,
// shifted and scaled a little, and 5 spurious ones), 10 labels.
const (
	segmFiles    = 20_000
	segmHuman    = 5
	segmSpurious = 5
)

// BenchmarkEvaluateSegm20k runs a whole iou_type segm evaluation job over
// the generated lake, kept in $FRAMELAKE_SEGM_BENCH_DIR (default a folder in
// the temp dir) between runs, and reports its CPU time and the peak RSS of
// the evaluation alone (issue 32: under 30 s and 1 GB).
//
//	go test ./evaluate -run '^$' -bench EvaluateSegm20k -benchtime 1x -cpu 2
func BenchmarkEvaluateSegm20k(b *testing.B) {
	a := openBenchLake(b, "FRAMELAKE_SEGM_BENCH_DIR", "framelake-segm-bench-v1", ensureMasks)
	evaluateEach(b, a, evaluate.Request{PredRunID: benchRun, IoUType: evaluate.IoUSegm})
}

// ensureMasks makes the lake's files (benchlake) and then the masks.
func ensureMasks(ctx context.Context, dir string) error {
	return ensureShapes(ctx, dir, "masks-complete", segmFiles, 10, rand.NewPCG(5, 6), insertMasks)
}

// ensureShapes makes a bench lake of files files and labels labels in dir,
// unless marker says it is made, and inserts its shapes 2,000 files at a
// time with insert.
func ensureShapes(ctx context.Context, dir, marker string, files, labels int, src rand.Source,
	insert func(ctx context.Context, db *sql.DB, r *rand.Rand, lo, hi int) error) error {
	done := filepath.Join(dir, marker)
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	os.RemoveAll(dir)
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: files, Labels: labels, Collections: 1}); err != nil {
		return err
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer a.Close()
	r := rand.New(src)
	for lo := 0; lo < files; lo += 2000 {
		if err := insert(ctx, a.Lake.DB().W, r, lo, min(files, lo+2000)); err != nil {
			return err
		}
	}
	return os.WriteFile(done, nil, 0o644)
}

// blob is a mask of a lumpy ellipse of 32 vertices centred at (cx, cy) with
// radii rx, ry on a 640x480 frame, with its box and area.
func blob(r *rand.Rand, cx, cy, rx, ry float64) (geometry string, box shape.Rect, area int) {
	xy := make([]float64, 0, 64)
	for i := range 32 {
		a := 2 * math.Pi * float64(i) / 32
		k := 0.85 + 0.3*r.Float64()
		xy = append(xy, cx+rx*k*math.Cos(a), cy+ry*k*math.Sin(a))
	}
	m := shape.FromRing(xy, 480, 640)
	g, _ := json.Marshal(shape.EncodedMask{Size: [2]int{480, 640}, Counts: m.String()})
	return string(g), m.Bounds(), m.Area()
}

func insertMasks(ctx context.Context, db *sql.DB, r *rand.Rand, lo, hi int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence,
		source, operation, created_at, updated_at, type, geometry, area) VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 'mask', ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	n := lo * (segmHuman*2 + segmSpurious)
	add := func(file int, label string, cx, cy, rx, ry float64, conf any, source, op string) error {
		g, box, area := blob(r, cx, cy, rx, ry)
		if area == 0 {
			return nil
		}
		n++
		_, err := st.ExecContext(ctx, fmt.Sprintf("ann_s%010d", n), file+1, label, box.X, box.Y, box.W, box.H, conf,
			source, op, g, area)
		return err
	}
	for f := lo; f < hi; f++ {
		for range segmHuman {
			label := fmt.Sprintf("label%02d", r.IntN(10))
			cx, cy, rx, ry := 60+r.Float64()*520, 60+r.Float64()*360, 10+r.Float64()*50, 10+r.Float64()*50
			if err := add(f, label, cx, cy, rx, ry, nil, "human", "import:bench"); err != nil {
				return err
			}
			j := func(v float64) float64 { return v + (r.Float64()-0.5)*v*0.1 }
			if err := add(f, label, j(cx), j(cy), j(rx), j(ry), r.Float64(), "machine", benchRun); err != nil {
				return err
			}
		}
		for range segmSpurious {
			if err := add(f, fmt.Sprintf("label%02d", r.IntN(10)), 60+r.Float64()*520, 60+r.Float64()*360,
				10+r.Float64()*50, 10+r.Float64()*50, r.Float64()*0.6, "machine", benchRun); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
