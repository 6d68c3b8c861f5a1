package lake

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"

	"github.com/framelake/framelake/lake/shape"
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
	// Area is the annotation's stored area: COCO's where its import gave one
	// (migration 009), else a shape's own (migration 010); 0 for a box
	// without one.
	Area float64
	// Type and Geometry are the annotation's shape (lake/shape.Geometry's
	// field for Type, as JSON), read when BoxPairQuery.WithShapes asks.
	Type     shape.Type
	Geometry string
}

// BoxPair is one file's human and machine boxes, each in insertion order.
type BoxPair struct {
	Seq        int64
	UniqueName string
	// Name and Blob (the bytes' SHA-256) key the file independently of
	// when an import stored it, for ordering tied scores.
	Name, Blob string
	// ImageID is the file's image id in the COCO file the truth came from
	// (the smallest, if several named it); nil when none did.
	ImageID *int64
	// Labelled are the frames the truth's operations labelled (migration
	// 009), boxes or none: a frame listed here with no human box is labelled
	// empty. Imports made before the lake kept this list none.
	Labelled []int
	Human    []ScoredBox
	Machine  []ScoredBox
	// Width and Height are the file's, in pixels: the frame masks are drawn on.
	Width, Height int
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
	FileSeqs   []int64
	PageFiles  int  // files per page; default 1000
	WithIDs    bool // read the boxes' public ids too (ScoredBox.ID)
	WithShapes bool // read the annotations' shapes too (ScoredBox.Type, Geometry)
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
	labelled := `EXISTS (SELECT 1 FROM labelled_frame lf WHERE lf.file_seq = f.seq`
	if q.HumanOperations != nil {
		has += ` AND a.operation IN (SELECT value FROM json_each(?))`
		labelled += ` AND lf.operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.HumanOperations), jsonArray(q.HumanOperations))
	}
	return "(" + sel + ") AND (" + has + ") OR " + labelled + "))", args, nil
}

// TruthOperations lists, sorted, the operations whose human boxes or
// labelled frames the files q selects have: what an evaluation judged
// against.
func (l *Lake) TruthOperations(ctx context.Context, q BoxPairQuery) ([]string, error) {
	where, args, err := l.humanFilesWhere(ctx, q)
	if err != nil {
		return nil, err
	}
	// The where clause is used twice, once for each kind of truth.
	all := append(append([]any{}, args...), args...)
	only := ""
	if q.HumanOperations != nil {
		only = ` WHERE op IN (SELECT value FROM json_each(?))`
		all = append(all, jsonArray(q.HumanOperations))
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT DISTINCT op FROM (
		SELECT a.operation AS op FROM file f JOIN annotation a ON a.file_seq = f.seq AND a.source = 'human' WHERE `+where+`
		UNION SELECT lf.operation FROM file f JOIN labelled_frame lf ON lf.file_seq = f.seq WHERE `+where+`)`+only+
		` ORDER BY op`, all...)
	if err != nil {
		return nil, fmt.Errorf("truth operations: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var op string
		if err := rows.Scan(&op); err != nil {
			return nil, err
		}
		out = append(out, op)
	}
	return out, rows.Err()
}

// EachFileBoxPair calls fn, in file order, for every file q selects that
// has a human box of q's operations, with its human boxes (of those
// operations) and the machine boxes of q's run. It lists the files a page
// at a time and reads the boxes of the next pages on several connections
// while fn works on this one (reading boxes is most of an evaluation's
// CPU: spread over the cores, it no longer bounds the wall time), and holds
// no read transaction between pages.
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
	// Each page has its slot, queued in file order: readers fill slots in
	// any order, fn takes them in order. The queue's capacity bounds the
	// pages in memory.
	type result struct {
		page []BoxPair
		err  error
	}
	slots := make(chan chan result, pageReaders())
	go func() {
		defer close(slots)
		after := int64(0)
		for {
			page, idx, err := l.filePage(ctx, where, args, after, q.PageFiles)
			slot := make(chan result, 1)
			select {
			case slots <- slot:
			case <-ctx.Done():
				return
			}
			if err != nil || len(page) == 0 {
				slot <- result{page, err}
				return
			}
			go func() {
				err := l.readBoxPairs(ctx, q, page, idx)
				slot <- result{page, err}
			}()
			if len(page) < q.PageFiles {
				return
			}
			after = page[len(page)-1].Seq
		}
	}()
	for slot := range slots {
		r := <-slot
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

// pageReaders is how many pages of boxes are read at once: one a core, at
// least two (reading overlaps judging), at most four.
func pageReaders() int { return min(4, max(2, runtime.GOMAXPROCS(0))) }

// filePage lists the next page of files after key after, with each file's
// place in the page by key.
func (l *Lake) filePage(ctx context.Context, where string, args []any, after int64, size int) ([]BoxPair, map[int64]int, error) {
	// NOT INDEXED: walk the files by key from after, so a page costs its
	// own files; through a type index the planner sorts every file left.
	rows, err := l.db.R.QueryContext(ctx, `SELECT f.seq, f.unique_name, f.name, f.blob, coalesce(f.width, 0), coalesce(f.height, 0)
		FROM file f NOT INDEXED WHERE f.seq > ? AND `+where+
		` ORDER BY f.seq LIMIT ?`, append(append([]any{after}, args...), size)...)
	if err != nil {
		return nil, nil, fmt.Errorf("files to evaluate: %w", err)
	}
	defer rows.Close()
	var page []BoxPair
	idx := map[int64]int{}
	for rows.Next() {
		var fb BoxPair
		if err := rows.Scan(&fb.Seq, &fb.UniqueName, &fb.Name, &fb.Blob, &fb.Width, &fb.Height); err != nil {
			return nil, nil, err
		}
		idx[fb.Seq] = len(page)
		page = append(page, fb)
	}
	return page, idx, rows.Err()
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
	if err := l.readScored(ctx, q, true, human, args, func(fileSeq int64, b ScoredBox) {
		if i, ok := idx[fileSeq]; ok {
			page[i].Human = append(page[i].Human, b)
		}
	}); err != nil {
		return err
	}
	if err := l.readLabelled(ctx, q, lo, hi, page, idx); err != nil {
		return err
	}
	machine := `a.operation = ? AND a.file_seq BETWEEN ? AND ? AND a.source = 'machine'`
	return l.readScored(ctx, q, false, machine, []any{q.MachineOperation, lo, hi}, func(fileSeq int64, b ScoredBox) {
		if i, ok := idx[fileSeq]; ok {
			page[i].Machine = append(page[i].Machine, b)
		}
	})
}

// readLabelled fills a page's labelled frames and COCO image ids.
func (l *Lake) readLabelled(ctx context.Context, q BoxPairQuery, lo, hi int64, page []BoxPair, idx map[int64]int) error {
	where, args := `file_seq BETWEEN ? AND ?`, []any{lo, hi}
	if q.HumanOperations != nil {
		where += ` AND operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.HumanOperations))
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT file_seq, frame, min(image_id) FROM labelled_frame WHERE `+where+
		` GROUP BY file_seq, frame ORDER BY file_seq, frame`, args...)
	if err != nil {
		return fmt.Errorf("labelled frames: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var frame int
		var imageID sql.NullInt64
		if err := rows.Scan(&seq, &frame, &imageID); err != nil {
			return err
		}
		i, ok := idx[seq]
		if !ok {
			continue
		}
		fb := &page[i]
		fb.Labelled = append(fb.Labelled, frame)
		if imageID.Valid && (fb.ImageID == nil || imageID.Int64 < *fb.ImageID) {
			v := imageID.Int64
			fb.ImageID = &v
		}
	}
	return rows.Err()
}

// readScored reads boxes in file and insertion order. Columns are scanned
// into interface values and asserted, not into typed fields, which
// database/sql converts through reflection: at millions of boxes that was
// an eighth of the read. Crowd is only worked out for human boxes. Class
// labels name a whole frame and have no place among boxes: they are left out.
func (l *Lake) readScored(ctx context.Context, q BoxPairQuery, human bool, where string, args []any, fn func(int64, ScoredBox)) error {
	id, crowd, geometry := "''", "0", "NULL"
	if q.WithIDs {
		id = "a.id"
	}
	if q.WithShapes {
		geometry = "a.geometry"
	}
	if human {
		crowd = `a.attributes <> '{}' AND coalesce(json_extract(a.attributes, '$.iscrowd'), 0) NOT IN (0, '', 'false')`
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT a.seq, `+id+`, a.file_seq, a.frame, a.label, a.x, a.y, a.w, a.h,
		coalesce(a.confidence, 1.0), `+crowd+`, coalesce(a.area, 0), a.type, `+geometry+` FROM annotation a
		WHERE `+where+` AND a.type <> 'class' ORDER BY a.file_seq, a.seq`, args...)
	if err != nil {
		return fmt.Errorf("boxes to evaluate: %w", err)
	}
	defer rows.Close()
	var v [14]any
	dest := make([]any, len(v))
	for i := range v {
		dest[i] = &v[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		b := ScoredBox{Seq: asInt(v[0]), Frame: int(asInt(v[3])), X: RoundCoord(asFloat(v[5])), Y: RoundCoord(asFloat(v[6])),
			W: roundSize(asFloat(v[7])), H: roundSize(asFloat(v[8])), Score: asFloat(v[9]), Human: human, Crowd: asInt(v[10]) != 0,
			Area: asFloat(v[11])}
		typ, _ := v[12].(string)
		b.Type = shape.Type(typ)
		b.Geometry, _ = v[13].(string)
		b.ID, _ = v[1].(string)
		b.Label, _ = v[4].(string)
		fn(asInt(v[2]), b)
	}
	return rows.Err()
}

// asInt and asFloat read a scanned SQLite number, whichever storage class
// it came back in.
func asInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

func asFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	}
	return 0
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

// HasLabelledFrames reports whether operation labelled any frame, boxes or
// none (an import of only empty label files has no box but is a truth).
func (l *Lake) HasLabelledFrames(ctx context.Context, operation string) (bool, error) {
	var n int
	err := l.db.R.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM labelled_frame WHERE operation = ? LIMIT 1)`,
		operation).Scan(&n)
	return n > 0, err
}

// ClassLabel is a class annotation (type class) as a classification
// evaluation reads it.
type ClassLabel struct {
	FileSeq, Seq int64
	Frame        int
	Human        bool
	Label        string
	Score        float64 // confidence; 1 when it has none
	// TruthOnFrame: a machine label on a frame the truth labelled (a human
	// class label of q.HumanOperations, or a labelled frame of them).
	TruthOnFrame bool
}

// EachClassLabel calls fn with the class labels of the files q selects: the
// human ones of q.HumanOperations (all when nil) and the machine ones of
// q.MachineOperation, in file, frame and insertion order. fn runs while the
// rows are read; an error from it stops the walk and is returned.
func (l *Lake) EachClassLabel(ctx context.Context, q BoxPairQuery, fn func(ClassLabel) error) error {
	where, args, err := l.SelectionSQL(ctx, q.Selection)
	if err != nil {
		return err
	}
	if q.FileSeqs != nil {
		where = "(" + where + ") AND f.seq IN (SELECT value FROM json_each(?))"
		args = append(args, jsonArray(q.FileSeqs))
	}
	human, onFrame, lf := "a.source = 'human'", "h.source = 'human'", ""
	var opArgs []any
	if len(q.HumanOperations) > 0 {
		ops := jsonArray(q.HumanOperations)
		human += " AND a.operation IN (SELECT value FROM json_each(?))"
		onFrame += " AND h.operation IN (SELECT value FROM json_each(?))"
		lf = " AND lf.operation IN (SELECT value FROM json_each(?))"
		opArgs = []any{ops}
	}
	all := append(append(append([]any{}, opArgs...), opArgs...), args...)
	all = append(append(all, opArgs...), q.MachineOperation)
	rows, err := l.db.R.QueryContext(ctx, `SELECT a.file_seq, a.seq, a.frame, a.source = 'human', a.label,
		coalesce(a.confidence, 1.0), a.source = 'machine' AND (
			EXISTS (SELECT 1 FROM annotation h WHERE h.file_seq = a.file_seq AND h.frame = a.frame AND `+onFrame+`)
			OR EXISTS (SELECT 1 FROM labelled_frame lf WHERE lf.file_seq = a.file_seq AND lf.frame = a.frame`+lf+`))
		FROM file f JOIN annotation a ON a.file_seq = f.seq
		WHERE (`+where+`) AND a.type = 'class' AND ((`+human+`) OR (a.source = 'machine' AND a.operation = ?))
		ORDER BY a.file_seq, a.frame, a.seq`, all...)
	if err != nil {
		return fmt.Errorf("class labels to evaluate: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c ClassLabel
		if err := rows.Scan(&c.FileSeq, &c.Seq, &c.Frame, &c.Human, &c.Label, &c.Score, &c.TruthOnFrame); err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return rows.Err()
}

// KeypointLabels returns, for each label that operation's machine keypoints
// carry, the geometry (JSON keypoints) of one of them: enough to learn the
// label's point names.
func (l *Lake) KeypointLabels(ctx context.Context, operation string) (map[string]string, error) {
	// One geometry a label, read after the labels are found: reading it
	// with every row (GROUP BY's bare column) read every geometry.
	rows, err := l.db.R.QueryContext(ctx, `SELECT g.label, (SELECT b.geometry FROM annotation b
		WHERE b.operation = ?1 AND b.label = g.label AND b.source = 'machine' AND b.type = 'keypoints' LIMIT 1)
		FROM (SELECT DISTINCT label FROM annotation WHERE operation = ?1 AND source = 'machine' AND type = 'keypoints') g`,
		operation)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var label, geom string
		if err := rows.Scan(&label, &geom); err != nil {
			return nil, err
		}
		out[label] = geom
	}
	return out, rows.Err()
}

// AnnotationRef is what an evaluation's outcomes show of an annotation.
type AnnotationRef struct {
	ID, Source, Label string
	Frame             int
}

// AnnotationRefs returns the annotations with these keys (Box.Seq); keys of
// annotations since replaced or deleted are absent.
func (l *Lake) AnnotationRefs(ctx context.Context, seqs []int64) (map[int64]AnnotationRef, error) {
	rows, err := l.db.R.QueryContext(ctx, `SELECT seq, id, source, label, frame FROM annotation
		WHERE seq IN (SELECT value FROM json_each(?))`, jsonArray(seqs))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]AnnotationRef, len(seqs))
	for rows.Next() {
		var seq int64
		var a AnnotationRef
		if err := rows.Scan(&seq, &a.ID, &a.Source, &a.Label, &a.Frame); err != nil {
			return nil, err
		}
		out[seq] = a
	}
	return out, rows.Err()
}
