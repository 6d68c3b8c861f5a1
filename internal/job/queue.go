package job

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

// Queue enqueues, runs and reports jobs. Enqueue, Get, List, Cancel and Wait
// work without Start; Start runs the registered handlers until Stop.
type Queue struct {
	db   *sqlitedb.DB
	opt  Options
	log  *slog.Logger
	wake chan struct{} // poked by Enqueue; buffered 1 so pokes never block

	// claimMu makes "claim a job, register its Run" and "mark a job
	// cancelled, cancel its Run" atomic with respect to each other, so a
	// Cancel cannot fall between a claim and its registration.
	claimMu sync.Mutex

	// lifeMu serializes Start and Stop, so a Stop during Start's recovery
	// waits for the dispatcher it has to stop.
	lifeMu sync.Mutex

	mu       sync.Mutex // guards the fields below
	handlers map[string]Handler
	types    string // JSON array of handled types, fixed at Start
	started  bool
	stopping bool
	stop     context.CancelFunc // stops the dispatcher
	runs     map[string]*Run    // running here, by job id
	changed  chan struct{}      // closed and replaced when a job finishes here

	wg sync.WaitGroup // the dispatcher and running handlers
}

// New returns a Queue on db, whose schema must include Migrations().
func New(db *sqlitedb.DB, opt Options) *Queue {
	if opt.Workers <= 0 {
		opt.Workers = 2
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = time.Second
	}
	if opt.ProgressInterval <= 0 {
		opt.ProgressInterval = 250 * time.Millisecond
	}
	if opt.MaxAttempts <= 0 {
		opt.MaxAttempts = 3
	}
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Queue{
		db:       db,
		opt:      opt,
		log:      log.With("component", "job"),
		wake:     make(chan struct{}, 1),
		handlers: map[string]Handler{},
		runs:     map[string]*Run{},
		changed:  make(chan struct{}),
	}
}

// Handle registers h for jobs of type typ. It panics on an empty type, a nil
// handler, a type registered twice, or a call after Start: all programming errors.
func (q *Queue) Handle(typ string, h Handler) {
	if typ == "" || h == nil {
		panic("job: Handle needs a type and a handler")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		panic("job: Handle " + typ + " after Start")
	}
	if _, dup := q.handlers[typ]; dup {
		panic("job: Handle " + typ + " registered twice")
	}
	q.handlers[typ] = h
}

// Start resumes the jobs a previous process left running (see the package
// comment) and starts the workers, which run until Stop. ctx bounds only the
// start itself. A Queue starts once.
func (q *Queue) Start(ctx context.Context) error {
	q.lifeMu.Lock()
	defer q.lifeMu.Unlock()
	q.mu.Lock()
	if q.started {
		q.mu.Unlock()
		return errs.New(errs.FailedPrecondition, "", "job queue already started")
	}
	types := make([]string, 0, len(q.handlers))
	for t := range q.handlers {
		types = append(types, t)
	}
	sort.Strings(types)
	b, _ := json.Marshal(types) // a []string always marshals
	q.types = string(b)
	q.started = true
	q.mu.Unlock()

	if err := q.resume(ctx); err != nil {
		q.mu.Lock()
		q.started = false
		q.mu.Unlock()
		return err
	}
	q.logUnhandled(ctx)
	dctx, stop := context.WithCancel(context.Background())
	q.mu.Lock()
	q.stop = stop
	q.mu.Unlock()
	q.wg.Add(1)
	go q.dispatch(dctx)
	return nil
}

// Stop stops claiming, cancels the running handlers' contexts and waits for
// them to return. Jobs they leave unfinished are queued again and run at the
// next Start. If ctx ends first, Stop returns its error and the jobs still
// running stay so in the database, to be resumed like after a crash. Stop on
// a queue not started, or already stopped, returns nil at once.
func (q *Queue) Stop(ctx context.Context) error {
	q.lifeMu.Lock()
	defer q.lifeMu.Unlock()
	q.mu.Lock()
	if !q.started || q.stopping {
		q.mu.Unlock()
		return nil
	}
	q.stopping = true
	q.stop()
	for _, r := range q.runs {
		r.cancel(errStopping)
	}
	q.mu.Unlock()

	done := make(chan struct{})
	go func() {
		q.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		n := len(q.runs)
		q.mu.Unlock()
		return fmt.Errorf("stop job queue: %d handlers still running: %w", n, ctx.Err())
	}
}

// resume settles the jobs a dead process left running: cancelled if a cancel
// was asked for, failed after MaxAttempts starts, queued again otherwise.
func (q *Queue) resume(ctx context.Context) error {
	now := time.Now().UnixMilli()
	var cancelled, failed, requeued int64
	err := q.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job SET status = 'cancelled', finished_at = ?, updated_at = ?
			WHERE status = 'running' AND cancel_requested = 1`, now, now)
		if err != nil {
			return err
		}
		cancelled, _ = res.RowsAffected()
		res, err = tx.ExecContext(ctx, `UPDATE job SET status = 'failed', finished_at = ?, updated_at = ?,
			error = printf('interrupted by a crash at each of its %d starts; not resumed again', attempts)
			WHERE status = 'running' AND attempts >= ?`, now, now, q.opt.MaxAttempts)
		if err != nil {
			return err
		}
		failed, _ = res.RowsAffected()
		res, err = tx.ExecContext(ctx, `UPDATE job SET status = 'queued', updated_at = ?
			WHERE status = 'running'`, now)
		if err != nil {
			return err
		}
		requeued, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return fmt.Errorf("resume jobs: %w", err)
	}
	if cancelled+failed+requeued > 0 {
		q.log.Warn("jobs interrupted by a previous process",
			"resumed", requeued, "cancelled", cancelled, "failed", failed)
	}
	return nil
}

// logUnhandled warns about queued jobs no handler here will run, which would
// otherwise wait silently.
func (q *Queue) logUnhandled(ctx context.Context) {
	rows, err := q.db.R.QueryContext(ctx, `SELECT type, count(*) FROM job
		WHERE status = 'queued' AND type NOT IN (SELECT value FROM json_each(?))
		GROUP BY type`, q.types)
	if err != nil {
		q.log.Error("list unhandled job types", "err", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var typ string
		var n int64
		if err := rows.Scan(&typ, &n); err != nil {
			q.log.Error("list unhandled job types", "err", err)
			return
		}
		q.log.Warn("queued jobs have no handler; they stay queued", "type", typ, "count", n)
	}
}

// dispatch claims jobs while a worker slot is free and runs each in its own
// goroutine; with nothing to claim it sleeps until a poke or the poll interval.
func (q *Queue) dispatch(ctx context.Context) {
	defer q.wg.Done()
	slots := make(chan struct{}, q.opt.Workers)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		r, err := q.claimNext(ctx)
		if r != nil {
			q.wg.Add(1)
			go func() {
				defer func() { <-slots }()
				q.execute(r)
			}()
			continue
		}
		<-slots
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			q.log.Error("claim job", "err", err)
		}
		t := time.NewTimer(q.opt.PollInterval)
		select {
		case <-q.wake:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// claimNext claims the oldest queued job this queue handles and registers its
// Run; it returns nil when there is none.
func (q *Queue) claimNext(ctx context.Context) (r *Run, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	q.claimMu.Lock()
	defer q.claimMu.Unlock()
	// Take the writer first so the start time is read after a caller's
	// enqueue transaction commits, not before.
	conn, err := q.db.W.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	now := time.Now().UnixMilli()
	row := conn.QueryRowContext(ctx, `UPDATE job SET status = 'running', attempts = attempts + 1,
			done = 0, error = '', result = NULL, started_at = ?, updated_at = ?
		WHERE status = 'queued' AND seq = (SELECT seq FROM job
			WHERE status = 'queued' AND type IN (SELECT value FROM json_each(?))
			ORDER BY seq LIMIT 1)
		RETURNING `+columns, now, now, q.types)
	j, err := scanJob(row)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return nil, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	r = newRun(q, j, q.handlers[j.Type])
	q.runs[j.ID] = r
	if q.stopping {
		r.cancel(errStopping)
	}
	return r, nil
}

// poke wakes the dispatcher without blocking; a pending poke is enough.
func (q *Queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// finished forgets a run and wakes Wait callers.
func (q *Queue) finished(jobID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.runs, jobID)
	q.broadcastLocked()
}

func (q *Queue) broadcastLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}
