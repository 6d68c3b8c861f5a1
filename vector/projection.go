package vector

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// The embedding map of a model is fitted once (layout.go) and then kept
// current from the change log: a vector that arrives is placed on the fitted
// layout, which moves no other point; a deleted one leaves. Once the vectors
// have grown or shrunk by more than refitGrowth since the fit, the layout is
// fitted again and the new map is turned, scaled and shifted onto the old one
// (a least-squares similarity over the files on both), so the map a user knows
// keeps its shape and orientation.
const (
	ProjectionMethod = "pca50-landmark-tsne"
	refitGrowth      = 0.10
	// MaxPointsPage bounds the points of one ProjectionPoints call.
	MaxPointsPage = 200000
)

// projRow is a model's embedding_projection row.
type projRow struct {
	layout     *layout
	fitted     int
	seen       int64
	computedAt int64
	jobID      string
	jobTarget  int64
}

// progress is what a projection reports to its job; nil reports nothing.
type progress interface {
	SetTotal(n int64)
	Advance(n int64)
}

// HandleProjections runs projection jobs on q and lets RefreshProjection
// enqueue them there.
func (s *Store) HandleProjections(q *job.Queue) {
	s.jobs = q
	q.Handle(ProjectionJob, func(ctx context.Context, r *job.Run) error {
		var p struct {
			Model string `json:"modelName"`
			Refit bool   `json:"refit"`
		}
		if err := r.Decode(&p); err != nil {
			return err
		}
		return s.updateProjection(ctx, p.Model, p.Refit, r)
	})
}

// UpdateProjection brings the model's map up to date now (a full fit when
// refit is set, none was made, or the vectors changed by more than 10%).
func (s *Store) UpdateProjection(ctx context.Context, modelName string, refit bool) error {
	return s.updateProjection(ctx, modelName, refit, nil)
}

// RefreshProjection returns the state of the model's map and, when it is
// behind its vectors (or refit is asked for), enqueues a projection job
// unless one is queued or running. A failed job is not retried until new
// vectors arrive or refit is asked for.
func (s *Store) RefreshProjection(ctx context.Context, modelName string, refit bool) (Projection, error) {
	m, err := mustModel(ctx, s.db.R, modelName)
	if err != nil {
		return Projection{}, err
	}
	s.projMu.Lock()
	defer s.projMu.Unlock()
	st, newest, err := s.projectionState(ctx, m)
	if err != nil || s.jobs == nil {
		return st, err
	}
	want := st.Status == ProjectionStale || st.Status == ProjectionNone || (refit && st.Status != ProjectionComputing)
	if !want {
		return st, nil
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		id, err := s.jobs.Enqueue(ctx, tx, ProjectionJob, map[string]any{"modelName": m.name, "refit": refit})
		if err != nil {
			return err
		}
		st.JobID, st.Status, st.Error = id, ProjectionComputing, ""
		_, err = tx.ExecContext(ctx, `INSERT INTO embedding_projection (model_seq, job_id, job_target) VALUES (?, ?, ?)
			ON CONFLICT (model_seq) DO UPDATE SET job_id = excluded.job_id, job_target = excluded.job_target`,
			m.seq, id, newest)
		return err
	})
	return st, err
}

// projectionState reads the map's state and the newest change-log seq.
func (s *Store) projectionState(ctx context.Context, m *model) (Projection, int64, error) {
	st := Projection{Model: m.name, Method: ProjectionMethod}
	row, err := readProjRow(ctx, s.db.R, m.seq)
	if err != nil {
		return st, 0, err
	}
	var newest, pruned int64
	err = s.db.R.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+m.table+`_rowids),
		(SELECT count(*) FROM embedding_projection_point WHERE model_seq = ?),
		(SELECT coalesce(max(seq), 0) FROM embedding_change), pruned_through FROM embedding_state`, m.seq).
		Scan(&st.VectorCount, &st.PointCount, &newest, &pruned)
	if err != nil {
		return st, 0, fmt.Errorf("vector: projection state of %q: %w", m.name, err)
	}
	if row == nil {
		st.Status = ProjectionNone
		return st, newest, nil
	}
	st.FittedCount, st.JobID = row.fitted, row.jobID
	if row.computedAt > 0 {
		st.ComputedAt = time.UnixMilli(row.computedAt).UTC()
	}
	// A change after a seq, for this model: the log's primary key bounds the scan.
	after := func(seq int64) (bool, error) {
		var yes bool
		err := s.db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM embedding_change WHERE seq > ? AND model_seq = ?)`,
			seq, m.seq).Scan(&yes)
		return yes || pruned > seq, err
	}
	behind, err := after(row.seen)
	if err != nil {
		return st, 0, err
	}
	st.Status = ProjectionCurrent
	if row.layout == nil || behind {
		st.Status = ProjectionStale
	}
	if row.jobID == "" || s.jobs == nil {
		return st, newest, nil
	}
	j, err := s.jobs.Get(ctx, row.jobID)
	if errs.Is(err, errs.NotFound) {
		return st, newest, nil
	}
	if err != nil {
		return st, 0, err
	}
	switch {
	case !j.Status.Finished():
		st.Status = ProjectionComputing
	case j.Status == job.Failed && st.Status == ProjectionStale:
		if again, err := after(row.jobTarget); err != nil || !again {
			st.Status, st.Error = ProjectionFailed, j.Error
			return st, newest, err
		}
	}
	return st, newest, nil
}

func readProjRow(ctx context.Context, q querier, modelSeq int64) (*projRow, error) {
	var r projRow
	var lay []byte
	err := q.QueryRowContext(ctx, `SELECT layout, fitted_count, seen, computed_at, job_id, job_target
		FROM embedding_projection WHERE model_seq = ?`, modelSeq).
		Scan(&lay, &r.fitted, &r.seen, &r.computedAt, &r.jobID, &r.jobTarget)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if lay != nil {
		r.layout = &layout{}
		if err := json.Unmarshal(lay, r.layout); err != nil {
			return nil, fmt.Errorf("projection layout of model %d: %w", modelSeq, err)
		}
	}
	return &r, nil
}

// ProjectionPoints returns up to limit points of the model's map with a file
// seq above after, in seq order (a keyset page: pass the last seq to go on).
func (s *Store) ProjectionPoints(ctx context.Context, modelName string, after int64, limit int) ([]Point, error) {
	if limit < 1 || limit > MaxPointsPage {
		return nil, errs.Invalid("limit", "limit must be 1..%d, got %d", MaxPointsPage, limit)
	}
	m, err := mustModel(ctx, s.db.R, modelName)
	if err != nil {
		return nil, err
	}
	out := make([]Point, 0, min(limit, 1<<16))
	// A point whose file is gone is skipped (the map is refitted later), and
	// the page read on past it, so a short page still means the last one.
	for len(out) < limit {
		page, err := s.pointsPage(ctx, m, after, limit-len(out))
		if err != nil {
			return nil, fmt.Errorf("vector: projection points of %q: %w", m.name, err)
		}
		if len(page) == 0 {
			break
		}
		seqs := make([]int64, len(page))
		for i, p := range page {
			seqs[i] = p.Seq
		}
		names, err := lake.NamesOfSeqs(ctx, s.db.R, seqs)
		if err != nil {
			return nil, fmt.Errorf("vector: projection points of %q: %w", m.name, err)
		}
		for _, p := range page {
			if n, ok := names[p.Seq]; ok {
				p.UniqueName = n
				out = append(out, p)
			}
		}
		after = page[len(page)-1].Seq
	}
	return out, nil
}

// pointsPage reads up to limit points of m's map after the key after.
func (s *Store) pointsPage(ctx context.Context, m *model, after int64, limit int) ([]Point, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT file_seq, x, y FROM embedding_projection_point
		WHERE model_seq = ? AND file_seq > ? ORDER BY file_seq LIMIT ?`, m.seq, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Point
	for rows.Next() {
		var p Point
		var x, y float64
		if err := rows.Scan(&p.Seq, &x, &y); err != nil {
			return nil, err
		}
		p.X, p.Y = float32(x), float32(y)
		out = append(out, p)
	}
	return out, rows.Err()
}

func (s *Store) updateProjection(ctx context.Context, modelName string, refit bool, pr progress) error {
	m, err := mustModel(ctx, s.db.R, modelName)
	if err != nil {
		return err
	}
	row, err := readProjRow(ctx, s.db.R, m.seq)
	if err != nil {
		return err
	}
	if row == nil || row.layout == nil || refit {
		return s.fitProjection(ctx, m, row, pr)
	}
	ch, err := s.readChanges(ctx, m, row.seen)
	if err != nil {
		return fmt.Errorf("vector: projection of %q: %w", m.name, err)
	}
	var count int
	if err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM `+m.table+`_rowids`).Scan(&count); err != nil {
		return err
	}
	if ch.pruned > row.seen || math.Abs(float64(count-row.fitted)) > refitGrowth*float64(row.fitted) {
		return s.fitProjection(ctx, m, row, pr)
	}
	pts := make(map[int64][2]float64, len(ch.put))
	z := make([]float64, row.layout.p())
	for seq, v := range ch.put {
		if m.metric == Cosine {
			normalize(v)
		}
		row.layout.project(v, z)
		x, y := row.layout.place(z)
		pts[seq] = [2]float64{x, y}
	}
	return s.writePoints(ctx, m, nil, pts, ch.gone, ch.newest, 0)
}

// fitProjection fits a new layout to all the model's vectors, aligns it with
// the current map and replaces the map's points.
func (s *Store) fitProjection(ctx context.Context, m *model, row *projRow, pr progress) error {
	if pr != nil {
		pr.SetTotal(4)
	}
	step := func() {
		if pr != nil {
			pr.Advance(1)
		}
	}
	x, newest, err := s.readAll(ctx, m)
	if err != nil {
		return fmt.Errorf("vector: projection of %q: read vectors: %w", m.name, err)
	}
	step()
	n := len(x.seqs)
	if n == 0 {
		return s.writePoints(ctx, m, &layout{Dim: m.dim}, nil, nil, newest, 0)
	}
	var prev *layout
	if row != nil {
		prev = row.layout
	}
	l, z := fitLayout(x.data, m.dim, s.opt.Workers, prev)
	if err := ctx.Err(); err != nil {
		return err
	}
	step()
	p := l.p()
	xy := make([][2]float64, n)
	parallel(n, s.opt.Workers, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xy[r][0], xy[r][1] = l.place(z[r*p : (r+1)*p])
		}
	})
	old, err := s.oldPoints(ctx, m)
	if err != nil {
		return err
	}
	t := fitFrame(x.seqs, xy, old)
	l.transform(t)
	pts := make(map[int64][2]float64, n)
	for r, seq := range x.seqs {
		pts[seq] = t.apply(xy[r])
	}
	step()
	err = s.writePoints(ctx, m, l, pts, nil, newest, n)
	step()
	return err
}

// readAll reads every vector of m (unit length for cosine) with the newest
// change-log seq, from one snapshot.
func (s *Store) readAll(ctx context.Context, m *model) (*matrix, int64, error) {
	tx, err := s.db.R.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	x := &matrix{dim: m.dim, cosine: m.metric == Cosine, row: map[int64]int32{}}
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0), (SELECT count(*) FROM `+m.table+`_rowids)
		FROM embedding_change`).Scan(&x.seen, &n); err != nil {
		return nil, 0, err
	}
	x.seqs = make([]int64, 0, n)
	x.data = make([]float32, 0, n*int64(m.dim))
	x.row = make(map[int64]int32, n)
	rows, err := tx.QueryContext(ctx, `SELECT rowid, embedding FROM `+m.table)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var b sql.RawBytes // decoded before Next: no copy of each blob
		if err := rows.Scan(&seq, &b); err != nil {
			return nil, 0, err
		}
		if len(b) != 4*m.dim {
			return nil, 0, fmt.Errorf("vector of file %d has %d bytes, want %d", seq, len(b), 4*m.dim)
		}
		x.putBlob(seq, b)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return x, x.seen, nil
}

func (s *Store) oldPoints(ctx context.Context, m *model) (map[int64][2]float64, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT file_seq, x, y FROM embedding_projection_point WHERE model_seq = ?`, m.seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64][2]float64{}
	for rows.Next() {
		var seq int64
		var p [2]float64
		if err := rows.Scan(&seq, &p[0], &p[1]); err != nil {
			return nil, err
		}
		out[seq] = p
	}
	return out, rows.Err()
}

// writePoints stores points and removes gone in one transaction; with a
// layout it replaces the map (all its points and the fit of fitted vectors).
func (s *Store) writePoints(ctx context.Context, m *model, l *layout, pts map[int64][2]float64, gone []int64, seen int64, fitted int) error {
	var lay []byte
	if l != nil {
		var err error
		if lay, err = json.Marshal(l); err != nil {
			return err
		}
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		now := time.Now().UnixMilli()
		if l != nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM embedding_projection_point WHERE model_seq = ?`, m.seq); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO embedding_projection (model_seq, layout, fitted_count, seen, computed_at)
				VALUES (?, ?, ?, ?, ?) ON CONFLICT (model_seq) DO UPDATE SET layout = excluded.layout,
				fitted_count = excluded.fitted_count, seen = excluded.seen, computed_at = excluded.computed_at`,
				m.seq, lay, fitted, seen, now); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `UPDATE embedding_projection SET seen = ?, computed_at = ? WHERE model_seq = ?`,
			seen, now, m.seq); err != nil {
			return err
		}
		put, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO embedding_projection_point (model_seq, file_seq, x, y) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer put.Close()
		for seq, p := range pts {
			if _, err := put.ExecContext(ctx, m.seq, seq, p[0], p[1]); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM embedding_projection_point WHERE model_seq = ? AND file_seq IN (SELECT value FROM json_each(?))`,
			m.seq, jsonInts(gone))
		return err
	})
}
