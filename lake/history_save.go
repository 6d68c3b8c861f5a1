package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake/shape"
)

// storedShape is what an annotation row holds of one shape, as
// ReplaceBoxes writes it: two equal ones are the same shape.
type storedShape struct {
	label           string
	x, y, w, h      float64
	confidence      sql.NullFloat64
	attributes      string
	typ             string
	geometry        sql.NullString
	points, visible sql.NullInt64
	area            sql.NullFloat64
}

// box is the shape as a read of the lake (scanBoxes) answers it, for its
// history JSON.
func (s storedShape) box() (Box, error) {
	b := Box{Label: s.label, X: s.x, Y: s.y, W: s.w, H: s.h, Attributes: json.RawMessage(s.attributes)}
	if s.confidence.Valid {
		c := s.confidence.Float64
		b.Confidence = &c
	}
	if err := b.loadShape(s.typ, s.geometry, s.area); err != nil {
		return Box{}, err
	}
	b.roundCoords()
	return b, nil
}

// indexedEqual says whether the columns that indexes and the counting
// triggers read (label, type, confidence) are the same: only then can a
// row be changed by an UPDATE that touches no index but its id's.
func (s storedShape) indexedEqual(o storedShape) bool {
	return s.label == o.label && s.typ == o.typ && s.confidence == o.confidence
}

// toStore settles box i as ReplaceBoxes' insert stores it on a
// width×height frame.
func toStore(i int, b Box, width, height int) (storedShape, error) {
	attrs, err := normalizeObject("attributes", b.Attributes)
	if err != nil {
		return storedShape{}, err
	}
	sr := shapeRow{typ: shape.Box}
	if b.Type != "" && b.Type != shape.Box {
		if sr, err = b.settle(fmt.Sprintf("boxes[%d]", i), width, height, false); err != nil {
			return storedShape{}, err
		}
	}
	b.roundCoords()
	s := storedShape{label: b.Label, x: b.X, y: b.Y, w: b.W, h: b.H, attributes: attrs, typ: string(sr.typ),
		geometry: sr.geometry, points: sr.points, visible: sr.visible}
	if b.Confidence != nil {
		s.confidence = sql.NullFloat64{Float64: *b.Confidence, Valid: true}
	}
	if b.Area != nil {
		s.area = sql.NullFloat64{Float64: *b.Area, Valid: true}
	}
	return s, nil
}

// keptRow is one stored shape of a frame with its row.
type keptRow struct {
	seq   int64
	shape storedShape
}

func keptRows(ctx context.Context, tx *sql.Tx, fileSeq int64, source Source, operation string, frame int) ([]keptRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, label, x, y, w, h, confidence, attributes, type, geometry, points,
		visible, area FROM annotation WHERE file_seq = ? AND source = ? AND operation = ? AND frame = ? ORDER BY seq`,
		fileSeq, source, operation, frame)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []keptRow
	for rows.Next() {
		var r keptRow
		s := &r.shape
		if err := rows.Scan(&r.seq, &s.label, &s.x, &s.y, &s.w, &s.h, &s.confidence, &s.attributes, &s.typ, &s.geometry,
			&s.points, &s.visible, &s.area); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// replaceKept is ReplaceBoxes for the shapes the history keeps: people's,
// of one frame. The workspace saves a frame whole with one shape moved;
// rewriting every row (a delete and an insert each, five indexes and four
// counting triggers apiece, and the history's JSON of every shape twice)
// was most of the time a save held the one writer. Rows are matched to the
// boxes by position and only those that differ are written: a change of
// label, type or confidence (indexed, counted) replaces the row in its
// place (the same seq, so the frame reads back in the order given); any
// other change updates it. A changed shape gets a new id; an unchanged one
// keeps its row, id and times.
func replaceKept(ctx context.Context, tx *sql.Tx, fileSeq int64, source Source, operation string, frame int, boxes []Box) error {
	old, err := keptRows(ctx, tx, fileSeq, source, operation, frame)
	if err != nil {
		return fmt.Errorf("replace boxes: %w", err)
	}
	var width, height int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(width, 0), coalesce(height, 0) FROM file WHERE seq = ?`,
		fileSeq).Scan(&width, &height); err != nil {
		return fmt.Errorf("replace boxes: %w", err)
	}
	before, after := make([]string, len(old)), make([]string, len(boxes))
	for i, r := range old {
		if before[i], err = r.shape.json(); err != nil {
			return err
		}
	}
	w := keptWriter{ctx: ctx, tx: tx, fileSeq: fileSeq, frame: frame, source: source, operation: operation,
		now: millis(time.Now())}
	for i, b := range boxes {
		s, err := toStore(i, b, width, height)
		if err != nil {
			return err
		}
		switch {
		case i < len(old) && s == old[i].shape:
			after[i] = before[i]
			continue
		case i < len(old) && s.indexedEqual(old[i].shape):
			err = w.exec(`UPDATE annotation SET id = ?, x = ?, y = ?, w = ?, h = ?, attributes = ?, geometry = ?,
				points = ?, visible = ?, area = ?, created_at = ?, updated_at = ? WHERE seq = ?`, id.New("ann"), s.x, s.y,
				s.w, s.h, s.attributes, s.geometry, s.points, s.visible, s.area, w.now, w.now, old[i].seq)
		case i < len(old):
			if err = w.exec(`DELETE FROM annotation WHERE seq = ?`, old[i].seq); err == nil {
				err = w.insert(old[i].seq, s)
			}
		default:
			err = w.insert(nil, s)
		}
		if err != nil {
			return fmt.Errorf("replace boxes: %w", err)
		}
		if after[i], err = s.json(); err != nil {
			return err
		}
	}
	for _, r := range old[min(len(old), len(boxes)):] {
		if err := w.exec(`DELETE FROM annotation WHERE seq = ?`, r.seq); err != nil {
			return fmt.Errorf("replace boxes: %w", err)
		}
	}
	slices.Sort(before)
	slices.Sort(after)
	return recordChange(ctx, tx, fileSeq, frame, operation, before, after)
}

// json is the shape's history JSON (shapeJSONs) as read back.
func (s storedShape) json() (string, error) {
	b, err := s.box()
	if err != nil {
		return "", err
	}
	return shapeJSON(b), nil
}

// keptWriter writes a save's rows; the database's connections keep
// their statements prepared (sqlitedb's statement cache).
type keptWriter struct {
	ctx       context.Context
	tx        *sql.Tx
	fileSeq   int64
	frame     int
	source    Source
	operation string
	now       int64
}

func (w *keptWriter) exec(query string, args ...any) error {
	_, err := w.tx.ExecContext(w.ctx, query, args...)
	return err
}

// insert stores s as a new row, at seq when given (a row replaced in its
// place), else after the frame's others.
func (w *keptWriter) insert(seq any, s storedShape) error {
	return w.exec(`INSERT INTO annotation (seq, id, file_seq, frame, label, x, y, w, h, confidence, source,
		operation, attributes, created_at, updated_at, type, geometry, points, visible, area)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, seq, id.New("ann"), w.fileSeq, w.frame,
		s.label, s.x, s.y, s.w, s.h, s.confidence, w.source, w.operation, s.attributes, w.now, w.now, s.typ, s.geometry,
		s.points, s.visible, s.area)
}
