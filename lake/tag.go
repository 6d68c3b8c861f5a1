package lake

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
)

// Tag names something seen in a file or a collection, by a model run
// (Operation = the run id) or a user (Operation "user").
type Tag struct {
	Name       string   `json:"name"`
	Operation  string   `json:"operation"`
	Confidence *float64 `json:"confidence,omitempty"`
}

// AddFileTags adds tags to a file in tx; a tag already there from the same
// operation keeps the higher confidence.
func AddFileTags(ctx context.Context, tx *sql.Tx, fileSeq int64, tags []Tag) error {
	return addTags(ctx, tx, "file_tag", "file_seq", fileSeq, tags)
}

// AddCollectionTags adds tags to a collection in tx.
func AddCollectionTags(ctx context.Context, tx *sql.Tx, collectionSeq int64, tags []Tag) error {
	return addTags(ctx, tx, "collection_tag", "collection_seq", collectionSeq, tags)
}

func addTags(ctx context.Context, tx *sql.Tx, table, key string, seq int64, tags []Tag) error {
	now := millis(time.Now())
	for _, t := range tags {
		if strings.TrimSpace(t.Name) == "" {
			return errs.Invalid("tags", "tag name is empty")
		}
		op := t.Operation
		if op == "" {
			op = "user"
		}
		// table and key are one of two fixed pairs chosen above, never input.
		_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+key+`, name, operation, confidence, created_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT DO UPDATE SET confidence = max(coalesce(confidence, 0), coalesce(excluded.confidence, 0))`,
			seq, t.Name, op, t.Confidence, now)
		if err != nil {
			return fmt.Errorf("add tags: %w", err)
		}
	}
	return nil
}

// FileTags returns the tags of a file, by name then operation.
func (l *Lake) FileTags(ctx context.Context, fileSeq int64) ([]Tag, error) {
	return l.tags(ctx, `SELECT name, operation, confidence FROM file_tag WHERE file_seq = ? ORDER BY name, operation`, fileSeq)
}

// CollectionTags returns the tags of a collection.
func (l *Lake) CollectionTags(ctx context.Context, collectionSeq int64) ([]Tag, error) {
	return l.tags(ctx, `SELECT name, operation, confidence FROM collection_tag WHERE collection_seq = ?
		ORDER BY name, operation`, collectionSeq)
}

func (l *Lake) tags(ctx context.Context, q string, seq int64) ([]Tag, error) {
	rows, err := l.db.R.QueryContext(ctx, q, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Tag
	for rows.Next() {
		var t Tag
		if err := rows.Scan(&t.Name, &t.Operation, &t.Confidence); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
