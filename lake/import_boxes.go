package lake

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/framelake/framelake/errs"
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
	if !strings.HasPrefix(operation, ImportOperationPrefix) || len(operation) == len(ImportOperationPrefix) {
		return res, errs.Invalid("operation", "operation must be %q followed by a name, got %q", ImportOperationPrefix, operation)
	}
	err := l.db.Tx(ctx, func(tx *sql.Tx) error {
		res = SetBoxesResult{}
		for i, fb := range files {
			changed, err := setFileBoxes(ctx, tx, operation, i, fb)
			if err != nil {
				return err
			}
			if changed {
				res.Changed++
			} else {
				res.Unchanged++
			}
		}
		return nil
	})
	return res, err
}

func setFileBoxes(ctx context.Context, tx *sql.Tx, operation string, i int, fb FileBoxes) (bool, error) {
	var seq int64
	var width, height, frames sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT seq, width, height, frame_count FROM file WHERE unique_name = ?`,
		fb.UniqueName).Scan(&seq, &width, &height, &frames)
	if err == sql.ErrNoRows {
		return false, errs.NotFoundf("file %q not found", fb.UniqueName)
	} else if err != nil {
		return false, err
	}
	want := make([]string, len(fb.Boxes))
	for j := range fb.Boxes {
		b := &fb.Boxes[j]
		field := fmt.Sprintf("files[%d].annotations[%d]", i, j)
		if err := CheckBox(field, *b, int(width.Int64), int(height.Int64)); err != nil {
			return false, err
		}
		if b.Frame < 0 || b.Frame >= max(int(frames.Int64), 1) {
			return false, errs.Invalid(field, "%s: frame %d is not a frame of the file", field, b.Frame)
		}
		attrs, err := normalizeObject(field+".attributes", b.Attributes)
		if err != nil {
			return false, err
		}
		want[j] = boxKey(b.Frame, b.Label, b.X, b.Y, b.W, b.H, attrs)
	}
	have, err := humanBoxKeys(ctx, tx, seq, operation)
	if err != nil {
		return false, err
	}
	if strings.Join(have, "\n") == strings.Join(want, "\n") {
		return false, nil
	}
	return true, ReplaceBoxes(ctx, tx, seq, Human, operation, -1, fb.Boxes)
}

// humanBoxKeys lists the boxes operation gave a file, in insertion order.
func humanBoxKeys(ctx context.Context, tx *sql.Tx, seq int64, operation string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT frame, label, x, y, w, h, attributes FROM annotation
		WHERE file_seq = ? AND source = ? AND operation = ? ORDER BY seq`, seq, Human, operation)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var frame int
		var label, attrs string
		var x, y, w, h float64
		if err := rows.Scan(&frame, &label, &x, &y, &w, &h, &attrs); err != nil {
			return nil, err
		}
		out = append(out, boxKey(frame, label, x, y, w, h, attrs))
	}
	return out, rows.Err()
}

func boxKey(frame int, label string, x, y, w, h float64, attrs string) string {
	return fmt.Sprintf("%d\x00%s\x00%g\x00%g\x00%g\x00%g\x00%s", frame, label, x, y, w, h, attrs)
}
