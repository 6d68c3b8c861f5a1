// Package job runs framelake's long work (analysis, dataset builds, exports)
// as durable jobs in SQLite.
//
// A job is a row in table job. Domain code enqueues it inside the transaction
// of the domain write that asks for the work (Queue.Enqueue), so both commit or
// roll back together: there is never a dataset version without its build job,
// nor a build job for a version that does not exist. A started Queue claims
// queued jobs oldest first, each with one atomic UPDATE, runs the Handler
// registered for the job's type with at most Options.Workers at once, records
// progress (done of total) and stores the outcome: completed with an optional
// JSON result, failed with the error text (a panic is a failure too), or
// cancelled.
//
// Handlers must be idempotent: a job is started again from the beginning when
// a graceful Stop interrupted it (it is queued again at once) or the process
// died while it ran (the next Start queues it again). Handlers that want to
// skip finished work keep that state in their own tables. A job that was
// running at MaxAttempts crashes is failed instead of resumed, so one input
// that kills the process cannot keep killing it at every start.
// Retry queues a failed job again with a fresh count of attempts: a person
// decides it is worth another go, and the idempotent handler finishes what
// the failed attempts left.
//
// A job whose type has no handler in this process stays queued and is logged
// at Start: a build that registers the type can still run it, and it can be
// cancelled meanwhile.
//
// One process runs workers against a database file; Start assumes every job
// left running belongs to a dead process. Other processes (the command line)
// may Enqueue, Get, List and Cancel without Start. A Cancel from another
// process reaches a running handler at its next progress write.
package job

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"time"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the package's numbered schema migrations, for
// sqlitedb.DB.Migrate(ctx, "job", job.Migrations()).
func Migrations() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// Status is where a job is in its life. Values are stable and appear on the wire.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	switch s {
	case Queued, Running, Completed, Failed, Cancelled:
		return true
	}
	return false
}

// Finished reports whether a job in status s will not change any more.
func (s Status) Finished() bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Job is a snapshot of one job row.
type Job struct {
	ID      string
	Type    string
	Status  Status
	Payload json.RawMessage // as enqueued; "null" when none was given
	Result  json.RawMessage // what the handler set with Run.SetResult; nil when nothing
	Error   string          // why it failed; empty unless Status is Failed (or cancelled after failing)
	Done    int64           // units of work done in the current attempt
	Total   int64           // units of work in all; 0 while unknown
	// Attempts counts starts; more than one means the job was resumed.
	// A start that a graceful Stop interrupted is not counted.
	Attempts int
	// CancelRequested is set once Cancel was called; a running job ends soon after.
	CancelRequested bool
	CreatedAt       time.Time
	StartedAt       time.Time // latest start; zero if never started
	FinishedAt      time.Time // zero until finished
	UpdatedAt       time.Time
}

// Progress is Done of Total in whole percent. 100 is kept for completed jobs so
// a client never sees 100 on a job that is still running or did not finish.
func (j Job) Progress() int {
	if j.Status == Completed {
		return 100
	}
	if j.Total <= 0 || j.Done <= 0 {
		return 0
	}
	return min(99, int(float64(j.Done)/float64(j.Total)*100))
}

// Handler does the work of one job type. It should return soon after ctx is
// done (Cancel or Stop) with an error; returning nil means the work is done and
// the job completes even if a cancel arrived meanwhile. It must be idempotent
// (see the package comment) and must not hold a write transaction while
// calling Queue methods other than Enqueue.
type Handler func(ctx context.Context, r *Run) error

// Options tune a Queue; the zero value is the production default.
type Options struct {
	Workers int // handlers running at once; default 2
	// PollInterval is how often an idle queue looks for jobs it was not woken
	// for (enqueued by another process); default 1s.
	PollInterval time.Duration
	// ProgressInterval is the least time between two progress writes of one
	// job, so a hot Advance loop does not hammer the single writer; default 250ms.
	ProgressInterval time.Duration
	// MaxAttempts is how many starts a job may have before one that a crash
	// left running is failed instead of resumed; default 3.
	MaxAttempts int
	Logger      *slog.Logger // default slog.Default()
}

// ListOptions select a page of jobs, newest first.
type ListOptions struct {
	Status    []Status // any of these; all when empty
	Types     []string // any of these; all when empty
	PageIndex int      // from 0
	PageSize  int      // default DefaultPageSize, at most MaxPageSize
}

// Paging limits of List.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// Causes of a handler's context being cancelled; they decide the outcome.
var (
	errCancelled = errors.New("job cancelled")
	errStopping  = errors.New("job queue stopping")
)
