package lake

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// ImportOperationPrefix starts the operation id of boxes brought in from
// labelled data made elsewhere ("import:<collection>"), so they can never
// overwrite what an annotation project (prj_...) or a model run drew.
const ImportOperationPrefix = "import:"

// FileBoxes are the boxes an import gives one file.
type FileBoxes struct {
	UniqueName string `json:"uniqueName"`
	Boxes      []Box  `json:"annotations"`
}

// SetBoxesResult counts the files whose boxes changed and those that
// already had exactly these boxes.
type SetBoxesResult struct {
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// SetHumanBoxes makes boxes the human boxes operation gives each file, in
// one transaction. A file that already has exactly these boxes (same order,
// labels, coordinates and attributes) is left untouched, updated time
// included, so re-running an import changes nothing. Any bad box or unknown
// file fails the whole call and changes nothing.
func (l *Lake) SetHumanBoxes(ctx context.Context, operation string, files []FileBoxes) (SetBoxesResult, error) {
	var res SetBoxesResult
	err := l.db.Tx(ctx, func(tx *sql.Tx) (err error) {
		res, err = SetHumanBoxesTx(ctx, tx, operation, files)
		return err
	})
	return res, err
}

// SetHumanBoxesTx is SetHumanBoxes in tx, for an import that writes its
// files' boxes in the transaction that stores the files.
func SetHumanBoxesTx(ctx context.Context, tx *sql.Tx, operation string, files []FileBoxes) (SetBoxesResult, error) {
	var res SetBoxesResult
	if !strings.HasPrefix(operation, ImportOperationPrefix) || len(operation) == len(ImportOperationPrefix) {
		return res, errs.Invalid("operation", "operation must be %q followed by a name, got %q", ImportOperationPrefix, operation)
	}
	st, err := prepareBoxStatements(ctx, tx)
	if err != nil {
		return res, err
	}
	defer st.close()
	// The files first: the counts of those that change are kept per call.
	targets := make([]boxTarget, len(files))
	seqs := make([]int64, len(files))
	for i, fb := range files {
		t := &targets[i]
		err := st.file.QueryRowContext(ctx, fb.UniqueName).Scan(&t.seq, &t.width, &t.height, &t.frames)
		if err == sql.ErrNoRows {
			return res, errs.NotFoundf("file %q not found", fb.UniqueName)
		} else if err != nil {
			return res, err
		}
		seqs[i] = t.seq
	}
	bulk, err := beginBulk(ctx, tx, seqs)
	if err != nil {
		return res, err
	}
	for i, fb := range files {
		changed, err := st.set(ctx, operation, i, targets[i], fb)
		if err != nil {
			return res, err
		}
		if changed {
			res.Changed++
		} else {
			res.Unchanged++
		}
	}
	return res, bulk.end(ctx)
}

// boxTarget is the file a FileBoxes names: its seq, size and frames.
type boxTarget struct {
	seq                   int64
	width, height, frames sql.NullInt64
}

// boxStatements are SetHumanBoxes' statements, prepared once a call: a
// prepare per file cost more than the file's inserts.
type boxStatements struct {
	file, keys, del, ins, touch, unlabel, label *sql.Stmt
}

func prepareBoxStatements(ctx context.Context, tx *sql.Tx) (*boxStatements, error) {
	st := &boxStatements{}
	for _, p := range []struct {
		s **sql.Stmt
		q string
	}{
		{&st.file, `SELECT seq, width, height, frame_count FROM file WHERE unique_name = ?`},
		{&st.keys, `SELECT frame, label, x, y, w, h, attributes, coalesce(area, 0), type, geometry, points, visible FROM annotation
			WHERE file_seq = ? AND source = 'human' AND operation = ? ORDER BY seq`},
		{&st.del, `DELETE FROM annotation WHERE file_seq = ? AND source = 'human' AND operation = ?`},
		{&st.ins, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, source, operation, attributes,
			created_at, updated_at, area, type, geometry, points, visible)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'human', ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&st.touch, `UPDATE file SET updated_at = ? WHERE seq = ?`},
		{&st.unlabel, `DELETE FROM labelled_frame WHERE file_seq = ? AND operation = ?`},
		{&st.label, insertLabelled},
	} {
		var err error
		if *p.s, err = tx.PrepareContext(ctx, p.q); err != nil {
			st.close()
			return nil, err
		}
	}
	return st, nil
}

func (st *boxStatements) close() {
	for _, s := range []*sql.Stmt{st.file, st.keys, st.del, st.ins, st.touch, st.unlabel, st.label} {
		if s != nil {
			s.Close()
		}
	}
}

// set makes fb's boxes the file's human boxes of operation unless they
// already are, and reports whether anything changed.
func (st *boxStatements) set(ctx context.Context, operation string, i int, t boxTarget, fb FileBoxes) (bool, error) {
	seq, width, height, frames := t.seq, t.width, t.height, t.frames
	want := make([]boxRow, len(fb.Boxes))
	var imageID *int64
	for j := range fb.Boxes {
		b := &fb.Boxes[j]
		field := func() string { return fmt.Sprintf("files[%d].annotations[%d]", i, j) } // built only for an error
		attrs, err := normalizeObject("attributes", b.Attributes)
		if err != nil {
			return false, errs.Invalid(field()+".attributes", "%s.attributes: %v", field(), err)
		}
		attrs, facts, err := takeFacts(attrs)
		if err != nil {
			return false, errs.Invalid(field()+".attributes", "%s.attributes: %v", field(), err)
		}
		// The caller's box stays as given.
		r := withImportArea(*b, facts.area)
		sr, err := r.settle("", int(width.Int64), int(height.Int64), true)
		if err != nil {
			r = withImportArea(*b, facts.area)
			_, err = r.settle(field(), int(width.Int64), int(height.Int64), true)
			return false, err
		}
		if b.Frame < 0 || b.Frame >= max(int(frames.Int64), 1) {
			return false, errs.Invalid(field(), "%s: frame %d is not a frame of the file", field(), b.Frame)
		}
		imageID = cmpOr(imageID, facts.imageID)
		r.roundCoords()
		want[j] = boxRow{r.Frame, r.Label, r.X, r.Y, r.W, r.H, attrs, shapeArea(facts.area, r.Area), sr}
	}
	// The frames are labelled by operation, boxes or none ([] is an answer,
	// nil none), whether or not the boxes change: an import made before the
	// lake kept this learns it again.
	if fb.Boxes != nil {
		if err := st.markLabelled(ctx, seq, operation, want, imageID); err != nil {
			return false, err
		}
	} else if _, err := st.unlabel.ExecContext(ctx, seq, operation); err != nil { // its labels went away
		return false, err
	}
	have, err := st.boxKeys(ctx, seq, operation)
	if err != nil || slices.Equal(have, want) {
		return false, err
	}
	if _, err := st.del.ExecContext(ctx, seq, operation); err != nil {
		return false, err
	}
	now := millis(time.Now())
	for _, b := range want {
		if _, err := st.ins.ExecContext(ctx, id.New("ann"), seq, b.frame, b.label, b.x, b.y, b.w, b.h, operation,
			b.attrs, now, now, nullArea(b.area), b.typ, b.geometry, b.points, b.visible); err != nil {
			return false, fmt.Errorf("set boxes: %w", err)
		}
	}
	_, err = st.touch.ExecContext(ctx, now, seq)
	return true, err
}

// boxKeys lists the human boxes operation gave a file, in insertion order.
func (st *boxStatements) boxKeys(ctx context.Context, seq int64, operation string) ([]boxRow, error) {
	rows, err := st.keys.QueryContext(ctx, seq, operation)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []boxRow{}
	for rows.Next() {
		var b boxRow
		if err := rows.Scan(&b.frame, &b.label, &b.x, &b.y, &b.w, &b.h, &b.attrs, &b.area, &b.typ, &b.geometry,
			&b.points, &b.visible); err != nil {
			return nil, err
		}
		b.x, b.y, b.w, b.h = RoundCoord(b.x), RoundCoord(b.y), roundSize(b.w), roundSize(b.h)
		out = append(out, b)
	}
	return out, rows.Err()
}

// boxRow is a box as the annotation table holds it, comparable with ==.
type boxRow struct {
	frame      int
	label      string
	x, y, w, h float64
	attrs      string
	area       float64 // COCO's area, or a shape's; 0 none
	shapeRow
}

// boxRowsPerInsert is how many boxes one INSERT of InsertHumanBoxesTx
// carries: a statement of 256 rows cost as much to parse as its rows to
// insert, one of a row a round trip through database/sql each; 32 rows,
// prepared once a transaction, cost neither.
const boxRowsPerInsert = 32

// InsertHumanBoxesTx gives files that tx has just stored, and that so have
// no boxes yet, their human boxes from operation, in multi-row inserts: an
// import of a million boxes spent most of its time in SetHumanBoxesTx's
// look-ups and single-row inserts per file, needless for a file that did
// not exist before the transaction. A file with boxes counts as changed,
// one without as unchanged, as SetHumanBoxesTx counts. Any bad box fails
// the call.
func InsertHumanBoxesTx(ctx context.Context, tx *sql.Tx, operation string, files []File, boxes func(File) []Box) (SetBoxesResult, error) {
	prepared := make(map[int64]*ImportBoxes, len(files))
	for i, f := range files {
		ib, err := PrepareImportBoxes(i, f, boxes(f))
		if err != nil {
			return SetBoxesResult{}, err
		}
		prepared[f.Seq()] = ib
	}
	return InsertImportBoxesTx(ctx, tx, operation, files, func(f File) (*ImportBoxes, error) { return prepared[f.Seq()], nil })
}

// ImportBoxes are one file's import boxes checked, measured and encoded as
// the annotation table keeps them. An import makes them (PrepareImportBoxes)
// while it measures the file, before the transaction that stores it, and
// the transaction only inserts them: the checks and the encoding of a
// polygon's rings were a tenth of the transaction's time, and a transaction
// holds the lake's one writer while it runs.
type ImportBoxes struct {
	rows     []boxRow
	imageID  *int64 // the file's COCO image id, as its boxes give it
	labelled bool   // false: no labels name the file (nil boxes)
}

// PrepareImportBoxes checks and encodes boxes, those an import gives file
// f (its size and frames measured; stored or not), the i-th of its call:
// errors name files[i].annotations[j].
func PrepareImportBoxes(i int, f File, boxes []Box) (*ImportBoxes, error) {
	out := &ImportBoxes{rows: make([]boxRow, 0, len(boxes)), labelled: boxes != nil}
	for j, b := range boxes {
		field := func() string { return fmt.Sprintf("files[%d].annotations[%d]", i, j) } // built only for an error
		attrs, err := normalizeObject("attributes", b.Attributes)
		var facts importFacts
		if err == nil {
			attrs, facts, err = takeFacts(attrs)
			out.imageID = cmpOr(out.imageID, facts.imageID)
		}
		if err != nil {
			return nil, errs.Invalid(field()+".attributes", "%s.attributes: %v", field(), err)
		}
		b = withImportArea(b, facts.area)
		given := b
		sr, err := b.settle("", f.Width, f.Height, true)
		if err != nil {
			_, err = given.settle(field(), f.Width, f.Height, true)
			return nil, err
		}
		if b.Frame < 0 || b.Frame >= max(f.FrameCount, 1) {
			return nil, errs.Invalid(field(), "%s: frame %d is not a frame of the file", field(), b.Frame)
		}
		b.roundCoords()
		out.rows = append(out.rows, boxRow{b.Frame, b.Label, b.X, b.Y, b.W, b.H, attrs, shapeArea(facts.area, b.Area), sr})
	}
	return out, nil
}

// InsertImportBoxesTx is InsertHumanBoxesTx for boxes made ready before tx
// (PrepareImportBoxes): boxes gives each file's, or the error preparing
// them gave, which fails the call; nil is none.
func InsertImportBoxesTx(ctx context.Context, tx *sql.Tx, operation string, files []File, boxes func(File) (*ImportBoxes, error)) (SetBoxesResult, error) {
	var res SetBoxesResult
	if !strings.HasPrefix(operation, ImportOperationPrefix) || len(operation) == len(ImportOperationPrefix) {
		return res, errs.Invalid("operation", "operation must be %q followed by a name, got %q", ImportOperationPrefix, operation)
	}
	now := millis(time.Now())
	label, err := tx.PrepareContext(ctx, insertLabelled)
	if err != nil {
		return res, err
	}
	defer label.Close()
	w := &boxWriter{tx: tx, args: make([]any, 0, 17*boxRowsPerInsert)}
	defer w.close()
	seqs := make([]int64, len(files))
	for i, f := range files {
		seqs[i] = f.Seq()
	}
	counts, err := beginNewFileCounts(ctx, tx, seqs)
	if err != nil {
		return res, err
	}
	for _, f := range files {
		ib, err := boxes(f)
		if err != nil {
			return res, err
		}
		if ib == nil || len(ib.rows) == 0 {
			res.Unchanged++
		} else {
			res.Changed++
		}
		if ib == nil || !ib.labelled { // no labels name the file: not labelled, not judged
			continue
		}
		counts.file(f.Seq(), ib.rows)
		frames := map[int]bool{}
		for _, b := range ib.rows {
			frames[b.frame] = true
			if err := w.add(ctx, id.Ordered("ann"), f.Seq(), b.frame, b.label, b.x, b.y, b.w, b.h, operation, b.attrs,
				now, now, nullArea(b.area), b.typ, b.geometry, b.points, b.visible); err != nil {
				return res, err
			}
		}
		if err := labelFrames(ctx, label, f.Seq(), operation, frames, ib.imageID); err != nil {
			return res, err
		}
	}
	if err := w.flush(ctx); err != nil {
		return res, err
	}
	return res, counts.end(ctx)
}

// boxWriter inserts import boxes boxRowsPerInsert rows a statement, the full
// statement prepared once and the last, shorter one built for its rows.
type boxWriter struct {
	tx   *sql.Tx
	args []any
	rows int
	full *sql.Stmt
}

func (w *boxWriter) add(ctx context.Context, row ...any) error {
	w.args = append(w.args, row...)
	if w.rows++; w.rows == boxRowsPerInsert {
		return w.flush(ctx)
	}
	return nil
}

func (w *boxWriter) flush(ctx context.Context) (err error) {
	switch {
	case w.rows == 0:
		return nil
	case w.rows < boxRowsPerInsert:
		_, err = w.tx.ExecContext(ctx, insertBoxRows(w.rows), w.args...)
	case w.full == nil:
		if w.full, err = w.tx.PrepareContext(ctx, insertBoxRows(boxRowsPerInsert)); err != nil {
			return err
		}
		fallthrough
	default:
		_, err = w.full.ExecContext(ctx, w.args...)
	}
	if err != nil {
		return fmt.Errorf("insert boxes: %w", err)
	}
	w.args, w.rows = w.args[:0], 0
	return nil
}

func (w *boxWriter) close() {
	if w.full != nil {
		w.full.Close()
	}
}

// insertBoxRows is the INSERT of n import boxes.
func insertBoxRows(n int) string {
	q := `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, source, operation, attributes,
		created_at, updated_at, area, type, geometry, points, visible) VALUES ` +
		strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?, 'human', ?, ?, ?, ?, ?, ?, ?, ?, ?),`, n)
	return q[:len(q)-1]
}

// insertLabelled records that an operation labelled a frame (see migration
// 009), with its COCO image id when the import had one.
const insertLabelled = `INSERT OR REPLACE INTO labelled_frame (file_seq, operation, frame, image_id) VALUES (?, ?, ?, ?)`

// markLabelled makes the frames of want (frame 0 when there are none: the
// file is labelled empty) the frames operation labelled in the file.
func (st *boxStatements) markLabelled(ctx context.Context, seq int64, operation string, want []boxRow, imageID *int64) error {
	if _, err := st.unlabel.ExecContext(ctx, seq, operation); err != nil {
		return err
	}
	frames := map[int]bool{}
	for _, b := range want {
		frames[b.frame] = true
	}
	return labelFrames(ctx, st.label, seq, operation, frames, imageID)
}

// labelFrames records with label (insertLabelled) that operation labelled
// these frames of a file, or frame 0 when there are none: the file is
// labelled empty.
func labelFrames(ctx context.Context, label *sql.Stmt, seq int64, operation string, frames map[int]bool, imageID *int64) error {
	if len(frames) == 0 {
		frames = map[int]bool{0: true}
	}
	for fr := range frames {
		if _, err := label.ExecContext(ctx, seq, operation, fr, imageID); err != nil {
			return fmt.Errorf("labelled frames: %w", err)
		}
	}
	return nil
}

// Reserved attributes: facts a label reader (package format) hands over on the
// boxes it reads, which the lake keeps in columns, never in attributes.
// AreaAttribute is COCO's area of the annotation (annotation.area);
// ImageIDAttribute its image's id in the COCO file (labelled_frame.image_id).
const (
	AreaAttribute    = "_import_area"
	ImageIDAttribute = "_import_image_id"
)

// importFacts are the reserved attributes of a box; zero when absent.
type importFacts struct {
	area    float64
	imageID *int64
}

// takeFacts removes the reserved attributes from normalised attributes.
func takeFacts(attrs string) (string, importFacts, error) {
	var f importFacts
	if !strings.Contains(attrs, `"_import_`) {
		return attrs, f, nil
	}
	// A COCO annotation's area alone, as compacted: read without a decode
	// and an encode of the map (3 µs of each of a million boxes).
	if num, ok := strings.CutPrefix(attrs, `{"`+AreaAttribute+`":`); ok && !strings.ContainsAny(num, `,"{[`) {
		if a, err := strconv.ParseFloat(strings.TrimSuffix(num, "}"), 64); err == nil && a > 0 && !math.IsInf(a, 0) {
			return "{}", importFacts{area: a}, nil
		}
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(attrs))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return "", f, err
	}
	if v, ok := m[AreaAttribute]; ok {
		a, err := jsonNumber(v).Float64()
		if err != nil || !(a > 0) {
			return "", f, fmt.Errorf("%s must be a positive number, got %v", AreaAttribute, v)
		}
		f.area = a
		delete(m, AreaAttribute)
	}
	if v, ok := m[ImageIDAttribute]; ok {
		n, err := jsonNumber(v).Int64()
		if err != nil {
			return "", f, fmt.Errorf("%s must be an integer, got %v", ImageIDAttribute, v)
		}
		f.imageID = &n
		delete(m, ImageIDAttribute)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return "", f, err
	}
	return strings.TrimSuffix(b.String(), "\n"), f, nil
}

func jsonNumber(v any) json.Number {
	n, _ := v.(json.Number)
	return n
}

// cmpOr keeps the first image id a file's boxes give.
func cmpOr(have, next *int64) *int64 {
	if have != nil {
		return have
	}
	return next
}

// withImportArea gives b the area an import's file gave it (COCO's), which
// settle then keeps instead of rasterising a polygon to measure it: the area
// stored is the file's anyway (shapeArea), and measuring cost 13 µs a polygon.
func withImportArea(b Box, area float64) Box {
	b.Area = nil // an area is the lake's to measure: a client's "area" is not taken
	if area > 0 {
		b.Area = &area
	}
	return b
}

// nullArea stores no area as NULL.
func nullArea(a float64) any {
	if a > 0 {
		return a
	}
	return nil
}

// SetImageIDsTx records, in tx, the COCO image ids of files operation
// labelled (by file seq), so that frames labelled empty have theirs too.
func SetImageIDsTx(ctx context.Context, tx *sql.Tx, operation string, ids map[int64]int64) error {
	if len(ids) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `UPDATE labelled_frame SET image_id = ? WHERE file_seq = ? AND operation = ?`)
	if err != nil {
		return err
	}
	defer st.Close()
	for seq, id := range ids {
		if _, err := st.ExecContext(ctx, id, seq, operation); err != nil {
			return fmt.Errorf("image ids: %w", err)
		}
	}
	return nil
}

// SetImageIDs is SetImageIDsTx for files known by unique name.
func (l *Lake) SetImageIDs(ctx context.Context, operation string, ids map[string]int64) error {
	if len(ids) == 0 {
		return nil
	}
	return l.db.Tx(ctx, func(tx *sql.Tx) error {
		bySeq := make(map[int64]int64, len(ids))
		for name, id := range ids {
			var seq int64
			if err := tx.QueryRowContext(ctx, `SELECT seq FROM file WHERE unique_name = ?`, name).Scan(&seq); err != nil {
				return fmt.Errorf("image ids: file %q: %w", name, err)
			}
			bySeq[seq] = id
		}
		return SetImageIDsTx(ctx, tx, operation, bySeq)
	})
}

// WithoutImportFacts returns boxes with the reserved attributes removed, for
// a writer that keeps boxes as given (an annotation project's frames).
func WithoutImportFacts(boxes []Box) []Box {
	var out []Box
	for i, b := range boxes {
		if !bytes.Contains(b.Attributes, []byte(`"_import_`)) {
			continue
		}
		if out == nil {
			out = slices.Clone(boxes)
		}
		attrs, _, err := takeFacts(string(b.Attributes))
		if err != nil {
			continue // left as given: the writer's own check names it
		}
		out[i].Attributes = nil
		if attrs != "{}" {
			out[i].Attributes = json.RawMessage(attrs)
		}
	}
	if out == nil {
		return boxes
	}
	return out
}

// MarkLabelledTx records, in tx, that operation labelled a frame of a file
// (boxes or none): an annotation project's "No objects" is a labelled-empty
// frame that evaluations judge, as an import's empty label file is.
func MarkLabelledTx(ctx context.Context, tx *sql.Tx, fileSeq int64, operation string, frame int) error {
	_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO labelled_frame (file_seq, operation, frame) VALUES (?, ?, ?)`,
		fileSeq, operation, frame)
	return err
}
