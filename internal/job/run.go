package job

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// Run is a handler's view of the job it runs: the job, its payload, and the
// progress and result it reports. Its methods are safe for concurrent use.
//
// Progress is written to the database asynchronously, at most once per
// Options.ProgressInterval, so a handler may call Advance in a hot loop, and
// even while it holds the single writer in a transaction of its own.
type Run struct {
	q      *Queue
	job    Job
	h      Handler
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu        sync.Mutex // guards the fields below
	done      int64
	total     int64
	result    json.RawMessage
	lastWrite time.Time
	timer     *time.Timer // pending progress write
	finished  bool

	writeMu sync.Mutex // one progress or final write at a time, in order
}

func newRun(q *Queue, j Job, h Handler) *Run {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Run{q: q, job: j, h: h, ctx: ctx, cancel: cancel, total: j.Total}
}

// Job returns the job as it was when this attempt claimed it.
func (r *Run) Job() Job { return r.job }

// Decode unmarshals the job's payload into v.
func (r *Run) Decode(v any) error {
	if err := json.Unmarshal(r.job.Payload, v); err != nil {
		return fmt.Errorf("job %s payload: %w", r.job.ID, err)
	}
	return nil
}

// SetTotal sets how many units of work the job has.
func (r *Run) SetTotal(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total = n
	r.scheduleLocked()
}

// Advance records n more units of work done.
func (r *Run) Advance(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done += n
	r.scheduleLocked()
}

// SetResult sets the JSON result stored when the job ends; the last call wins.
func (r *Run) SetResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("job %s result: %w", r.job.ID, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.result = b
	return nil
}

// scheduleLocked arranges for the progress to be written once the interval
// since the last write has passed; one pending write carries every change.
func (r *Run) scheduleLocked() {
	if r.timer != nil || r.finished {
		return
	}
	wait := r.q.opt.ProgressInterval - time.Since(r.lastWrite)
	r.timer = time.AfterFunc(max(wait, 0), r.writeProgress)
}

// writeProgress stores the current progress. Its answer also carries a cancel
// asked for by another process, which then reaches the handler.
func (r *Run) writeProgress() {
	defer func() {
		if p := recover(); p != nil {
			r.q.log.Error("job progress write panicked", "job", r.job.ID, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	r.timer = nil
	if r.finished {
		r.mu.Unlock()
		return
	}
	done, total := r.done, r.total
	r.lastWrite = time.Now()
	r.mu.Unlock()

	var cancel int
	err := r.q.db.W.QueryRowContext(context.Background(), `UPDATE job SET done = ?, total = ?, updated_at = ?
		WHERE id = ? AND status = 'running' AND attempts = ?
		RETURNING cancel_requested`,
		done, total, time.Now().UnixMilli(), r.job.ID, r.job.Attempts).Scan(&cancel)
	switch {
	case errors.Is(err, sql.ErrNoRows): // finished or taken over meanwhile
	case err != nil:
		r.q.log.Error("write job progress", "job", r.job.ID, "err", err)
	case cancel == 1:
		r.cancel(errCancelled)
	}
}

// execute runs the handler and records its outcome; it is the body of the
// goroutine the dispatcher starts for each claimed job.
func (q *Queue) execute(r *Run) {
	defer q.wg.Done()
	defer q.finished(r.job.ID)
	start := time.Now()
	q.log.Info("job started", "job", r.job.ID, "type", r.job.Type, "attempt", r.job.Attempts)
	herr, panicked := r.call()
	status, msg := r.outcome(herr, panicked)
	final, err := r.finish(status, msg)
	if err != nil {
		// The row stays running; the next Start resumes it.
		q.log.Error("record job outcome", "job", r.job.ID, "status", status, "err", err)
		return
	}
	q.log.Info("job ended", "job", r.job.ID, "type", r.job.Type, "status", final,
		"error", msg, "duration", time.Since(start).Round(time.Millisecond))
}

// call runs the handler, turning a panic into an error. A run cancelled before
// it began (Stop raced its claim) does not call the handler at all.
func (r *Run) call() (err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			r.q.log.Error("job handler panicked", "job", r.job.ID, "panic", p, "stack", string(debug.Stack()))
			err, panicked = fmt.Errorf("panic: %v", p), true
		}
	}()
	defer r.cancel(nil) // release the context's resources
	if r.ctx.Err() != nil {
		return context.Cause(r.ctx), false
	}
	return r.h(r.ctx, r), false
}

// outcome decides the status a handler's return earns. Queued means Stop
// interrupted it and it runs again later.
func (r *Run) outcome(herr error, panicked bool) (Status, string) {
	if herr == nil {
		return Completed, ""
	}
	msg := herr.Error()
	if msg == "" {
		msg = "handler failed without a message"
	}
	if panicked {
		return Failed, msg
	}
	switch cause := context.Cause(r.ctx); {
	case errors.Is(cause, errCancelled):
		return Cancelled, ""
	case errors.Is(cause, errStopping):
		return Queued, ""
	}
	return Failed, msg
}

// finish stops progress writes and stores the outcome, returning the status
// recorded. A cancel asked for by another process and not yet seen here turns
// a failure or an interruption into cancelled. A Stop interruption does not
// count as an attempt, so graceful restarts never exhaust MaxAttempts.
func (r *Run) finish(status Status, msg string) (Status, error) {
	r.mu.Lock()
	r.finished = true
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	done, total := r.done, r.total
	var result any
	if r.result != nil {
		result = string(r.result)
	}
	r.mu.Unlock()
	r.writeMu.Lock() // wait for a progress write in flight
	defer r.writeMu.Unlock()

	now := time.Now().UnixMilli()
	var final Status
	err := r.q.db.W.QueryRowContext(context.Background(), `UPDATE job SET
			status = CASE WHEN cancel_requested = 1 AND ?1 IN ('failed', 'queued') THEN 'cancelled' ELSE ?1 END,
			attempts = attempts - (?1 = 'queued' AND cancel_requested = 0),
			finished_at = CASE WHEN ?1 = 'queued' AND cancel_requested = 0 THEN NULL ELSE ?2 END,
			error = ?3, result = ?4, done = ?5, total = ?6, updated_at = ?2
		WHERE id = ?7 AND status = 'running' AND attempts = ?8
		RETURNING status`,
		string(status), now, msg, result, done, total, r.job.ID, r.job.Attempts).Scan(&final)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("job %s is no longer this attempt's", r.job.ID)
	}
	return final, err
}
