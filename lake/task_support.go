package lake

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/framelake/framelake/errs"
)

// AddMembersTx lists files (by seq) in the collection, in tx, for
// annotation tasks made from lake files: the task's collection names its
// frames without copying them. Files already listed stay as they are.
func AddMembersTx(ctx context.Context, tx *sql.Tx, collectionSeq int64, fileSeqs []int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO collection_file (collection_seq, file_seq, added_at)
		SELECT ?, value, ? FROM json_each(?) WHERE true ON CONFLICT DO NOTHING`,
		collectionSeq, millis(time.Now()), jsonArray(fileSeqs))
	return err
}

// Patch is a box with its file, for review grids of box crops.
type Patch struct {
	Box
	UniqueName string `json:"uniqueName"`
	FileWidth  int    `json:"fileWidth"`
	FileHeight int    `json:"fileHeight"`
}

// PatchQuery selects the boxes of one label, oldest first.
type PatchQuery struct {
	Label    string
	Source   Source  // "" for both
	FileSeqs []int64 // only on these files; nil for the whole lake
	// HumanOperation, when set, keeps the human boxes of that operation only
	// (a task's project: a file in tasks of two projects has both's boxes).
	HumanOperation string
	PageIndex      int
	PageSize       int
}

// Patches pages through the boxes of a label (on image files: a crop needs
// pixels), and counts them all.
func (l *Lake) Patches(ctx context.Context, q PatchQuery) ([]Patch, int, error) {
	if q.Label == "" {
		return nil, 0, errs.Invalid("label", "label is required")
	}
	where, args := `a.label = ? AND f.type = 'image'`, []any{q.Label}
	if q.Source != "" {
		where += ` AND a.source = ?`
		args = append(args, q.Source)
	}
	if q.FileSeqs != nil {
		where += ` AND a.file_seq IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.FileSeqs))
	}
	if q.HumanOperation != "" {
		where += ` AND (a.source <> 'human' OR a.operation = ?)`
		args = append(args, q.HumanOperation)
	}
	var total int
	if err := l.db.R.QueryRowContext(ctx, `SELECT count(*) FROM annotation a JOIN file f ON f.seq = a.file_seq
		WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	// A patch carries its shape's geometry, which the review page draws over the crop.
	rows, err := l.db.R.QueryContext(ctx, `SELECT a.id, a.frame, a.label, a.x, a.y, a.w, a.h, a.confidence, a.source,
		a.operation, f.unique_name, coalesce(f.width, 0), coalesce(f.height, 0), a.type, a.geometry, a.area FROM annotation a
		JOIN file f ON f.seq = a.file_seq WHERE `+where+` ORDER BY a.file_seq, a.seq LIMIT ? OFFSET ?`,
		append(args, q.PageSize, q.PageIndex*q.PageSize)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Patch{}
	for rows.Next() {
		var p Patch
		var typ string
		var geometry sql.NullString
		var area sql.NullFloat64
		if err := rows.Scan(&p.ID, &p.Frame, &p.Label, &p.X, &p.Y, &p.W, &p.H, &p.Confidence, &p.Source, &p.Operation,
			&p.UniqueName, &p.FileWidth, &p.FileHeight, &typ, &geometry, &area); err != nil {
			return nil, 0, err
		}
		if err := p.loadShape(typ, geometry, area); err != nil {
			return nil, 0, fmt.Errorf("annotation %s: %w", p.ID, err)
		}
		p.X, p.Y, p.W, p.H = RoundCoord(p.X), RoundCoord(p.Y), roundSize(p.W), roundSize(p.H)
		out = append(out, p)
	}
	return out, total, rows.Err()
}

// TakeOverHumanBoxesTx makes the human boxes on files (by seq) with one of
// labels the boxes of operation op, in tx, for annotation tasks that start
// from the lake's labels: the same rows (ids, frames, attributes) change
// operation, so the file keeps one set of human boxes rather than a copy per
// source. Boxes whose operation is op already or one of keep (other
// annotation projects, each of which keeps its own answer) stay as they are.
// It returns, per file, how many human boxes of op it has afterwards.
func TakeOverHumanBoxesTx(ctx context.Context, tx *sql.Tx, fileSeqs []int64, labels, keep []string, op string) (map[int64]int, error) {
	out := map[int64]int{}
	if keep == nil {
		keep = []string{} // json_each('null') is one NULL row, and NOT IN (NULL) keeps nothing
	}
	const chunk = 10000
	for i := 0; i < len(fileSeqs); i += chunk {
		files, now := jsonArray(fileSeqs[i:min(len(fileSeqs), i+chunk)]), millis(time.Now())
		if _, err := tx.ExecContext(ctx, `UPDATE annotation SET operation = ?, updated_at = ?
			WHERE source = 'human' AND file_seq IN (SELECT value FROM json_each(?))
			AND label IN (SELECT value FROM json_each(?)) AND operation <> ?
			AND operation NOT IN (SELECT value FROM json_each(?))`,
			op, now, files, jsonArray(labels), op, jsonArray(keep)); err != nil {
			return nil, fmt.Errorf("take over boxes: %w", err)
		}
		// A changed box changes its file, as ReplaceBoxes has it.
		if _, err := tx.ExecContext(ctx, `UPDATE file SET updated_at = ?1 WHERE seq IN (SELECT DISTINCT file_seq
			FROM annotation WHERE operation = ?2 AND source = 'human' AND updated_at = ?1
			AND file_seq IN (SELECT value FROM json_each(?3)))`, now, op, files); err != nil {
			return nil, fmt.Errorf("take over boxes: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT file_seq, count(*) FROM annotation WHERE source = 'human'
			AND operation = ? AND file_seq IN (SELECT value FROM json_each(?)) GROUP BY file_seq`, op, files)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var seq int64
			var n int
			if err := rows.Scan(&seq, &n); err != nil {
				rows.Close()
				return nil, err
			}
			out[seq] = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
