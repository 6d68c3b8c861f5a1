package main_test

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	_ "modernc.org/sqlite"
)

// projectSummary is the project part of an import's --json summary.
type projectSummary struct {
	Project struct {
		ProjectID, ProjectName string
		Created                bool
		Sessions               []struct {
			Split, Collection, UploadID, TaskID string
			Frames                              int
		}
	}
}

func importProjectJSON(t *testing.T, wantFail bool, args ...string) (labelledSummary, projectSummary) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"import", "--json"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if (err != nil) != wantFail {
		t.Fatalf("import %v: exit %v (want failure %v)\n%s%s", args, err, wantFail, out, stderr.String())
	}
	var sum labelledSummary
	var proj projectSummary
	if json.Unmarshal(out, &sum) != nil || json.Unmarshal(out, &proj) != nil {
		t.Fatalf("summary %q\n%s", out, stderr.String())
	}
	return sum, proj
}

// TestImportArchiveIntoProject sends darknet's YOLO tree as a tar.gz
// through the import job route with --project: the project is created with
// the 80 coco.names labels, each split is an upload session and completed
// task whose frames carry the imported boxes; the job's result is the
// --json summary with its refusals (exit status 1). A re-run adds no frame
// and keeps what a reviewer changed.
func TestImportArchiveIntoProject(t *testing.T) {
	data, tree := t.TempDir(), yoloTree(t)
	arc := filepath.Join(t.TempDir(), "yolo.tar.gz")
	if out, err := exec.Command("tar", "-czf", arc, "-C", tree, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	c, creds, stop := serveData(t, data)
	defer stop()
	args := append([]string{arc, "--project", "streets"}, creds...)
	sum, proj := importProjectJSON(t, true, args...)
	p := proj.Project
	if sum.Format != "yolo" || sum.Stored != 3 || sum.Labels.Boxes != 4 || sum.Labels.Refused != 2 ||
		sum.Labels.Operation != p.ProjectID || !p.Created || p.ProjectName != "streets" || len(p.Sessions) != 2 ||
		p.Sessions[0].Collection != "yolo-train" || p.Sessions[0].Frames != 2 || p.Sessions[1].Collection != "yolo-val" {
		t.Fatalf("summary %+v\nproject %+v", sum, p)
	}
	ctx := context.Background()
	tasks, err := c.TaskList(ctx, client.TaskListOptions{ProjectID: p.ProjectID})
	if err != nil || tasks.TaskCount != 2 {
		t.Fatalf("tasks %+v %v", tasks, err)
	}
	for _, tk := range tasks.TaskList {
		if tk.Status != 2 || tk.FrameCount != map[string]int{"yolo-train": 2, "yolo-val": 1}[tk.TaskName] {
			t.Errorf("task %+v: want completed with its split's frames", tk)
		}
	}
	dl, err := c.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: p.ProjectID})
	if err != nil || len(dl.MetaData.Labels) != 80 {
		t.Fatalf("download %+v %v", dl, err)
	}
	labels := map[string][]string{}
	var horses string
	for _, task := range dl.Data {
		for _, f := range task.Frames {
			labels[f.UniqueName] = nil
			for _, a := range f.Annotations {
				labels[f.UniqueName] = append(labels[f.UniqueName], a.Label)
			}
			if strings.Contains(f.UniqueName, "horses") {
				horses = f.UniqueName
			}
		}
	}
	if len(labels) != 3 || horses == "" || strings.Join(labels[horses], ",") != "horse" {
		t.Fatalf("frames and their labels %v", labels)
	}
	if _, err := c.ReplaceFrameAnnotations(ctx, p.ProjectID, horses, []client.Box{}); err != nil {
		t.Fatal(err)
	}
	again, proj2 := importProjectJSON(t, true, args...)
	if again.Skipped != 3 || again.Stored != 0 || proj2.Project.Created || proj2.Project.ProjectID != p.ProjectID {
		t.Errorf("re-run %+v %+v", again, proj2)
	}
	tasks, _ = c.TaskList(ctx, client.TaskListOptions{ProjectID: p.ProjectID})
	dl, _ = c.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: p.ProjectID})
	frames := 0
	for _, task := range dl.Data {
		for _, f := range task.Frames {
			frames++
			if f.UniqueName == horses && len(f.Annotations) != 0 {
				t.Errorf("the re-run undid the reviewer's change: %+v", f.Annotations)
			}
		}
	}
	if tasks.TaskCount != 2 || frames != 3 {
		t.Errorf("after the re-run: %d tasks, %d frames; want 2 and 3", tasks.TaskCount, frames)
	}
}

// zipOf zips files (name to bytes) in memory.
func zipOf(t *testing.T, files map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	zw.Close()
	return buf.Bytes()
}

// TestImportArchiveRefusals: the route refuses an entry with "..", an
// archive past the server's byte or entry limit (serve flags) and a
// non-archive with a 400 naming what is wrong, keeping nothing in the data
// folder's imports; import --data refuses the same zip and leaves no temp
// folder behind.
func TestImportArchiveRefusals(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data, "--archive-max-bytes", "100000", "--archive-max-entries", "20")
	key, secret := writeKey(t, data)
	c := client.New(srv.base, key, secret)
	many := map[string][]byte{}
	for i := range 21 {
		many[strings.Repeat("a", i+1)+".jpg"] = []byte("x")
	}
	evil := zipOf(t, map[string][]byte{"images/a.jpg": []byte("x"), "../../evil.jpg": []byte("x")})
	for _, c2 := range []struct {
		name string
		body []byte
		want string
	}{
		{"dotdot", evil, `entry "../../evil.jpg" has a ".." in its path`},
		{"bomb", zipOf(t, map[string][]byte{"zeros.bin": make([]byte, 200000)}), "200000 bytes uncompressed, more than the 100000 allowed"},
		{"entries", zipOf(t, many), "21 entries, more than the 20 allowed"},
		{"not an archive", []byte("hello"), "not a zip, tar or tar.gz archive"},
	} {
		_, err := c.ImportArchive(context.Background(), bytes.NewReader(c2.body), client.ImportArchiveOptions{Name: "x.zip"})
		if client.CodeOf(err) != "invalid_argument" || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("%s: %v, want invalid_argument saying %q", c2.name, err, c2.want)
		}
		if left, _ := os.ReadDir(filepath.Join(data, "imports")); len(left) != 0 {
			t.Errorf("%s: %d files left in imports", c2.name, len(left))
		}
	}
	tmp := t.TempDir()
	arc := filepath.Join(tmp, "evil.zip")
	os.WriteFile(arc, evil, 0o644)
	cmd := exec.Command(bin, "import", arc, "--data", t.TempDir())
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `has a ".." in its path`) {
		t.Errorf("import --data evil.zip: %v %s", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 1 {
		t.Errorf("import --data left %d entries in TMPDIR, want only the archive", len(left))
	}
}

// TestImportJobSurvivesRestart kills the server right after it queued an
// archive import of 300 images; the next start resumes the job, which
// finishes with every file stored once.
func TestImportJobSurvivesRestart(t *testing.T) {
	const n = 300
	data, media := t.TempDir(), t.TempDir()
	if err := testmedia.WriteJPEGs(media, n, 64, 48); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	entries, _ := os.ReadDir(media)
	for _, e := range entries {
		files["shots/"+e.Name()], _ = os.ReadFile(filepath.Join(media, e.Name()))
	}
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	jobID, err := client.New(srv.base, key, secret).ImportArchive(context.Background(), bytes.NewReader(zipOf(t, files)),
		client.ImportArchiveOptions{Collection: "shots"})
	if err != nil {
		t.Fatal(err)
	}
	srv.kill()
	srv = startServer(t, data)
	c := client.New(srv.base, key, secret)
	j, err := c.WaitJob(context.Background(), jobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("job %+v %v", j, err)
	}
	var sum labelledSummary
	json.Unmarshal(j.Result, &sum)
	t.Logf("job attempts %d; result stored %d, skipped %d", j.Attempts, sum.Stored, sum.Skipped)
	if sum.Files != n || sum.Stored+sum.Skipped != n {
		t.Errorf("result %s", j.Result)
	}
	cols, _ := c.GetItemListFromDatalake(context.Background(), client.ItemQuery{ItemType: "image_collection"})
	if len(cols) != 1 {
		t.Fatalf("collections %+v", cols)
	}
	count, err := c.GetItemCountFromCollection(context.Background(), cols[0].ID, "", nil)
	if err != nil || len(count) != 1 || count[0].Count != n {
		t.Errorf("collection holds %+v files (%v), want %d", count, err, n)
	}
	if left, _ := os.ReadDir(filepath.Join(data, "imports")); len(left) != 0 {
		t.Errorf("%d entries left in imports after the job", len(left))
	}
}

// TestKillLabelledImportIntoProject kills `import --data --project` of a
// COCO set of 300 images while it runs; the re-run finishes it: every
// image once a frame of the one session, each with its two boxes, and the
// data folder passes check.
func TestKillLabelledImportIntoProject(t *testing.T) {
	const n = 300
	data, dir := t.TempDir(), t.TempDir()
	if err := testmedia.WriteJPEGs(filepath.Join(dir, "images"), n, 64, 48); err != nil {
		t.Fatal(err)
	}
	var js strings.Builder
	js.WriteString(`{"categories": [{"id": 1, "name": "car"}, {"id": 7, "name": "bus"}], "images": [`)
	for i := range n {
		js.WriteString(map[bool]string{true: "", false: ","}[i == 0])
		js.WriteString(`{"id": ` + strconv.Itoa(i) + `, "file_name": "img-` + fmt.Sprintf("%05d", i) + `.jpg", "width": 64, "height": 48}`)
	}
	js.WriteString(`], "annotations": [`)
	for i := range n {
		js.WriteString(map[bool]string{true: "", false: ","}[i == 0])
		js.WriteString(fmt.Sprintf(`{"id": %d, "image_id": %d, "category_id": 1, "bbox": [1, 2, 10, 8]},`, 2*i, i))
		js.WriteString(fmt.Sprintf(`{"id": %d, "image_id": %d, "category_id": 7, "bbox": [20, 10, 30, 20]}`, 2*i+1, i))
	}
	js.WriteString("]}")
	os.MkdirAll(filepath.Join(dir, "annotations"), 0o755)
	os.WriteFile(filepath.Join(dir, "annotations", "instances_train.json"), []byte(js.String()), 0o644)
	args := []string{"import", dir, "--data", data, "--collection", "k", "--project", "kp", "--batch", "8", "--parallel", "2"}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once the first frames are committed, somewhere in the rest.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "framelake.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var frames int
		if db.QueryRow(`SELECT count(*) FROM frame`).Scan(&frames) == nil && frames > 0 {
			break
		}
	}
	time.Sleep(time.Duration(rand.N(300)) * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	sum, proj := importProjectJSON(t, false, args[1:]...)
	t.Logf("re-run after the kill: %d stored, %d already there", sum.Stored, sum.Skipped)
	if sum.Stored+sum.Skipped != n || sum.Skipped == 0 || len(proj.Project.Sessions) != 1 || proj.Project.Sessions[0].Collection != "k-train" {
		t.Fatalf("re-run %+v %+v", sum, proj)
	}
	mustCheck(t, data)
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	c := client.New(srv.base, key, secret)
	ctx := context.Background()
	tasks, err := c.TaskList(ctx, client.TaskListOptions{ProjectID: proj.Project.ProjectID})
	if err != nil || tasks.TaskCount != 1 || tasks.TaskList[0].FrameCount != n || tasks.TaskList[0].Status != 2 {
		t.Fatalf("tasks %+v %v", tasks, err)
	}
	dl, err := c.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: proj.Project.ProjectID})
	if err != nil || len(dl.Data) != 1 || len(dl.Data[0].Frames) != n {
		t.Fatalf("download: %v %+v", err, dl)
	}
	seen := map[string]bool{}
	for _, f := range dl.Data[0].Frames {
		if seen[f.UniqueName] || len(f.Annotations) != 2 {
			t.Fatalf("frame %s: seen before %v, %d boxes", f.UniqueName, seen[f.UniqueName], len(f.Annotations))
		}
		seen[f.UniqueName] = true
	}
}
