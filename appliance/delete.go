package appliance

import (
	"context"
	"database/sql"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// deleteEmbeddings is the lake delete hook of the vector store: the delete
// triggers would drop the vectors anyway, but deleting them first lets a
// delete say how many went.
func deleteEmbeddings(v *vector.Store) lake.DeleteHook {
	return func(ctx context.Context, tx *sql.Tx, fileSeqs []int64, d *lake.Deleted) error {
		n, err := v.DeleteFiles(ctx, tx, fileSeqs)
		d.Removed.Embeddings += n
		return err
	}
}
