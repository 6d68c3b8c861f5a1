package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestImportJobRetryAfterCrashCap is the import killed three times:
// the server is killed with SIGKILL while the archive import job runs, at
// each of its three starts; the next start fails it (the crash cap) with
// part of the files in the lake. Its archive stays, `framelake check`
// reports the unfinished import, POST /jobs/{id}/retry (Go client
// RetryJob) queues it again and it completes with every file once, the
// archive then gone and check clean. A second retry of the completed job
// is a 409.
func TestImportJobRetryAfterCrashCap(t *testing.T) {
	const n = 3000
	data, media := t.TempDir(), t.TempDir()
	if err := testmedia.WriteJPEGs(media, n, 64, 48); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	entries, _ := os.ReadDir(media)
	for _, e := range entries {
		files["shots/"+e.Name()], _ = os.ReadFile(filepath.Join(media, e.Name()))
	}
	ctx := context.Background()
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	jobID, err := client.New(srv.base, key, secret).ImportArchive(ctx, bytes.NewReader(zipOf(t, files)),
		client.ImportArchiveOptions{Collection: "shots"})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 3; attempt++ {
		c := client.New(srv.base, key, secret)
		// Killed once this start runs: the first after some files are in.
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
			j, err := c.Job(ctx, jobID)
			if err != nil || j.Finished() || time.Now().After(deadline) {
				t.Fatalf("start %d: job %+v %v; want it running to kill it", attempt, j, err)
			}
			if j.Status == "running" && j.Attempts == attempt && (attempt > 1 || j.Done > 0) {
				break
			}
		}
		srv.kill()
		srv = startServer(t, data)
	}
	c := client.New(srv.base, key, secret)
	j, err := c.Job(ctx, jobID)
	if err != nil || j.Status != "failed" || !strings.Contains(j.Error, "interrupted by a crash") {
		t.Fatalf("after three kills: %+v %v; want failed by the crash cap", j, err)
	}
	in := countFiles(t, filepath.Join(data, "framelake.db"), false)
	t.Logf("failed with %d of %d files in the lake", in, n)
	if in == 0 || in >= n {
		t.Fatalf("%d files in the lake after the kills; want some of %d", in, n)
	}
	if kept, _ := filepath.Glob(filepath.Join(data, "imports", "*.archive")); len(kept) != 1 {
		t.Errorf("imports/ holds %d archives after the crash cap; want the job's kept", len(kept))
	}
	out, err := run(t, "check", "--data", data)
	if err == nil || !strings.Contains(out, "unfinished_import: job "+jobID) {
		t.Errorf("check with an unfinished import: %v\n%s", err, out)
	}
	// Restarted once more: a failed job's archive survives the start's sweep.
	srv.stop(t)
	srv = startServer(t, data)
	c = client.New(srv.base, key, secret)
	if j, err = c.RetryJob(ctx, jobID); err != nil || j.Status == "failed" || j.Error != "" {
		t.Fatalf("retry: %+v %v", j, err)
	}
	if j, err = c.WaitJob(ctx, jobID); err != nil || j.Status != "completed" {
		t.Fatalf("retried job: %+v %v", j, err)
	}
	var sum labelledSummary
	json.Unmarshal(j.Result, &sum)
	if sum.Files != n || sum.Stored+sum.Skipped != n || sum.Skipped < in {
		t.Errorf("retried job's result %s; want %d files, the %d already in skipped", j.Result, n, in)
	}
	if got := countFiles(t, filepath.Join(data, "framelake.db"), false); got != n {
		t.Errorf("%d files in the lake after the retry; want %d", got, n)
	}
	if left, _ := os.ReadDir(filepath.Join(data, "imports")); len(left) != 0 {
		t.Errorf("imports/ holds %d entries after the retried job completed", len(left))
	}
	var ce *client.Error
	if _, err := c.RetryJob(ctx, jobID); !errors.As(err, &ce) || ce.Status != 409 || ce.Code != "failed_precondition" {
		t.Errorf("retry of a completed job: %v; want 409 failed_precondition", err)
	}
	srv.stop(t)
	mustCheck(t, data)
}
