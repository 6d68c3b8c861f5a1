package lake

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake/shape"
)

// Source says who drew a box.
type Source string

const (
	Human   Source = "human"   // from an annotation project
	Machine Source = "machine" // from a model run
)

// Box is an annotation of a file: a labelled shape in pixels with its
// origin at the image's top-left corner. For a plain box (X, Y) is its
// top-left corner; for every other type (Shape) X, Y, W and H are the box
// derived from the shape, and a class's box is the whole frame.
type Box struct {
	ID         string          `json:"id,omitempty"`
	FileSeq    int64           `json:"-"`
	Frame      int             `json:"frame"` // frame of a video; 0 for images
	Label      string          `json:"label"`
	X          float64         `json:"x"`
	Y          float64         `json:"y"`
	W          float64         `json:"width"`
	H          float64         `json:"height"`
	Confidence *float64        `json:"confidence,omitempty"` // machine boxes
	Source     Source          `json:"source"`
	Operation  string          `json:"operation"` // project id or model run id
	Attributes json.RawMessage `json:"attributes,omitempty"`
	shape.Geometry
}

// CoordDecimals is the precision of box coordinates, in decimals of a
// pixel: the lake stores and answers x, y, width and height rounded to
// 1e-6 px (RoundCoord), so arithmetic noise of a conversion (a YOLO centre
// times the image size: 223.00000000000006) never reaches an answer, while a
// coordinate given with at most 6 decimals is kept exactly: it reads back,
// and exports, as the same float64.
const CoordDecimals = 6

// RoundCoord rounds a coordinate to CoordDecimals decimals: the nearest
// float64 to the decimal k/1e6, so the float64 of any decimal of at most 6
// decimals (below 1e9 px, past any image) is its own rounding. Every write
// and read of box coordinates passes through it (Box.roundCoords).
func RoundCoord(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) >= 1e9 {
		return v // CheckBox refuses these; a box past 1e9 px is not worth rounding
	}
	return math.Round(v*1e6) / 1e6
}

// roundSize is RoundCoord for a width or height, kept positive: a size
// under half the precision becomes the precision, not zero.
func roundSize(v float64) float64 {
	if r := RoundCoord(v); r > 0 || v <= 0 {
		return r
	}
	return 1e-6
}

// roundCoords rounds b's coordinates (see CoordDecimals).
func (b *Box) roundCoords() {
	b.X, b.Y, b.W, b.H = RoundCoord(b.X), RoundCoord(b.Y), roundSize(b.W), roundSize(b.H)
}

// CheckBox validates an annotation of any type against the frame it is
// drawn on (width and height in pixels; 0 when unknown): a box has a
// positive size, finite numbers and is not wholly outside the image; other
// shapes follow docs/shapes.md. field names the request field in errors.
func CheckBox(field string, b Box, width, height int) error {
	_, err := b.settle(field, width, height, false)
	return err
}

// checkBox validates a plain box (see CheckBox).
func checkBox(field string, b Box, width, height int) error {
	for _, v := range []float64{b.X, b.Y, b.W, b.H} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errs.Invalid(field, "%s: coordinates must be finite numbers", field)
		}
	}
	if err := checkLabelConfidence(field, b); err != nil {
		return err
	}
	switch {
	case b.W <= 0 || b.H <= 0:
		return errs.Invalid(field, "%s: width and height must be positive, got %gx%g", field, b.W, b.H)
	case width > 0 && height > 0 && (b.X >= float64(width) || b.Y >= float64(height) || b.X+b.W <= 0 || b.Y+b.H <= 0):
		return errs.Invalid(field, "%s: box at (%g,%g) size %gx%g is outside the %dx%d image", field, b.X, b.Y, b.W, b.H, width, height)
	case width > 0 && height > 0 && (b.X < -float64(width) || b.Y < -float64(height) ||
		b.X+b.W > 2*float64(width) || b.Y+b.H > 2*float64(height)):
		// A box may overlap the edge; one reaching a whole image past it is
		// garbage (a width of 1e300 on a 16-pixel image) that exports would
		// carry as absurd normalized coordinates.
		return errs.Invalid(field, "%s: box at (%g,%g) size %gx%g reaches more than the image's size past the edge of the %dx%d image",
			field, b.X, b.Y, b.W, b.H, width, height)
	}
	return nil
}

// checkLabelConfidence validates what every type has: a label, and a
// confidence in 0..1 when there is one.
func checkLabelConfidence(field string, b Box) error {
	switch {
	case strings.TrimSpace(b.Label) == "":
		return errs.Invalid(field, "%s: label is empty", field)
	case b.Confidence != nil && (*b.Confidence < 0 || *b.Confidence > 1 || math.IsNaN(*b.Confidence)):
		return errs.Invalid(field, "%s: confidence must be in 0..1", field)
	}
	return nil
}

// ReplaceBoxes replaces, in tx, the boxes of one file that came from
// operation with source (on frame, or on every frame when frame < 0) by
// boxes, and bumps the file's updated time.
func ReplaceBoxes(ctx context.Context, tx *sql.Tx, fileSeq int64, source Source, operation string, frame int, boxes []Box) error {
	// People's edits of a frame are kept in its history (history.go), and
	// written row by row as they change (history_save.go); a model run's
	// boxes are its own record.
	if source == Human && frame >= 0 {
		if err := replaceKept(ctx, tx, fileSeq, source, operation, frame, boxes); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE file SET updated_at = ? WHERE seq = ?`, millis(time.Now()), fileSeq)
		return err
	}
	q := `DELETE FROM annotation WHERE file_seq = ? AND source = ? AND operation = ?`
	args := []any{fileSeq, source, operation}
	if frame >= 0 {
		q += ` AND frame = ?`
		args = append(args, frame)
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("replace boxes: %w", err)
	}
	var width, height int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(width, 0), coalesce(height, 0) FROM file WHERE seq = ?`,
		fileSeq).Scan(&width, &height); err != nil {
		return fmt.Errorf("replace boxes: %w", err)
	}
	now := millis(time.Now())
	ins, err := tx.PrepareContext(ctx, `INSERT INTO annotation (id, file_seq, frame, label, x, y, w, h, confidence,
		source, operation, attributes, created_at, updated_at, type, geometry, points, visible, area)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for i, b := range boxes {
		attrs, err := normalizeObject("attributes", b.Attributes)
		if err != nil {
			return err
		}
		f := b.Frame
		if frame >= 0 {
			f = frame
		}
		// Callers check their boxes (a model's are clipped to the image);
		// other shapes are checked and measured here, where the frame's size is known.
		sr := shapeRow{typ: shape.Box}
		if b.Type != "" && b.Type != shape.Box {
			if sr, err = b.settle(fmt.Sprintf("boxes[%d]", i), width, height, false); err != nil {
				return err
			}
		}
		b.roundCoords()
		if _, err := ins.ExecContext(ctx, id.New("ann"), fileSeq, f, b.Label, b.X, b.Y, b.W, b.H, b.Confidence,
			source, operation, attrs, now, now, sr.typ, sr.geometry, sr.points, sr.visible, b.Area); err != nil {
			return fmt.Errorf("replace boxes: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE file SET updated_at = ? WHERE seq = ?`, now, fileSeq)
	return err
}

// BoxQuery selects boxes to read.
type BoxQuery struct {
	FileSeqs   []int64      // required: the files
	Labels     []string     // only these labels; all when empty
	Sources    []Source     // only these sources; all when empty
	Operations []string     // only from these operations; all when nil
	Types      []shape.Type // only of these types; all when empty
}

// Boxes returns the boxes of files, ordered by file, frame and insertion.
func (l *Lake) Boxes(ctx context.Context, q BoxQuery) ([]Box, error) {
	if len(q.FileSeqs) == 0 {
		return nil, nil
	}
	sqlText := boxColumns + ` WHERE a.file_seq IN (SELECT value FROM json_each(?))`
	args := []any{jsonArray(q.FileSeqs)}
	if len(q.Labels) > 0 {
		sqlText += ` AND a.label IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Labels))
	}
	if len(q.Sources) > 0 {
		sqlText += ` AND a.source IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Sources))
	}
	if q.Operations != nil {
		sqlText += ` AND a.operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Operations))
	}
	if len(q.Types) > 0 {
		sqlText += ` AND a.type IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Types))
	}
	var out []Box
	err := l.scanBoxes(ctx, sqlText+` ORDER BY a.file_seq, a.frame, a.seq`, args, func(b Box) { out = append(out, b) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// boxColumns selects the columns scanBoxes reads, from annotation a.
const boxColumns = `SELECT a.id, a.file_seq, a.frame, a.label, a.x, a.y, a.w, a.h, a.confidence, a.source, a.operation,
	a.attributes, a.type, a.geometry, a.area FROM annotation a`

// scanBoxes runs q (boxColumns and its conditions) and hands each box, its
// coordinates rounded (RoundCoord), to add.
func (l *Lake) scanBoxes(ctx context.Context, q string, args []any, add func(Box)) error {
	return l.scanRows(ctx, q, args, func(rows *sql.Rows) error {
		var b Box
		var attrs, typ string
		var geometry sql.NullString
		var area sql.NullFloat64
		if err := rows.Scan(&b.ID, &b.FileSeq, &b.Frame, &b.Label, &b.X, &b.Y, &b.W, &b.H, &b.Confidence, &b.Source,
			&b.Operation, &attrs, &typ, &geometry, &area); err != nil {
			return err
		}
		if err := b.loadShape(typ, geometry, area); err != nil {
			return fmt.Errorf("annotation %s: %w", b.ID, err)
		}
		b.Attributes = json.RawMessage(attrs)
		b.roundCoords()
		add(b)
		return nil
	})
}

// jsonArray encodes v for json_each, which keeps one bound parameter however
// long the list is.
func jsonArray(v any) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	return strings.TrimSpace(b.String())
}
