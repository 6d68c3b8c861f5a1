package lake

import (
	"context"
	"fmt"

	"github.com/framelake/framelake/errs"
)

// Colour fields of MainValues.
const (
	ByLabel = "label"
	ByTag   = "tag"
)

// MainValues names one label (by = ByLabel: the label of most of the file's
// boxes) or tag (ByTag: of the file's tags, the one most of seqs carry) per
// file of seqs, so a map of many files can colour each by one value; files
// without any are absent. Ties go to the smaller name.
func (l *Lake) MainValues(ctx context.Context, by string, seqs []int64) (map[int64]string, error) {
	var q string
	switch by {
	case ByLabel:
		q = `SELECT file_seq, label FROM annotation WHERE file_seq IN (SELECT value FROM json_each(?1))
			GROUP BY file_seq, label ORDER BY file_seq, count(*) DESC, label`
	case ByTag:
		q = `WITH t AS (SELECT DISTINCT file_seq, name FROM file_tag WHERE file_seq IN (SELECT value FROM json_each(?1))),
			n AS (SELECT name, count(*) AS c FROM t GROUP BY name)
			SELECT t.file_seq, t.name FROM t JOIN n USING (name) ORDER BY t.file_seq, n.c DESC, t.name`
	default:
		return nil, errs.Invalid("colorBy", "colorBy must be %q or %q, got %q", ByLabel, ByTag, by)
	}
	out := make(map[int64]string, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	rows, err := l.db.R.QueryContext(ctx, q, jsonArray(seqs))
	if err != nil {
		return nil, fmt.Errorf("lake: %s of files: %w", by, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var v string
		if err := rows.Scan(&seq, &v); err != nil {
			return nil, err
		}
		if _, seen := out[seq]; !seen {
			out[seq] = v
		}
	}
	return out, rows.Err()
}
