package job

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// columns is what scanJob reads, in order.
const columns = `id, type, status, payload, result, error, done, total, attempts,
	cancel_requested, created_at, started_at, finished_at, updated_at`

// Enqueue adds a queued job of type typ with payload marshalled to JSON and
// returns its id. It inserts in tx, which must be a transaction of the queue's
// database (db.W), so the job exists exactly when the caller's domain write
// commits; a nil tx inserts in a transaction of its own. The workers are
// woken at once: their claim waits for the single writer connection, which is
// the caller's until it commits or rolls back, so they never miss the job.
func (q *Queue) Enqueue(ctx context.Context, tx *sql.Tx, typ string, payload any) (string, error) {
	if typ == "" {
		return "", errs.Invalid("type", "job type is empty")
	}
	p, err := json.Marshal(payload)
	if err != nil {
		return "", errs.Wrap(errs.InvalidArgument, err, "job %s payload is not JSON", typ)
	}
	jobID := id.New("job")
	insert := func(tx *sql.Tx) error {
		now := time.Now().UnixMilli()
		_, err := tx.ExecContext(ctx, `INSERT INTO job (id, type, status, payload, created_at, updated_at)
			VALUES (?, ?, 'queued', ?, ?, ?)`, jobID, typ, string(p), now, now)
		return err
	}
	if tx == nil {
		err = q.db.Tx(ctx, insert)
	} else {
		err = insert(tx)
	}
	if err != nil {
		return "", fmt.Errorf("enqueue %s job: %w", typ, err)
	}
	q.poke()
	return jobID, nil
}

// Get returns the job with id, or a not_found error.
func (q *Queue) Get(ctx context.Context, jobID string) (Job, error) {
	row := q.db.R.QueryRowContext(ctx, `SELECT `+columns+` FROM job WHERE id = ?`, jobID)
	j, err := scanJob(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, errs.NotFoundf("job %s not found", jobID)
	}
	if err != nil {
		return Job{}, fmt.Errorf("get job %s: %w", jobID, err)
	}
	return j, nil
}

// List returns one page of the jobs matching opt, newest first, and how many
// match in all. Bad options are invalid_argument errors naming the field.
func (q *Queue) List(ctx context.Context, opt ListOptions) ([]Job, int, error) {
	statuses, types, err := listFilters(&opt)
	if err != nil {
		return nil, 0, err
	}
	// One read transaction so the count and the page agree.
	tx, err := q.db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	defer tx.Rollback()
	const where = ` WHERE (?1 IS NULL OR status IN (SELECT value FROM json_each(?1)))
		AND (?2 IS NULL OR type IN (SELECT value FROM json_each(?2)))`
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM job`+where, statuses, types).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM job`+where+` ORDER BY seq DESC LIMIT ?3 OFFSET ?4`,
		statuses, types, opt.PageSize, opt.PageIndex*opt.PageSize)
	if err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	jobs := []Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list jobs: %w", err)
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, total, nil
}

// listFilters validates opt, fills its defaults and returns the status and
// type filters as JSON arrays, or nil for "any".
func listFilters(opt *ListOptions) (statuses, types any, err error) {
	switch {
	case opt.PageIndex < 0:
		return nil, nil, errs.Invalid("pageIndex", "pageIndex must not be negative")
	case opt.PageSize < 0:
		return nil, nil, errs.Invalid("pageSize", "pageSize must not be negative")
	case opt.PageSize > MaxPageSize:
		return nil, nil, errs.Invalid("pageSize", "pageSize must be at most %d", MaxPageSize)
	case opt.PageSize == 0:
		opt.PageSize = DefaultPageSize
	}
	for _, s := range opt.Status {
		if !s.Valid() {
			return nil, nil, errs.Invalid("status", "unknown job status %q", s)
		}
	}
	if len(opt.Status) > 0 {
		b, _ := json.Marshal(opt.Status) // strings always marshal
		statuses = string(b)
	}
	if len(opt.Types) > 0 {
		b, _ := json.Marshal(opt.Types)
		types = string(b)
	}
	return statuses, types, nil
}

// Cancel cancels a job: a queued one is cancelled at once; a running one has
// its handler's context cancelled and ends as cancelled (or completed, if the
// handler returns nil regardless); a failed one is given up: cancelled with
// its error kept, so what it kept for a retry (an import's archive) can go.
// It returns the job as it is after the request; an unknown id is
// not_found, a completed or cancelled job failed_precondition.
func (q *Queue) Cancel(ctx context.Context, jobID string) (Job, error) {
	q.claimMu.Lock()
	now := time.Now().UnixMilli()
	var st Status
	// SET expressions see the row before the update, RETURNING the row after it.
	err := q.db.W.QueryRowContext(ctx, `UPDATE job SET
			status = CASE status WHEN 'running' THEN status ELSE 'cancelled' END,
			finished_at = CASE status WHEN 'queued' THEN ? ELSE finished_at END,
			cancel_requested = 1, updated_at = ?
		WHERE id = ? AND status IN ('queued', 'running', 'failed')
		RETURNING status`, now, now, jobID).Scan(&st)
	q.mu.Lock()
	if err == nil && st == Running {
		if r := q.runs[jobID]; r != nil {
			r.cancel(errCancelled)
		}
	}
	if err == nil && st == Cancelled {
		q.broadcastLocked()
	}
	q.mu.Unlock()
	q.claimMu.Unlock()

	if errors.Is(err, sql.ErrNoRows) {
		j, err := q.Get(ctx, jobID)
		if err != nil {
			return Job{}, err
		}
		return Job{}, errs.New(errs.FailedPrecondition, "", "job %s is already %s", jobID, j.Status)
	}
	if err != nil {
		return Job{}, fmt.Errorf("cancel job %s: %w", jobID, err)
	}
	return q.Get(ctx, jobID)
}

// Wait blocks until the job is finished and returns it. When ctx ends first it
// returns the job as last read with ctx's error. Jobs finished by this queue
// wake it at once; others are noticed within PollInterval.
func (q *Queue) Wait(ctx context.Context, jobID string) (Job, error) {
	for {
		q.mu.Lock()
		changed := q.changed // taken before the read, so no finish is missed
		q.mu.Unlock()
		j, err := q.Get(ctx, jobID)
		if err != nil || j.Status.Finished() {
			return j, err
		}
		t := time.NewTimer(q.opt.PollInterval)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return j, ctx.Err()
		}
		t.Stop()
	}
}

type scanner interface{ Scan(dest ...any) error }

func scanJob(s scanner) (Job, error) {
	var (
		j                 Job
		payload           string
		result            sql.NullString
		cancel            int
		created, updated  int64
		started, finished sql.NullInt64
	)
	err := s.Scan(&j.ID, &j.Type, &j.Status, &payload, &result, &j.Error, &j.Done, &j.Total,
		&j.Attempts, &cancel, &created, &started, &finished, &updated)
	if err != nil {
		return Job{}, err
	}
	j.Payload = json.RawMessage(payload)
	if result.Valid {
		j.Result = json.RawMessage(result.String)
	}
	j.CancelRequested = cancel == 1
	j.CreatedAt = fromMillis(created)
	j.UpdatedAt = fromMillis(updated)
	if started.Valid {
		j.StartedAt = fromMillis(started.Int64)
	}
	if finished.Valid {
		j.FinishedAt = fromMillis(finished.Int64)
	}
	return j, nil
}

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// Retry queues a failed job again, from the beginning and with a fresh
// count of attempts (so a job the crash cap failed gets MaxAttempts more
// starts); its handler, idempotent, finishes what the failed attempts left.
// It returns the job as queued; an unknown id is not_found, a job that is
// not failed failed_precondition.
func (q *Queue) Retry(ctx context.Context, jobID string) (Job, error) {
	now := time.Now().UnixMilli()
	res, err := q.db.W.ExecContext(ctx, `UPDATE job SET status = 'queued', attempts = 0, done = 0, error = '',
			result = NULL, cancel_requested = 0, started_at = NULL, finished_at = NULL, updated_at = ?
		WHERE id = ? AND status = 'failed'`, now, jobID)
	if err != nil {
		return Job{}, fmt.Errorf("retry job %s: %w", jobID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		j, err := q.Get(ctx, jobID)
		if err != nil {
			return Job{}, err
		}
		return Job{}, errs.New(errs.FailedPrecondition, "", "job %s is %s; only a failed job can be retried", jobID, j.Status)
	}
	q.poke()
	return q.Get(ctx, jobID)
}
