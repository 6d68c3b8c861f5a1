package appliance_test

import (
	"context"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/job"
)

// TestCancelJobOverHTTP cancels a queued and a running job through the Go
// client and checks the refusals: an unknown id, a finished job, a read key.
func TestCancelJobOverHTTP(t *testing.T) {
	// No workers from Open, so this test registers a handler that blocks
	// until cancelled, then starts the queue itself.
	e := start(t, appliance.Config{JobWorkers: -1})
	ctx := context.Background()
	q := e.a.Jobs
	running := make(chan struct{})
	q.Handle("test.block", func(ctx context.Context, r *job.Run) error {
		close(running)
		<-ctx.Done()
		return context.Cause(ctx)
	})
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(stop); err != nil {
			t.Error(err)
		}
	})
	queued, err := q.Enqueue(ctx, nil, "test.unhandled", nil) // no handler: it stays queued
	if err != nil {
		t.Fatal(err)
	}
	busy, err := q.Enqueue(ctx, nil, "test.block", nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-running:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking job never started")
	}

	if _, err := e.read.CancelJob(ctx, busy); client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key cancel: %v", err)
	}
	j, err := e.write.CancelJob(ctx, queued)
	if err != nil || j.ID != queued || j.Status != "cancelled" || j.FinishedAt == nil {
		t.Errorf("cancel queued: %+v %v", j, err)
	}
	j, err = e.write.CancelJob(ctx, busy)
	if err != nil || j.ID != busy || (j.Status != "running" && j.Status != "cancelled") {
		t.Errorf("cancel running: %+v %v", j, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if j, err := e.read.WaitJob(wctx, busy); err != nil || j.Status != "cancelled" {
		t.Errorf("running job after cancel: %+v %v", j, err)
	}
	for _, c := range []struct {
		id, code string
		status   int
	}{
		{"job_missing", "not_found", 404},
		{queued, "failed_precondition", 409}, // already cancelled
		{busy, "failed_precondition", 409},
	} {
		_, err := e.write.CancelJob(ctx, c.id)
		var ce *client.Error
		if !errorsAs(err, &ce) || ce.Code != c.code || ce.Status != c.status {
			t.Errorf("cancel %s: %v; want %d %s", c.id, err, c.status, c.code)
		}
	}
}
