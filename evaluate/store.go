package evaluate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// stored is an evaluation row.
type stored struct {
	Evaluation
	seq int64
}

const evalColumns = `seq, key, params, status, job_id, error, result, created_by, created_at`

func scanStored(sc interface{ Scan(...any) error }) (stored, error) {
	var ev stored
	var params string
	var result sql.NullString
	var created int64
	if err := sc.Scan(&ev.seq, &ev.Key, &params, &ev.Status, &ev.JobID, &ev.Error, &result, &ev.CreatedBy,
		&created); err != nil {
		return ev, err
	}
	if err := json.Unmarshal([]byte(params), &ev.Params); err != nil {
		return ev, fmt.Errorf("evaluation %s: params: %w", ev.Key, err)
	}
	if result.Valid {
		ev.result = json.RawMessage(result.String)
	}
	ev.CreatedAt = time.UnixMilli(created).UTC()
	return ev, nil
}

func (s *Service) load(ctx context.Context, key string) (stored, error) {
	ev, err := scanStored(s.db.R.QueryRowContext(ctx, `SELECT `+evalColumns+` FROM evaluation WHERE key = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return ev, errs.NotFoundf("evaluation %q not found", key)
	}
	return ev, err
}

// finish records an evaluation's end: its figures, or why it failed.
func (s *Service) finish(ctx context.Context, seq int64, st Status, res any, msg string) error {
	var result any
	if res != nil {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		result = string(b)
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE evaluation SET status = ?, result = ?, error = ?, finished_at = ? WHERE seq = ?`,
			st, result, msg, time.Now().UnixMilli(), seq)
		return err
	})
}

// Get returns a finished evaluation's figures.
func (s *Service) Get(ctx context.Context, key string) (Result, error) {
	ev, err := s.load(ctx, key)
	if err != nil {
		return Result{}, err
	}
	switch ev.Status {
	case Running:
		return Result{}, errs.New(errs.FailedPrecondition, "key", "evaluation %q is still running (job %s)", key, ev.JobID)
	case Failed:
		return Result{}, errs.New(errs.FailedPrecondition, "key", "evaluation %q failed: %s", key, ev.Error)
	}
	var res Result
	if err := json.Unmarshal(ev.result, &res); err != nil {
		return Result{}, fmt.Errorf("evaluation %s: result: %w", key, err)
	}
	return res, nil
}

// List returns every evaluation, newest first, without figures.
func (s *Service) List(ctx context.Context) ([]Evaluation, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+evalColumns+` FROM evaluation ORDER BY seq DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Evaluation{}
	for rows.Next() {
		ev, err := scanStored(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ev.Evaluation)
	}
	return out, rows.Err()
}

// Delete removes an evaluation, its box outcomes and its files' counts. One
// whose job is still queued or running is refused: cancel the job first.
func (s *Service) Delete(ctx context.Context, key string) error {
	ev, err := s.load(ctx, key)
	if err != nil {
		return err
	}
	if ev.Status == Running {
		// Running until its job says otherwise: a job a crash or a cancel
		// ended before the handler could record it leaves it so.
		j, err := s.jobs.Get(ctx, ev.JobID)
		if err == nil && !j.Status.Finished() {
			return errs.New(errs.FailedPrecondition, "key", "evaluation %q is running; cancel job %s first", key, ev.JobID)
		} else if err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM evaluation_file WHERE eval_seq = ?`, ev.seq); err != nil {
			return err
		}
		if err := lake.DeleteFileEvalsTx(ctx, tx, key); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM evaluation WHERE seq = ?`, ev.seq)
		return err
	})
}

// Compare sets two finished evaluations side by side per label.
func (s *Service) Compare(ctx context.Context, keyA, keyB string) (Comparison, error) {
	a, err := s.Get(ctx, keyA)
	if err != nil {
		return Comparison{}, errs.Prefix(err, "key_a")
	}
	b, err := s.Get(ctx, keyB)
	if err != nil {
		return Comparison{}, errs.Prefix(err, "key_b")
	}
	c := Comparison{KeyA: keyA, KeyB: keyB, A: summaryOf(a), B: summaryOf(b), Labels: []LabelComparison{}}
	names := map[string]bool{}
	for l := range a.Labels {
		names[l] = true
	}
	for l := range b.Labels {
		names[l] = true
	}
	sorted := make([]string, 0, len(names))
	for l := range names {
		sorted = append(sorted, l)
	}
	sort.Strings(sorted)
	for _, l := range sorted {
		lc := LabelComparison{Label: l}
		if r, ok := a.Labels[l]; ok {
			lc.A = &r
		}
		if r, ok := b.Labels[l]; ok {
			lc.B = &r
		}
		if lc.A != nil && lc.B != nil && lc.A.AP != Undefined && lc.B.AP != Undefined && lc.A.AP != lc.B.AP {
			lc.Better = map[bool]string{true: keyA, false: keyB}[lc.A.AP > lc.B.AP]
		}
		c.Labels = append(c.Labels, lc)
	}
	return c, nil
}

func summaryOf(r Result) Summary {
	return Summary{MAP: r.MAP, AP50: r.AP50, AP75: r.AP75, VOCAP50: r.VOCAP50}
}

// Outcomes returns the outcome of every box of a file in an evaluation,
// human boxes first, in insertion order. Boxes replaced since are left out.
func (s *Service) Outcomes(ctx context.Context, key, uniqueName string) ([]BoxOutcome, error) {
	ev, err := s.load(ctx, key)
	if err != nil {
		return nil, err
	}
	f, err := s.lake.File(ctx, uniqueName)
	if err != nil {
		return nil, err
	}
	var packed []byte
	err = s.db.R.QueryRowContext(ctx, `SELECT outcomes FROM evaluation_file WHERE eval_seq = ? AND file_seq = ?`,
		ev.seq, f.Seq()).Scan(&packed)
	if errors.Is(err, sql.ErrNoRows) {
		return []BoxOutcome{}, nil // the evaluation did not cover the file
	} else if err != nil {
		return nil, err
	}
	outs, err := unpackOutcomes(packed)
	if err != nil {
		return nil, err
	}
	seqs := make([]int64, 0, 2*len(outs))
	for _, o := range outs {
		seqs = append(seqs, o.seq)
		if o.match != 0 {
			seqs = append(seqs, o.match)
		}
	}
	boxes, err := s.lake.AnnotationRefs(ctx, seqs)
	if err != nil {
		return nil, err
	}
	out := []BoxOutcome{}
	for _, o := range outs {
		b, ok := boxes[o.seq]
		if !ok {
			continue
		}
		bo := BoxOutcome{ID: b.ID, Source: b.Source, Label: b.Label, Frame: b.Frame, Outcome: o.kind.String(),
			Mismatch: o.other, seq: o.seq}
		if m, ok := boxes[o.match]; ok {
			iou := o.iou
			bo.MatchID, bo.IoU = m.ID, &iou
		}
		out = append(out, bo)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Source == "human") != (out[j].Source == "human") {
			return out[i].Source == "human"
		}
		return out[i].seq < out[j].seq
	})
	return out, nil
}
