package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// What annotation (package annotate: projects, upload sessions, tasks) needs
// from the lake: collections, video indexes, task members and human boxes
// taken over inside its own transactions, boxes as JSON, review patches, and
// the tracks a video task counts.

// CreateCollectionTx creates, in tx, a collection named name that must not
// exist yet: annotation upload sessions own the collection they create, so an
// existing one is an AlreadyExists error rather than shared.
func CreateCollectionTx(ctx context.Context, tx *sql.Tx, name string, t CollectionType) (Collection, error) {
	if err := ValidateCollectionName(name); err != nil {
		return Collection{}, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	c := Collection{ID: id.New("col"), Name: name, Type: t, CreatedAt: now, UpdatedAt: now}
	err := tx.QueryRowContext(ctx, `INSERT INTO collection (id, name, type, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING seq`,
		c.ID, name, t, millis(now), millis(now)).Scan(&c.seq)
	if err == sql.ErrNoRows {
		return Collection{}, errs.New(errs.AlreadyExists, "collectionName", "collection %q already exists", name)
	}
	return c, err
}

// SetVideoIndexTx sets, in tx, a file's position in its upload sequence, for
// callers that learn it only inside the transaction that stores the file.
func SetVideoIndexTx(ctx context.Context, tx *sql.Tx, fileSeq int64, index int) error {
	_, err := tx.ExecContext(ctx, `UPDATE file SET video_index = ? WHERE seq = ?`, index, fileSeq)
	return err
}

// BoxesJSON returns, per file, the boxes q selects as one JSON array of
// {"id", "label", "x", "y", "width", "height", "attributes", "source"}
// objects in insertion order (files without a selected box are absent).
// SQLite builds the JSON: for the thousands of frames of an annotation
// download that is several times faster than scanning every box's columns.
func (l *Lake) BoxesJSON(ctx context.Context, q BoxQuery) (map[int64]json.RawMessage, error) {
	if len(q.FileSeqs) == 0 {
		return map[int64]json.RawMessage{}, nil
	}
	where := `a.file_seq IN (SELECT value FROM json_each(?))`
	args := []any{jsonArray(q.FileSeqs)}
	if len(q.Labels) > 0 {
		where += ` AND a.label IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Labels))
	}
	if len(q.Sources) > 0 {
		where += ` AND a.source IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Sources))
	}
	if q.Operations != nil {
		where += ` AND a.operation IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Operations))
	}
	if len(q.Types) > 0 {
		where += ` AND a.type IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.Types))
	}
	// Concatenation rather than json_object: attributes is stored compact and
	// valid (a CHECK), ids and sources need no escaping, and REALs print as
	// JSON numbers (NaN and infinities are refused at insert), so nothing
	// needs parsing again. Whole numbers print as integers, as Go prints them.
	// A box prints as it always has; every other type adds its type, its
	// geometry under its field's name (docs/shapes.md) and its area.
	rows, err := l.db.R.QueryContext(ctx, `SELECT a.file_seq, '[' || group_concat('{"id":"' || a.id ||
		'","label":' || json_quote(a.label) || iif(a.type = 'box', '', ',"type":"' || a.type || '"' ||
		iif(a.geometry IS NULL, '', ',"' || iif(a.type = 'polyline', 'points', a.type) || '":' || a.geometry) ||
		iif(a.area IS NULL, '', ',"area":' || `+jsonNum("a.area")+`)) ||
		',"x":' || `+jsonNum("a.x")+` || ',"y":' || `+jsonNum("a.y")+` ||
		',"width":' || `+jsonNum("a.w")+` || ',"height":' || `+jsonNum("a.h")+` || ',"attributes":' || a.attributes ||
		',"source":"' || a.source || '"}', ',' ORDER BY a.seq) || ']'
		FROM annotation a WHERE `+where+` GROUP BY a.file_seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]json.RawMessage, len(q.FileSeqs))
	for rows.Next() {
		var seq int64
		var arr []byte
		if err := rows.Scan(&seq, &arr); err != nil {
			return nil, err
		}
		out[seq] = arr
	}
	return out, rows.Err()
}

// jsonNum is an SQL expression printing the REAL column col as a JSON number:
// an integer when it is whole (10, not 10.0).
func jsonNum(col string) string {
	return `iif(` + col + ` = cast(` + col + ` AS INTEGER), cast(` + col + ` AS INTEGER), ` + col + `)`
}

// TrackSpans returns the first and last frames of operation's tracks on a
// video file (by seq) that meet frames from..to: what a video task counts as
// annotated.
func (l *Lake) TrackSpans(ctx context.Context, fileSeq int64, operation string, from, to int) ([][2]int, error) {
	rows, err := l.db.R.QueryContext(ctx, `SELECT first_frame, last_frame FROM track WHERE file_seq = ? AND operation = ?
		AND last_frame >= ? AND first_frame <= ?`, fileSeq, operation, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var spans [][2]int
	for rows.Next() {
		var sp [2]int
		if err := rows.Scan(&sp[0], &sp[1]); err != nil {
			return nil, err
		}
		spans = append(spans, sp)
	}
	return spans, rows.Err()
}

// TrackOnFrameSQL is boolean SQL, true when a track of the operation in the
// SQL expression operation lies on the frame in frame (from its first
// keyframe to its last) of the file whose key is in fileSeq. The three are
// the caller's column expressions, never user text.
func TrackOnFrameSQL(fileSeq, operation, frame string) string {
	return `EXISTS (SELECT 1 FROM track t WHERE t.file_seq = ` + fileSeq + ` AND t.operation = ` + operation + `
			AND ` + frame + ` BETWEEN t.first_frame AND t.last_frame)`
}

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
