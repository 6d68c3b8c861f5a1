package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
)

// slowTagger tags every image "thing", taking 40 ms a call so that a run
// lasts long enough to lose an endpoint part-way.
var slowTagger = map[string]string{
	"code/requirements.txt": "",
	"label_list.yaml":       "- thing\n",
	"model.pt":              "weights",
	"code/inference.py": `import json, time

def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return body

def predict_fn(data, model):
    time.sleep(0.04)
    return {"boxes": [[0, 0, 4, 4]], "classes": [0], "scores": [0.9]}

def output_fn(pred, accept):
    return json.dumps(pred)
`,
}

// TestEndpointPool: a model with two endpoints (two framelake model serve
// processes) spreads a run's calls over both; one killed mid-run, the run
// retries its call on the other and completes with every file tagged once,
// and the job result says which endpoint ran how many calls.
func TestEndpointPool(t *testing.T) {
	ctx := context.Background()
	data, pkg := t.TempDir(), t.TempDir()
	for name, body := range slowTagger {
		os.MkdirAll(filepath.Join(pkg, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	startCmd(t, []string{"FRAMELAKE_MODELS_DIR=", "FRAMELAKE_INFERENCE_PLATFORM=", "FRAMELAKE_INFERENCE_ENDPOINT="},
		"serve", "--data", data, "--addr", addr)
	base := "http://" + addr
	waitHealthy(t, base)
	var key map[string]string
	b, _ := os.ReadFile(filepath.Join(data, "admin-key.json"))
	if err := json.Unmarshal(b, &key); err != nil {
		t.Fatal(err)
	}
	c := client.New(base, key["key"], key["secret"])
	if _, err := c.RegisterModel(ctx, pkg, "things", "auto_tagging"); err != nil {
		t.Fatal(err)
	}
	const n = 80
	var ups []client.UploadFile
	for i := range n {
		img := testmedia.JPEG(48, 32, i)
		ups = append(ups, client.UploadFile{Name: fmt.Sprintf("f%03d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }})
	}
	res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "pool"}, ups...)
	if err != nil || len(res.Stored) != n {
		t.Fatalf("upload: %v", err)
	}

	a, b2 := freeAddr(t), freeAddr(t)
	epA := startCmd(t, nil, "model", "serve", "things", "--data", data, "--addr", a)
	startCmd(t, nil, "model", "serve", "things", "--data", data, "--addr", b2)
	waitPing(t, "http://"+a)
	waitPing(t, "http://"+b2)
	if _, err := c.SetModelEndpoint(ctx, "things", "http://"+a+",http://"+b2); err != nil {
		t.Fatal(err)
	}
	started, err := c.GenerateAutoTagsToLake(ctx, "image", client.AnalysisOptions{ModelName: "things", InferencePlatform: "aws"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if j, err := c.Job(ctx, started.JobID); err == nil && (j.Done >= n/4 || j.Status != "running" && j.Status != "queued") {
			break
		}
	}
	epA.Process.Signal(syscall.SIGKILL)
	epA.Wait()
	j, err := c.WaitJob(ctx, started.JobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("run with an endpoint killed: %+v %v", j, err)
	}
	var result struct {
		Counts    struct{ Items, Tags int }
		Endpoints map[string]int
	}
	if err := json.Unmarshal(j.Result, &result); err != nil {
		t.Fatal(err)
	}
	ca, cb := result.Endpoints["http://"+a], result.Endpoints["http://"+b2]
	if result.Counts.Items != n || ca == 0 || cb == 0 || ca+cb != n || cb <= ca {
		t.Fatalf("result %s: want %d items, calls on both endpoints adding up to %d, most on the survivor", j.Result, n, n)
	}
	db, err := sqlitedb.Open(ctx, filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tags, files int
	if err := db.R.QueryRow(`SELECT count(*), count(DISTINCT file_seq) FROM file_tag WHERE operation = ? AND name = 'thing'`,
		started.RunID).Scan(&tags, &files); err != nil || tags != n || files != n {
		t.Fatalf("%d tags on %d files, want each of %d files tagged once (%v)", tags, files, n, err)
	}
	t.Logf("calls: %s %d, %s %d (killed after about a quarter)", a, ca, b2, cb)
}
