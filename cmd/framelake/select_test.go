package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestSelectAndDatasetDiffCommands runs framelake select and framelake
// dataset diff against a real server started from the binary.
func TestSelectAndDatasetDiffCommands(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data) // stopped by its cleanup
	base := srv.base
	out, err := run(t, "keys", "create", "--data", data, "--name", "w", "--role", "write", "--json")
	var w map[string]string
	if err != nil || json.Unmarshal([]byte(out), &w) != nil {
		t.Fatalf("keys create: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := client.New(base, w["key"], w["secret"])
	var ups []client.UploadFile
	for i := range 4 {
		b := testmedia.JPEG(32, 24, i+1)
		ups = append(ups, client.UploadFile{Name: fmt.Sprintf("c%d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "cli"}, ups...)
	if err != nil || len(res.Stored) != 4 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	var list []client.Embedding
	for i, f := range res.Stored {
		list = append(list, client.Embedding{UniqueName: f.UniqueName, Embeddings: []float32{float32(i), 1}})
	}
	if _, err := c.InsertImageEmbeddings(ctx, list, "cli-vec", 2); err != nil {
		t.Fatal(err)
	}
	creds := []string{"--url", base, "--key", w["key"], "--secret", w["secret"]}

	sel := append([]string{"select", "--strategy", "diversity", "--model", "cli-vec", "--budget", "2", "--seed", "4",
		"--tag", "next", "--json"}, creds...)
	var first, again client.Selection
	out, err = run(t, sel...)
	if err != nil || json.Unmarshal([]byte(out), &first) != nil || len(first.UniqueNames) != 2 || first.Tag != "next" {
		t.Fatalf("select --json: %v\n%s", err, out)
	}
	if out, err = run(t, sel...); err != nil || json.Unmarshal([]byte(out), &again) != nil ||
		strings.Join(again.UniqueNames, ",") != strings.Join(first.UniqueNames, ",") {
		t.Errorf("same seed, other selection: %v then %v (%v)", first.UniqueNames, again.UniqueNames, err)
	}
	out, err = run(t, append([]string{"select", "--strategy", "uniqueness", "--model", "cli-vec", "--budget", "1"}, creds...)...)
	if err != nil || !strings.Contains(out, "1 of 4 candidates chosen by uniqueness") {
		t.Errorf("select: %v\n%s", err, out)
	}
	if out, err = run(t, append([]string{"select", "--strategy", "guess", "--budget", "1"}, creds...)...); err == nil ||
		!strings.Contains(out, "unknown strategy") {
		t.Errorf("bad strategy: %v\n%s", err, out)
	}

	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 50, Test: 25, Validation: 25}, Labels: []string{"car"},
		Query: "name != c3.jpg"}
	v1, err := c.CreateDatasetFromDatalake(ctx, "cli-diff", "image", spec)
	if err == nil {
		_, err = waitCompleted(ctx, c, v1.JobID)
	}
	if err != nil {
		t.Fatal(err)
	}
	spec.Query = "name = c3.jpg"
	v2, err := c.UpdateDatasetVersionFromDatalake(ctx, v1.VersionID, "image", true, spec)
	if err == nil {
		_, err = waitCompleted(ctx, c, v2.JobID)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err = run(t, append([]string{"dataset", "diff", v1.VersionID, v2.VersionID}, creds...)...)
	if err != nil || !strings.Contains(out, "cli-diff 1.0 -> cli-diff 2.0") ||
		!strings.Contains(out, "frames: 1 added, 0 removed, 0 moved between splits, 3 kept") {
		t.Errorf("dataset diff: %v\n%s", err, out)
	}
	var d client.VersionDiff
	out, err = run(t, append([]string{"dataset", "diff", v1.VersionID, v2.VersionID, "--json"}, creds...)...)
	if err != nil || json.Unmarshal([]byte(out), &d) != nil || d.Frames.Added != 1 || len(d.AddedNames) != 1 ||
		d.AddedNames[0] != res.Stored[3].UniqueName {
		t.Errorf("dataset diff --json: %v\n%s", err, out)
	}
}

func waitCompleted(ctx context.Context, c *client.Client, jobID string) (client.Job, error) {
	j, err := c.WaitJob(ctx, jobID)
	if err == nil && j.Status != "completed" {
		err = fmt.Errorf("job %s: %s %s", jobID, j.Status, j.Error)
	}
	return j, err
}
