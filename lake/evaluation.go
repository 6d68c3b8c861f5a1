package lake

import (
	"context"
	"database/sql"
	"fmt"
)

// What evaluations and label disagreements need from the lake: the boxes of
// many files read page by page in file order, and the per-file figures of
// migration 003 they write (file_eval, file_disagreement).

// ScoredBox is a box as evaluations read it.
type ScoredBox struct {
	Seq   int64 // the annotation's key, stable while the box is not replaced
	ID    string
	Frame int
	Label string
	X, Y  float64
	W, H  float64
	Score float64 // confidence; 1 when the box has none
	Human bool
	Crowd bool // attributes.iscrowd is set (COCO crowd regions)
}

// BoxPair is one file's human and machine boxes, each in insertion order.
type BoxPair struct {
	Seq        int64
	UniqueName string
	Human      []ScoredBox
	Machine    []ScoredBox
}

// BoxPairQuery says which files and boxes EachFileBoxPair reads.
type BoxPairQuery struct {
	Selection Selection
	// HumanOperations are the operations whose human boxes count; all
	// human boxes when nil.
	HumanOperations []string
	// MachineOperation is the model run whose machine boxes are read.
	MachineOperation string
	// FileSeqs, when not nil, narrows the selection to these files (a
	// dataset version's split).
	FileSeqs  []int64
	PageFiles int  // files per page; default 1000
	WithIDs   bool // read the boxes' public ids too (ScoredBox.ID)
}

// CountHumanFiles counts the files q selects that have a human box of q's
// operations: the files EachFileBoxPair visits.
func (l *Lake) CountHumanFiles(ctx context.Context, q BoxPairQuery) (int, error) {
	where, args, err := l.humanFilesWhere(ctx, q)
	if err != nil {
		return 0, err
	}
	var n int
	err = l.db.R.QueryRowContext(ctx, `SELECT count(*) FROM file f WHERE `+where, args...).Scan(&n)
	return n, err
}

func (l *Lake) humanFilesWhere(ctx context.Context, q BoxPairQuery) (string, []any, error) {
	sel, args, err := l.SelectionSQL(ctx, q.Selection)
	if err != nil {
		return "", nil, err
	}
	if q.FileSeqs != nil {
		sel = "(" + sel + ") AND f.seq IN (SELECT value FROM json_each(?))"
		args = append(args, jsonArray(q.FileSeqs))
	}
	has := `EXISTS (SELECT 1 FROM annotation a WHERE a.source = 'human' AND a.file_seq = f.seq`
	if q.HumanOperations != nil {
		has += ` AND a.operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.HumanOperations))
	}
	return "(" + sel + ") AND " + has + ")", args, nil
}

// EachFileBoxPair calls fn, in file order, for every file q selects that
// has a human box of q's operations, with its human boxes (of those
// operations) and the machine boxes of q's run. It reads a page of files at
// a time, the next page while fn works on this one (reading and judging
// boxes then share two cores), and holds no read transaction between pages.
func (l *Lake) EachFileBoxPair(ctx context.Context, q BoxPairQuery, fn func(BoxPair) error) error {
	where, args, err := l.humanFilesWhere(ctx, q)
	if err != nil {
		return err
	}
	if q.PageFiles <= 0 {
		q.PageFiles = 1000
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		page []BoxPair
		err  error
	}
	pages := make(chan result, 1)
	go func() {
		defer close(pages)
		after := int64(0)
		for {
			page, err := l.boxPairPage(ctx, q, where, args, after)
			select {
			case pages <- result{page, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(page) < q.PageFiles {
				return
			}
			after = page[len(page)-1].Seq
		}
	}()
	for r := range pages {
		if r.err != nil {
			return r.err
		}
		for _, fb := range r.page {
			if err := fn(fb); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

func (l *Lake) boxPairPage(ctx context.Context, q BoxPairQuery, where string, args []any, after int64) ([]BoxPair, error) {
	// NOT INDEXED: walk the files by key from after, so a page costs its
	// own files; through a type index the planner sorts every file left.
	rows, err := l.db.R.QueryContext(ctx, `SELECT f.seq, f.unique_name FROM file f NOT INDEXED WHERE f.seq > ? AND `+where+
		` ORDER BY f.seq LIMIT ?`, append(append([]any{after}, args...), q.PageFiles)...)
	if err != nil {
		return nil, fmt.Errorf("files to evaluate: %w", err)
	}
	var page []BoxPair
	idx := map[int64]int{}
	for rows.Next() {
		var fb BoxPair
		if err := rows.Scan(&fb.Seq, &fb.UniqueName); err != nil {
			rows.Close()
			return nil, err
		}
		idx[fb.Seq] = len(page)
		page = append(page, fb)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(page) == 0 {
		return page, err
	}
	return page, l.readBoxPairs(ctx, q, page, idx)
}

// readBoxPairs fills a page's boxes: human and machine boxes each read in
// the page's range of file keys along their index (source, file_seq) and
// (operation, file_seq), which yields them in file and insertion order
// with no sort. Pages have disjoint ranges, so a run reads each box once;
// boxes of files in the range that the page left out are skipped.
func (l *Lake) readBoxPairs(ctx context.Context, q BoxPairQuery, page []BoxPair, idx map[int64]int) error {
	lo, hi := page[0].Seq, page[len(page)-1].Seq
	human := `a.source = 'human' AND a.file_seq BETWEEN ? AND ?`
	args := []any{lo, hi}
	if q.HumanOperations != nil {
		human += ` AND a.operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.HumanOperations))
	}
	if err := l.readScored(ctx, q.WithIDs, human, args, func(fileSeq int64, b ScoredBox) {
		if i, ok := idx[fileSeq]; ok {
			b.Human = true
			page[i].Human = append(page[i].Human, b)
		}
	}); err != nil {
		return err
	}
	machine := `a.operation = ? AND a.file_seq BETWEEN ? AND ? AND a.source = 'machine'`
	return l.readScored(ctx, q.WithIDs, machine, []any{q.MachineOperation, lo, hi}, func(fileSeq int64, b ScoredBox) {
		if i, ok := idx[fileSeq]; ok {
			b.Crowd = false
			page[i].Machine = append(page[i].Machine, b)
		}
	})
}

func (l *Lake) readScored(ctx context.Context, withIDs bool, where string, args []any, fn func(int64, ScoredBox)) error {
	id := "''"
	if withIDs {
		id = "a.id"
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT a.seq, `+id+`, a.file_seq, a.frame, a.label, a.x, a.y, a.w, a.h,
		coalesce(a.confidence, 1),
		a.attributes <> '{}' AND coalesce(json_extract(a.attributes, '$.iscrowd'), 0) NOT IN (0, '', 'false')
		FROM annotation a WHERE `+where+` ORDER BY a.file_seq, a.seq`, args...)
	if err != nil {
		return fmt.Errorf("boxes to evaluate: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var b ScoredBox
		var fileSeq int64
		if err := rows.Scan(&b.Seq, &b.ID, &fileSeq, &b.Frame, &b.Label, &b.X, &b.Y, &b.W, &b.H, &b.Score,
			&b.Crowd); err != nil {
			return err
		}
		fn(fileSeq, b)
	}
	return rows.Err()
}

// FileEvalCounts are one file's outcome counts in an evaluation.
type FileEvalCounts struct {
	FileSeq    int64
	TP, FP, FN int
}

// SetFileEvalsTx stores, in tx, the counts of files in evaluation key
// (eval.<key>.tp|fp|fn), replacing theirs.
func SetFileEvalsTx(ctx context.Context, tx *sql.Tx, key string, rows []FileEvalCounts) error {
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO file_eval (eval_key, file_seq, tp, fp, fn) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, r := range rows {
		if _, err := st.ExecContext(ctx, key, r.FileSeq, r.TP, r.FP, r.FN); err != nil {
			return fmt.Errorf("file evaluation counts: %w", err)
		}
	}
	return nil
}

// DeleteFileEvalsTx removes, in tx, every file's counts of evaluation key.
func DeleteFileEvalsTx(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM file_eval WHERE eval_key = ?`, key)
	return err
}

// FileDisagreement is how many disagreements a file has with a model run.
type FileDisagreement struct {
	FileSeq int64
	Count   int
}

// ClearDisagreementsTx removes, in tx, every file's disagreement count.
func ClearDisagreementsTx(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM file_disagreement`)
	return err
}

// SetDisagreementsTx stores, in tx, files' disagreement counts with run
// (disagreement.count), replacing theirs.
func SetDisagreementsTx(ctx context.Context, tx *sql.Tx, run string, rows []FileDisagreement) error {
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO file_disagreement (file_seq, run_id, count) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, r := range rows {
		if _, err := st.ExecContext(ctx, r.FileSeq, run, r.Count); err != nil {
			return fmt.Errorf("file disagreements: %w", err)
		}
	}
	return nil
}

// fileEvaluations are a file's counts in every evaluation that covered it,
// by key: the evaluations field of file details.
func (l *Lake) fileEvaluations(ctx context.Context, seq int64) (map[string]map[string]int, error) {
	rows, err := l.db.Point.QueryContext(ctx, `SELECT eval_key, tp, fp, fn FROM file_eval WHERE file_seq = ?`, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var key string
		var tp, fp, fn int
		if err := rows.Scan(&key, &tp, &fp, &fn); err != nil {
			return nil, err
		}
		out[key] = map[string]int{"tp": tp, "fp": fp, "fn": fn}
	}
	return out, rows.Err()
}
