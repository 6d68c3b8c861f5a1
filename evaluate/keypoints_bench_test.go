package evaluate_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/lake/shape"
)

// The keypoints figure beside segm's: 20,000 images (640x480), 5 people a
// file with COCO's 17 points (about 80% labelled) and 10 predicted people
// (each person found again, its points moved a few pixels, and 5 spurious
// ones): 100,000 human and 200,000 predicted keypoints annotations.
const (
	kpFiles    = 20_000
	kpHuman    = 5
	kpSpurious = 5
)

// BenchmarkEvaluateKeypoints20k runs a whole iou_type keypoints evaluation
// job over the generated lake, kept in $FRAMELAKE_KP_BENCH_DIR (default a
// folder in the temp dir) between runs, and reports its CPU time and the
// evaluation's peak RSS.
//
//	go test ./evaluate -run '^$' -bench EvaluateKeypoints20k -benchtime 1x -cpu 2
func BenchmarkEvaluateKeypoints20k(b *testing.B) {
	a := openBenchLake(b, "FRAMELAKE_KP_BENCH_DIR", "framelake-kp-bench-v1", ensureKeypoints)
	evaluateEach(b, a, evaluate.Request{PredRunID: benchRun, IoUType: evaluate.IoUKeypoints})
}

func ensureKeypoints(ctx context.Context, dir string) error {
	return ensureShapes(ctx, dir, "keypoints-complete", kpFiles, 1, rand.NewPCG(7, 8), insertPeople)
}

// person is a person's 17 points spread over a box at (x, y) of w x h;
// labelled keeps about 80% (v 2), the rest are 0, 0, 0.
func person(r *rand.Rand, x, y, w, h float64, labelled bool) []shape.Keypoint {
	kps := make([]shape.Keypoint, 17)
	for i, n := range shape.COCOPerson.Names {
		kps[i] = shape.Keypoint{Name: n, X: x + r.Float64()*w, Y: y + r.Float64()*h, V: 2}
		if labelled && r.IntN(5) == 0 && i > 0 {
			kps[i] = shape.Keypoint{Name: n}
		}
	}
	return kps
}

func insertPeople(ctx context.Context, db *sql.DB, r *rand.Rand, lo, hi int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence,
		source, operation, created_at, updated_at, type, geometry, area) VALUES (?, ?, 0, 'person', ?, ?, ?, ?, ?, ?, ?, 0, 0, 'keypoints', ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	n := lo * (kpHuman*2 + kpSpurious)
	add := func(file int, kps []shape.Keypoint, area float64, conf any, source, op string) error {
		n++
		g, _ := json.Marshal(kps)
		box := shape.KeypointsBounds(kps)
		_, err := st.ExecContext(ctx, fmt.Sprintf("ann_k%010d", n), file+1, box.X, box.Y, max(box.W, 1), max(box.H, 1), conf,
			source, op, string(g), area)
		return err
	}
	for f := lo; f < hi; f++ {
		for range kpHuman {
			w, h := 20+r.Float64()*150, 40+r.Float64()*250
			x, y := r.Float64()*(640-w), r.Float64()*(480-h)
			gt := person(r, x, y, w, h, true)
			if err := add(f, gt, 0.55*w*h, nil, "human", "import:bench"); err != nil {
				return err
			}
			dt := make([]shape.Keypoint, len(gt))
			for i, k := range gt {
				if k.V == 0 {
					k = shape.Keypoint{Name: k.Name, X: x + r.Float64()*w, Y: y + r.Float64()*h}
				}
				dt[i] = shape.Keypoint{Name: k.Name, X: k.X + r.NormFloat64()*3, Y: k.Y + r.NormFloat64()*3, V: 2}
			}
			if err := add(f, dt, 0, r.Float64(), "machine", benchRun); err != nil {
				return err
			}
		}
		for range kpSpurious {
			w, h := 20+r.Float64()*150, 40+r.Float64()*250
			dt := person(r, r.Float64()*(640-w), r.Float64()*(480-h), w, h, false)
			if err := add(f, dt, 0, r.Float64()*0.6, "machine", benchRun); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}
