package job

import (
	"context"
	"fmt"
)

// Running lists the jobs in status running, oldest first. With no live
// process running workers on the database (framelake check decides that),
// these are jobs a crash interrupted.
func (q *Queue) Running(ctx context.Context) ([]Job, error) {
	rows, err := q.db.R.QueryContext(ctx, `SELECT `+columns+` FROM job WHERE status = 'running' ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("running jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("running jobs: %w", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// Settle does to the jobs a dead process left running what the next Start
// would: queues them again, or fails them with a reason after MaxAttempts
// crashed starts, or cancels those a cancel was asked for. Only a process
// that knows no other one runs workers on the database may call it.
func (q *Queue) Settle(ctx context.Context) error { return q.resume(ctx) }
