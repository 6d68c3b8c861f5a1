package lake

import (
	"context"
	"database/sql"
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
