package job

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

func openDB(t *testing.T, path string) *sqlitedb.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Options{Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "job", Migrations()); err != nil {
		t.Fatal(err)
	}
	return db
}

// newQueue returns a queue with the handlers, started unless handlers is nil.
// The poll interval is an hour so the tests prove that wake-ups do the work.
func newQueue(t *testing.T, db *sqlitedb.DB, opt Options, handlers map[string]Handler) *Queue {
	t.Helper()
	if opt.PollInterval == 0 {
		opt.PollInterval = time.Hour
	}
	if opt.ProgressInterval == 0 {
		opt.ProgressInterval = 10 * time.Millisecond
	}
	opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	q := New(db, opt)
	for typ, h := range handlers {
		q.Handle(typ, h)
	}
	if handlers != nil {
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := q.Stop(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	return q
}

func enqueue(t *testing.T, q *Queue, typ string, payload any) string {
	t.Helper()
	jobID, err := q.Enqueue(context.Background(), nil, typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	return jobID
}

func wait(t *testing.T, q *Queue, jobID string) Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	j, err := q.Wait(ctx, jobID)
	if err != nil {
		t.Fatalf("wait %s: %v (status %s)", jobID, err, j.Status)
	}
	return j
}

// eventually polls get until ok accepts the job.
func eventually(t *testing.T, q *Queue, jobID string, what string, ok func(Job) bool) Job {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		j, err := q.Get(context.Background(), jobID)
		if err != nil {
			t.Fatal(err)
		}
		if ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: job is %+v", what, j)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEnqueueFollowsTransaction(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	ran := make(chan string, 10)
	q := newQueue(t, db, Options{}, map[string]Handler{"echo": func(ctx context.Context, r *Run) error {
		var p struct{ N int }
		if err := r.Decode(&p); err != nil {
			return err
		}
		ran <- r.Job().ID
		return r.SetResult(map[string]int{"n": p.N * 2})
	}})
	ctx := context.Background()
	var rolledBack string
	boom := errors.New("domain write failed")
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		rolledBack, err = q.Enqueue(ctx, tx, "echo", map[string]int{"N": 1})
		if err != nil {
			t.Fatal(err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, err := q.Get(ctx, rolledBack); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("rolled-back job: %v", err)
	}

	var committed string
	if err := db.Tx(ctx, func(tx *sql.Tx) (err error) {
		committed, err = q.Enqueue(ctx, tx, "echo", map[string]int{"N": 21})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	j := wait(t, q, committed)
	if j.Status != Completed || string(j.Result) != `{"n":42}` || j.Attempts != 1 || j.Progress() != 100 {
		t.Fatalf("job = %+v", j)
	}
	if j.StartedAt.IsZero() || j.FinishedAt.Before(j.StartedAt) || j.CreatedAt.After(j.StartedAt) {
		t.Fatalf("times: created %v started %v finished %v", j.CreatedAt, j.StartedAt, j.FinishedAt)
	}
	if got := <-ran; got != committed || len(ran) != 0 {
		t.Fatalf("ran %s and %d more, want only %s", got, len(ran), committed)
	}
	if _, err := q.Enqueue(ctx, nil, "", nil); errs.CodeOf(err) != errs.InvalidArgument {
		t.Fatalf("empty type: %v", err)
	}
	if _, err := q.Enqueue(ctx, nil, "echo", func() {}); errs.CodeOf(err) != errs.InvalidArgument {
		t.Fatalf("unmarshallable payload: %v", err)
	}
}

func TestProgressVisibleMidRun(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	release := make(chan struct{})
	q := newQueue(t, db, Options{}, map[string]Handler{"count": func(ctx context.Context, r *Run) error {
		r.SetTotal(4)
		r.Advance(1)
		<-release
		for range 100000 { // a hot loop must not cost 100000 writes
			r.Advance(0)
		}
		r.Advance(3)
		return nil
	}})
	jobID := enqueue(t, q, "count", nil)
	j := eventually(t, q, jobID, "progress 1/4", func(j Job) bool { return j.Done == 1 })
	if j.Status != Running || j.Total != 4 || j.Progress() != 25 {
		t.Fatalf("mid-run job = %+v, progress %d", j, j.Progress())
	}
	start := time.Now()
	close(release)
	j = wait(t, q, jobID)
	if j.Status != Completed || j.Done != 4 || j.Total != 4 || j.Result != nil {
		t.Fatalf("job = %+v", j)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("hot Advance loop took %v", d)
	}
}

func TestFailureAndPanic(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	q := newQueue(t, db, Options{}, map[string]Handler{
		"fail": func(ctx context.Context, r *Run) error {
			r.SetTotal(10)
			r.Advance(5)
			return errs.Invalid("labels", "label %q is not in the project", "bus")
		},
		"panic": func(ctx context.Context, r *Run) error {
			var m map[string]int
			m["x"] = 1
			return nil
		},
	})
	j := wait(t, q, enqueue(t, q, "fail", nil))
	if j.Status != Failed || j.Error != `label "bus" is not in the project` || j.Done != 5 || j.Progress() != 50 {
		t.Fatalf("failed job = %+v", j)
	}
	j = wait(t, q, enqueue(t, q, "panic", nil))
	if j.Status != Failed || !strings.Contains(j.Error, "panic: assignment to entry in nil map") {
		t.Fatalf("panicked job = %+v", j)
	}
	// The queue still works after a panic.
	j = wait(t, q, enqueue(t, q, "fail", nil))
	if j.Status != Failed {
		t.Fatalf("job after panic = %+v", j)
	}
}

func TestCancel(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	ctx := context.Background()
	started := make(chan struct{}, 1)
	q := newQueue(t, db, Options{}, map[string]Handler{
		"block": func(ctx context.Context, r *Run) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		},
		"stubborn": func(ctx context.Context, r *Run) error {
			started <- struct{}{}
			<-ctx.Done()
			return nil // finishes its work regardless
		},
	})

	queued := enqueue(t, q, "nobody-handles-this", nil)
	j, err := q.Cancel(ctx, queued)
	if err != nil || j.Status != Cancelled || !j.CancelRequested || j.FinishedAt.IsZero() {
		t.Fatalf("cancel queued: %+v, %v", j, err)
	}
	if _, err := q.Cancel(ctx, queued); errs.CodeOf(err) != errs.FailedPrecondition {
		t.Fatalf("cancel cancelled: %v", err)
	}
	if _, err := q.Cancel(ctx, "job_nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("cancel unknown: %v", err)
	}

	running := enqueue(t, q, "block", nil)
	<-started
	j, err = q.Cancel(ctx, running)
	if err != nil || !j.CancelRequested {
		t.Fatalf("cancel running: %+v, %v", j, err)
	}
	if j = wait(t, q, running); j.Status != Cancelled || j.Error != "" {
		t.Fatalf("cancelled running job = %+v", j)
	}

	stubborn := enqueue(t, q, "stubborn", nil)
	<-started
	if _, err := q.Cancel(ctx, stubborn); err != nil {
		t.Fatal(err)
	}
	if j = wait(t, q, stubborn); j.Status != Completed {
		t.Fatalf("handler that finished anyway = %+v", j)
	}
}

// A cancel from another process (here a second Queue on the same file, as the
// command line would be) reaches the handler through its progress writes.
func TestCancelFromAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	started := make(chan struct{})
	q := newQueue(t, openDB(t, path), Options{}, map[string]Handler{"tick": func(ctx context.Context, r *Run) error {
		close(started)
		for ctx.Err() == nil {
			r.Advance(1)
			time.Sleep(time.Millisecond)
		}
		return ctx.Err()
	}})
	jobID := enqueue(t, q, "tick", nil)
	<-started
	other := newQueue(t, openDB(t, path), Options{}, nil)
	if _, err := other.Cancel(context.Background(), jobID); err != nil {
		t.Fatal(err)
	}
	if j := wait(t, q, jobID); j.Status != Cancelled {
		t.Fatalf("job = %+v", j)
	}
}

func TestStopRequeuesAndNextStartResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	ctx := context.Background()
	started := make(chan struct{}, 1)
	q1 := newQueue(t, openDB(t, path), Options{}, map[string]Handler{"work": func(ctx context.Context, r *Run) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}})
	jobID := enqueue(t, q1, "work", map[string]string{"collection": "c1"})
	<-started
	if err := q1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	j, _ := q1.Get(ctx, jobID)
	if j.Status != Queued || j.Attempts != 0 || !j.FinishedAt.IsZero() {
		t.Fatalf("after Stop: %+v", j)
	}

	q2 := newQueue(t, openDB(t, path), Options{}, map[string]Handler{"work": func(ctx context.Context, r *Run) error {
		var p map[string]string
		if err := r.Decode(&p); err != nil {
			return err
		}
		return r.SetResult(p)
	}})
	if j = wait(t, q2, jobID); j.Status != Completed || j.Attempts != 1 || string(j.Result) != `{"collection":"c1"}` {
		t.Fatalf("resumed job = %+v", j)
	}
}

// crash leaves a job running in the database the way a dead process would:
// its handler ignores cancellation and Stop gives up waiting for it. release
// lets that handler return and waits until its queue has tried to record it.
func crash(t *testing.T, path, typ string) (jobID string, release func()) {
	t.Helper()
	started := make(chan struct{}, 1)
	unblock := make(chan struct{})
	q := newQueue(t, openDB(t, path), Options{}, map[string]Handler{typ: func(ctx context.Context, r *Run) error {
		started <- struct{}{}
		<-unblock
		return r.SetResult("from the dead process")
	}})
	var once sync.Once
	release = func() {
		once.Do(func() { close(unblock) })
		for {
			q.mu.Lock()
			n := len(q.runs)
			q.mu.Unlock()
			if n == 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	t.Cleanup(release) // before the database closes
	jobID = enqueue(t, q, typ, nil)
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("stop with a stuck handler: %v", err)
	}
	if j, _ := q.Get(context.Background(), jobID); j.Status != Running {
		t.Fatalf("crashed job = %+v", j)
	}
	return jobID, release
}

func TestResumeAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	jobID, release := crash(t, path, "work")
	q := newQueue(t, openDB(t, path), Options{}, map[string]Handler{"work": func(ctx context.Context, r *Run) error {
		if r.Job().Attempts != 2 {
			return errors.New("not a resumed run")
		}
		// The old attempt ends while this one runs: its outcome must not land.
		release()
		return r.SetResult("resumed")
	}})
	if j := wait(t, q, jobID); j.Status != Completed || j.Attempts != 2 || string(j.Result) != `"resumed"` {
		t.Fatalf("resumed job = %+v", j)
	}
}

func TestCrashLoopGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	jobID, _ := crash(t, path, "work")
	q := newQueue(t, openDB(t, path), Options{MaxAttempts: 1}, map[string]Handler{"work": func(ctx context.Context, r *Run) error {
		return errors.New("must not run")
	}})
	j, err := q.Get(context.Background(), jobID)
	if err != nil || j.Status != Failed || !strings.Contains(j.Error, "interrupted by a crash") {
		t.Fatalf("job = %+v, %v", j, err)
	}
}

func TestWorkersLimitAndUnhandledTypes(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	var running, peak atomic.Int32
	q := newQueue(t, db, Options{Workers: 2}, map[string]Handler{"sleep": func(ctx context.Context, r *Run) error {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		return nil
	}})
	orphan := enqueue(t, q, "unregistered", nil)
	var ids []string
	for range 6 {
		ids = append(ids, enqueue(t, q, "sleep", nil))
	}
	var wg sync.WaitGroup
	for _, jobID := range ids {
		wg.Go(func() {
			if j := wait(t, q, jobID); j.Status != Completed {
				t.Errorf("job = %+v", j)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrency %d, want 2", p)
	}
	if j, _ := q.Get(context.Background(), orphan); j.Status != Queued || j.Attempts != 0 {
		t.Fatalf("job without handler = %+v", j)
	}
}

func TestList(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	q := newQueue(t, db, Options{}, nil)
	ctx := context.Background()
	var a, b []string
	for range 5 {
		a = append(a, enqueue(t, q, "a", nil))
		b = append(b, enqueue(t, q, "b", nil))
	}
	for _, jobID := range a[:2] {
		if _, err := q.Cancel(ctx, jobID); err != nil {
			t.Fatal(err)
		}
	}
	list := func(opt ListOptions) ([]string, int) {
		t.Helper()
		jobs, total, err := q.List(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.ID)
		}
		return ids, total
	}
	if ids, total := list(ListOptions{PageSize: 3}); total != 10 || len(ids) != 3 || ids[0] != b[4] || ids[1] != a[4] {
		t.Fatalf("first page: %v of %d", ids, total)
	}
	if ids, total := list(ListOptions{PageSize: 3, PageIndex: 3}); total != 10 || len(ids) != 1 || ids[0] != a[0] {
		t.Fatalf("last page: %v of %d", ids, total)
	}
	if ids, total := list(ListOptions{Types: []string{"a"}, Status: []Status{Queued}}); total != 3 ||
		strings.Join(ids, ",") != strings.Join([]string{a[4], a[3], a[2]}, ",") {
		t.Fatalf("queued a: %v of %d", ids, total)
	}
	if _, total := list(ListOptions{Status: []Status{Cancelled, Running}}); total != 2 {
		t.Fatalf("cancelled or running: %d", total)
	}
	if ids, total := list(ListOptions{Types: []string{"c"}}); total != 0 || len(ids) != 0 {
		t.Fatalf("type c: %v of %d", ids, total)
	}
	for opt, field := range map[*ListOptions]string{
		{PageSize: MaxPageSize + 1}:   "pageSize",
		{PageIndex: -1}:               "pageIndex",
		{Status: []Status{"pending"}}: "status",
	} {
		_, _, err := q.List(ctx, *opt)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.InvalidArgument || e.Field != field {
			t.Errorf("%+v: %v", *opt, err)
		}
	}
}

func TestProgressPercent(t *testing.T) {
	for _, c := range []struct {
		j    Job
		want int
	}{
		{Job{Status: Running}, 0},
		{Job{Status: Running, Done: 1, Total: 3}, 33},
		{Job{Status: Running, Done: 5, Total: 5}, 99},
		{Job{Status: Running, Done: 9, Total: 5}, 99},
		{Job{Status: Completed}, 100},
		{Job{Status: Failed, Done: 1, Total: 2}, 50},
	} {
		if got := c.j.Progress(); got != c.want {
			t.Errorf("%+v: progress %d, want %d", c.j, got, c.want)
		}
	}
}

func TestPayloadIsStoredAsJSON(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	q := newQueue(t, db, Options{}, nil)
	raw := enqueue(t, q, "x", json.RawMessage(`{"k":[1,2]}`))
	none := enqueue(t, q, "x", nil)
	for jobID, want := range map[string]string{raw: `{"k":[1,2]}`, none: `null`} {
		if j, _ := q.Get(context.Background(), jobID); string(j.Payload) != want {
			t.Errorf("payload %s, want %s", j.Payload, want)
		}
	}
}

// A handler may report progress and enqueue follow-up jobs while it holds the
// single writer in a transaction of its own.
func TestHandlerInsideItsOwnTransaction(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	var q *Queue
	q = newQueue(t, db, Options{}, map[string]Handler{
		"parent": func(ctx context.Context, r *Run) error {
			var child string
			err := db.Tx(ctx, func(tx *sql.Tx) (err error) {
				r.SetTotal(2)
				r.Advance(1)
				time.Sleep(30 * time.Millisecond) // longer than the progress interval
				r.Advance(1)
				child, err = q.Enqueue(ctx, tx, "child", nil)
				return err
			})
			if err != nil {
				return err
			}
			return r.SetResult(child)
		},
		"child": func(ctx context.Context, r *Run) error { return nil },
	})
	j := wait(t, q, enqueue(t, q, "parent", nil))
	var child string
	if j.Status != Completed || j.Done != 2 || json.Unmarshal(j.Result, &child) != nil {
		t.Fatalf("parent = %+v", j)
	}
	if j = wait(t, q, child); j.Status != Completed {
		t.Fatalf("child = %+v", j)
	}
}

func TestLifecycleMisuse(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "t.db"))
	q := newQueue(t, db, Options{}, map[string]Handler{"a": func(ctx context.Context, r *Run) error { return nil }})
	if err := q.Start(context.Background()); errs.CodeOf(err) != errs.FailedPrecondition {
		t.Fatalf("second Start: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Handle after Start did not panic")
		}
	}()
	q.Handle("b", func(ctx context.Context, r *Run) error { return nil })
}

func TestRecordCompletedJob(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "jobs.db"))
	q := newQueue(t, db, Options{}, nil)
	var jobID string
	err := db.Tx(context.Background(), func(tx *sql.Tx) error {
		var err error
		jobID, err = Record(context.Background(), tx, "embedding_insert", map[string]string{"session_id": "s1"}, map[string]int{"upsertCount": 3}, 3)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	j, err := q.Get(context.Background(), jobID)
	if err != nil || j.Status != Completed || j.Progress() != 100 || string(j.Result) != `{"upsertCount":3}` || j.Done != 3 {
		t.Fatalf("recorded job %+v %v", j, err)
	}
}

// TestRetryFailedJob: a job the crash cap failed, and one whose handler
// failed, are queued again by Retry and complete with a fresh count of
// attempts; a job that is not failed is failed_precondition, an unknown one
// not_found. Cancel gives a failed job up (cancelled, its error kept).
func TestRetryFailedJob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	crashed, _ := crash(t, path, "work")
	fail := true
	q := newQueue(t, openDB(t, path), Options{MaxAttempts: 1}, map[string]Handler{"work": func(ctx context.Context, r *Run) error {
		if fail {
			return errors.New("not yet")
		}
		return r.SetResult(r.Job().Attempts)
	}})
	ctx := context.Background()
	if j, _ := q.Get(ctx, crashed); j.Status != Failed {
		t.Fatalf("crashed job = %+v", j)
	}
	failed := enqueue(t, q, "work", nil)
	if j := wait(t, q, failed); j.Status != Failed {
		t.Fatalf("job = %+v", j)
	}
	givenUp := enqueue(t, q, "work", nil)
	if j := wait(t, q, givenUp); j.Status != Failed {
		t.Fatalf("job = %+v", j)
	}
	if j, err := q.Cancel(ctx, givenUp); err != nil || j.Status != Cancelled || j.Error != "not yet" {
		t.Fatalf("cancel of a failed job = %+v, %v; want it cancelled with its error", j, err)
	}
	if _, err := q.Retry(ctx, givenUp); errs.CodeOf(err) != errs.FailedPrecondition {
		t.Errorf("retry of a cancelled job: %v, want failed_precondition", err)
	}
	fail = false
	for _, id := range []string{crashed, failed} {
		j, err := q.Retry(ctx, id)
		if err != nil || j.Status == Failed || j.Error != "" || j.Attempts > 1 { // it may have run already
			t.Fatalf("retry %s = %+v, %v", id, j, err)
		}
		if j = wait(t, q, id); j.Status != Completed || j.Attempts != 1 || string(j.Result) != "1" {
			t.Fatalf("retried job = %+v", j)
		}
		if _, err := q.Retry(ctx, id); errs.CodeOf(err) != errs.FailedPrecondition {
			t.Errorf("retry of a completed job: %v, want failed_precondition", err)
		}
	}
	if _, err := q.Retry(ctx, "job_nope"); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("retry of an unknown job: %v, want not_found", err)
	}
}
