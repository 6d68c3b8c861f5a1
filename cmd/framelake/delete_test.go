package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestDeleteAndProjectsCommands runs framelake delete and framelake projects
// list against a real server started from the binary.
func TestDeleteAndProjectsCommands(t *testing.T) {
	data := t.TempDir()
	addr := freeAddr(t)
	var log bytes.Buffer
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr)
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	base := "http://" + addr
	waitHealthy(t, base)
	key := func(role string) map[string]string {
		out, err := run(t, "keys", "create", "--data", data, "--name", role, "--role", role, "--json")
		var k map[string]string
		if err != nil || json.Unmarshal([]byte(out), &k) != nil {
			t.Fatalf("keys create: %v %s", err, out)
		}
		return k
	}
	w, r := key("write"), key("read")
	ctx := context.Background()
	c := client.New(base, w["key"], w["secret"])
	var ups []client.UploadFile
	for i := range 3 {
		b := testmedia.JPEG(32, 24, i+1)
		ups = append(ups, client.UploadFile{Name: fmt.Sprintf("c%d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "cli"}, ups...)
	if err != nil || len(res.Stored) != 3 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	pid, err := c.CreateProject(ctx, client.Project{Name: "labelling", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	creds := []string{"--url", base, "--key", w["key"], "--secret", w["secret"]}

	out, err := run(t, append([]string{"projects", "list"}, creds...)...)
	if err != nil || !strings.Contains(out, pid) || !strings.Contains(out, "labelling") || !strings.Contains(out, "1 of 1 projects") {
		t.Errorf("projects list: %v\n%s", err, out)
	}

	out, err = run(t, append([]string{"delete", "file", res.Stored[0].UniqueName}, creds...)...)
	if err != nil || !strings.Contains(out, "deleted file "+res.Stored[0].UniqueName+": removed 1 file, 1 membership, 1 blob") {
		t.Errorf("delete file: %v\n%s", err, out)
	}

	// Credentials from the environment, as for import; JSON answer.
	coll := onlyCollection(t, c)
	cmd := exec.Command(bin, "delete", "collection", coll, "--files", "--json")
	cmd.Env = append(os.Environ(), "FRAMELAKE_URL="+base, "FRAMELAKE_KEY="+w["key"], "FRAMELAKE_SECRET="+w["secret"])
	b, err := cmd.CombinedOutput()
	var d client.Deleted
	if err != nil || json.Unmarshal(b, &d) != nil || d.Removed.Files != 2 || d.Removed.Collections != 1 || d.Removed.Blobs != 2 {
		t.Errorf("delete collection --files --json: %v %+v\n%s", err, d, b)
	}

	out, err = run(t, "delete", "project", pid, "--url", base, "--key", r["key"], "--secret", r["secret"])
	if err == nil || !strings.Contains(out, "needs a curator or an admin") {
		t.Errorf("read key deleted a project: %v\n%s", err, out)
	}
	out, err = run(t, append([]string{"delete", "project", pid}, creds...)...)
	if err != nil || !strings.Contains(out, "removed 1 project, 1 label") {
		t.Errorf("delete project: %v\n%s", err, out)
	}
	out, err = run(t, append([]string{"delete", "project", pid}, creds...)...)
	if err == nil || !strings.Contains(out, "not found") {
		t.Errorf("second project delete: %v\n%s", err, out)
	}
	out, err = run(t, append([]string{"delete", "version", "dsv_x", "--files"}, creds...)...)
	if err == nil || !strings.Contains(out, "--files applies to a collection or a project") {
		t.Errorf("--files on a version: %v\n%s", err, out)
	}
	if out, err := run(t, "delete", "album", "x", "--url", base); err == nil || !strings.Contains(out, "cannot delete") {
		t.Errorf("unknown kind: %v\n%s", err, out)
	}

	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
}

// onlyCollection is the id of the lake's one collection.
func onlyCollection(t *testing.T, c *client.Client) string {
	t.Helper()
	items, err := c.GetItemListFromDatalake(context.Background(), client.ItemQuery{ItemType: "image_collection"})
	if err != nil || len(items) != 1 {
		t.Fatalf("collections: %+v %v", items, err)
	}
	return items[0].ID
}
