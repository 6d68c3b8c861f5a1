package job

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// Record adds a job that is already completed, in the caller's transaction:
// work done synchronously (an embedding batch, say) that still belongs in the
// job history, so a client can find it by type and payload later.
func Record(ctx context.Context, tx *sql.Tx, typ string, payload, result any, done int64) (string, error) {
	if typ == "" {
		return "", errs.Invalid("type", "job type is empty")
	}
	p, err := json.Marshal(payload)
	if err != nil {
		return "", errs.Wrap(errs.InvalidArgument, err, "job %s payload is not JSON", typ)
	}
	r, err := json.Marshal(result)
	if err != nil {
		return "", errs.Wrap(errs.InvalidArgument, err, "job %s result is not JSON", typ)
	}
	jobID := id.New("job")
	now := time.Now().UnixMilli()
	_, err = tx.ExecContext(ctx, `INSERT INTO job (id, type, status, payload, result, done, total, attempts,
		created_at, started_at, finished_at, updated_at) VALUES (?, ?, 'completed', ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
		jobID, typ, string(p), string(r), done, done, now, now, now, now)
	if err != nil {
		return "", fmt.Errorf("record %s job: %w", typ, err)
	}
	return jobID, nil
}
