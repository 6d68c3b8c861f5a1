package lake

import (
	"context"
	"database/sql"
	"time"
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
