package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// wholeImage is an auto-tagging package that sees one "thing" filling every
// image (the server clips the box to the image), score 0.8.
const wholeImage = `
def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return body

def predict_fn(data, model):
    return {"boxes": [[0, 0, 100000, 100000]], "classes": [0], "scores": [0.8]}

def output_fn(pred, accept):
    return pred
`

// TestEvalCommands runs framelake eval run, show, compare and list against
// the binary's server: a real model run, human boxes imported beside it.
func TestEvalCommands(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data) // stopped by its cleanup
	base := srv.base
	var admin map[string]string
	b, _ := os.ReadFile(filepath.Join(data, "admin-key.json"))
	if err := json.Unmarshal(b, &admin); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := client.New(base, admin["key"], admin["secret"])
	pkg := t.TempDir()
	os.MkdirAll(filepath.Join(pkg, "code"), 0o755)
	os.WriteFile(filepath.Join(pkg, "code", "inference.py"), []byte(wholeImage), 0o644)
	os.WriteFile(filepath.Join(pkg, "code", "requirements.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(pkg, "label_list.yaml"), []byte("- thing\n"), 0o644)
	os.WriteFile(filepath.Join(pkg, "model.pt"), []byte("weights"), 0o644)
	if _, err := c.RegisterModel(ctx, pkg, "whole", "auto_tagging"); err != nil {
		t.Fatal(err)
	}
	var ups []client.UploadFile
	for i := range 2 {
		b := testmedia.JPEG(32, 24, i+1)
		ups = append(ups, client.UploadFile{Name: fmt.Sprintf("e%d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "ev"}, ups...)
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	started, err := c.GenerateAutoTagsToLake(ctx, "image", client.AnalysisOptions{ModelName: "whole"})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := c.WaitJob(ctx, started.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("run %+v %v\n%s", j, err, srv.log.String())
	}
	// e0: people boxed the whole image (a hit); e1: a corner (a miss and a spurious box).
	if _, err := c.SetLakeAnnotations(ctx, "import:truth", []client.FileBoxes{
		{UniqueName: res.Stored[0].UniqueName, Annotations: []client.Box{{Label: "thing", Width: 32, Height: 24}}},
		{UniqueName: res.Stored[1].UniqueName, Annotations: []client.Box{{Label: "thing", Width: 4, Height: 4}}},
	}); err != nil {
		t.Fatal(err)
	}
	creds := []string{"--url", base, "--key", admin["key"], "--secret", admin["secret"]}
	out, err := run(t, append([]string{"eval", "run", "k1", "--run", started.RunID, "--gt", "import:truth", "--json"}, creds...)...)
	var ev client.Evaluation
	if err != nil || json.Unmarshal([]byte(out), &ev) != nil || ev.Labels["thing"].TP != 1 || ev.Labels["thing"].FP != 1 ||
		ev.Labels["thing"].FN != 1 || ev.Key != "k1" {
		t.Fatalf("eval run --json: %v %+v\n%s", err, ev, out)
	}
	out, err = run(t, append([]string{"eval", "show", "k1"}, creds...)...)
	if err != nil || !strings.Contains(out, "evaluation k1: run "+started.RunID+" at IoU 0.5") ||
		!regexpMatch(`thing\s+0\.\d+\s+0\.\d+\s+0\.500\s+0\.500\s+0\.500\s+0\.500\s+1\s+1\s+1`, out) ||
		!regexpMatch(`AR1 \S+  AR10 \S+  AR100 \S+  ARs \S+  ARm \S+  ARl \S+\n`, out) ||
		!strings.Contains(out, "truth: import:truth over ") {
		t.Errorf("eval show: %v\n%s", err, out)
	}
	if out, err = run(t, append([]string{"eval", "run", "k2", "--run", started.RunID, "--iou", "0.1"}, creds...)...); err != nil ||
		!strings.Contains(out, "evaluation k2") {
		t.Fatalf("eval run: %v\n%s", err, out)
	}
	out, err = run(t, append([]string{"eval", "compare", "k1", "k2"}, creds...)...)
	if err != nil || !strings.Contains(out, "LABEL  AP k1") || !strings.Contains(out, "thing") {
		t.Errorf("eval compare: %v\n%s", err, out)
	}
	out, err = run(t, append([]string{"eval", "list"}, creds...)...)
	if err != nil || !regexpMatch(`(?s)k2\s+completed.*k1\s+completed`, out) {
		t.Errorf("eval list: %v\n%s", err, out)
	}
	if out, err = run(t, append([]string{"eval", "show", "nope"}, creds...)...); err == nil || !strings.Contains(out, `evaluation "nope" not found`) {
		t.Errorf("eval show nope: %v\n%s", err, out)
	}
	evalVersionSplit(t, c, creds, started.RunID)
}

// evalVersionSplit evaluates over a dataset version's split: a version of
// e1 alone, all in train, so train holds the miss and validation nothing.
func evalVersionSplit(t *testing.T, c *client.Client, creds []string, runID string) {
	ctx := context.Background()
	v, err := c.CreateDatasetFromDatalake(ctx, "evalsplit", "image", client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"thing"}, Query: "name = e1.jpg"})
	if err == nil {
		_, err = waitCompleted(ctx, c, v.JobID)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, append([]string{"eval", "run", "onsplit", "--run", runID, "--version", v.VersionID, "--split", "train", "--json"}, creds...)...)
	var ev client.Evaluation
	if err != nil || json.Unmarshal([]byte(out), &ev) != nil {
		t.Fatalf("eval run --version --split: %v\n%s", err, out)
	}
	if th := ev.Labels["thing"]; th.TP != 0 || th.FP != 1 || th.FN != 1 || ev.Params.VersionID != v.VersionID || ev.Params.Split != "train" {
		t.Errorf("over the train split: %+v params %+v", ev.Labels, ev.Params)
	}
	if n, err := c.GetItemCountFromLake(ctx, "image", "eval.onsplit.fn >= 0", nil); err != nil || n[0].Count != 1 {
		t.Errorf("files evaluated over the split: %v %v, want 1", n, err)
	}
	out, err = run(t, append([]string{"eval", "run", "onval", "--run", runID, "--version", v.VersionID, "--split", "validation"}, creds...)...)
	if err != nil || !strings.Contains(out, "over version "+v.VersionID+" (validation)") || strings.Contains(out, "thing") {
		t.Errorf("eval over an empty split: %v\n%s", err, out)
	}
	for _, bad := range []struct {
		r    client.EvaluationRequest
		code string
	}{
		{client.EvaluationRequest{Split: "train"}, "invalid_argument"},
		{client.EvaluationRequest{VersionID: v.VersionID, Split: "dev"}, "invalid_argument"},
		{client.EvaluationRequest{VersionID: "dsv_nope"}, "not_found"},
	} {
		bad.r.PredRunID, bad.r.Key = runID, "bad"
		if _, err := c.EvaluateDetections(ctx, bad.r); client.CodeOf(err) != bad.code {
			t.Errorf("%+v: %v, want %s", bad.r, err, bad.code)
		}
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
