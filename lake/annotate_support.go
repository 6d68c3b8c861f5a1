package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

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
