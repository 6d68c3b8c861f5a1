package appliance_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// projectFrames makes an image project with one upload session named coll
// and uploads n frames, each with one human "car" box.
func projectFrames(t *testing.T, e *env, coll string, n, seed int) (string, []string) {
	t.Helper()
	ctx := context.Background()
	pid, err := e.write.CreateProject(ctx, client.Project{Name: "p-" + coll, ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}, {Name: "bus"}}})
	if err != nil {
		t.Fatal(err)
	}
	up, err := e.write.InitializeUpload(ctx, pid, coll, n)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range n {
		r, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{
			File:  memFile(fmt.Sprintf("f%d.jpg", i), testmedia.JPEG(64, 48, seed+i)),
			Boxes: []client.Box{{Label: "car", X: 2, Y: 3, Width: 20, Height: 10}}})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, r.UniqueName)
	}
	return pid, names
}

// get fetches a URL and returns its status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestDeleteFileKeepsVersionsThenVersionReleasesBlobs deletes a file that is
// in a collection, tagged, annotated by a human and a machine, embedded and
// in a built version: the lake forgets it, the version stays whole with its
// media, and the blob stays until the version goes too.
func TestDeleteFileKeepsVersionsThenVersionReleasesBlobs(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	_, names := projectFrames(t, e, "street", 3, 40)
	victim := names[0]
	f, err := e.a.Lake.File(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	err = e.a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		if err := lake.AddFileTags(ctx, tx, f.Seq(), []lake.Tag{{Name: "night"}}); err != nil {
			return err
		}
		return lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Machine, "run_x", 0,
			[]lake.Box{{Label: "car", X: 1, Y: 1, W: 5, H: 5, Source: lake.Machine}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.write.InsertImageEmbeddings(ctx, []client.Embedding{{UniqueName: victim,
		Embeddings: []float32{1, 0, 0, 0}}}, "clip", 4); err != nil {
		t.Fatal(err)
	}
	coll, err := e.a.Lake.CollectionByName(ctx, "street")
	if err != nil {
		t.Fatal(err)
	}
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "snap", coll.ID, client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"}, AugmentationList: json.RawMessage(flipConfig)}))
	before := e.frames(t, b.VersionID, "yolo")

	if _, err := e.read.DeleteFile(ctx, victim); client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key deleted a file: %v", err)
	}
	d, err := e.write.DeleteFile(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	want := client.DeleteCounts{Files: 1, Memberships: 1, Tags: 1, Annotations: 2, Embeddings: 1, TaskFrames: 1}
	if d.Removed != want || d.Kept != (client.DeleteCounts{Versions: 1, Blobs: 1}) {
		t.Errorf("delete file answered %+v, want removed %+v and kept 1 version, 1 blob", d, want)
	}
	if _, err := e.read.GetFileDetails(ctx, victim, nil); client.CodeOf(err) != "not_found" {
		t.Errorf("deleted file still has details: %v", err)
	}
	if n := lakeCount(t, e, "image", ""); n != 2 {
		t.Errorf("lake lists %d images after the delete, want 2", n)
	}
	if _, err := e.write.DeleteFile(ctx, victim); client.CodeOf(err) != "not_found" {
		t.Errorf("second delete: %v", err)
	}
	blob, _, _ := e.a.Lake.Store().Local(ctx, f.Blob, f.Ext) // the blob itself: media is local
	if _, err := os.Stat(blob); err != nil {
		t.Fatalf("the version's blob is gone: %v", err)
	}

	// The version is whole: same frames, every one served, and its archive has the media.
	after := e.frames(t, b.VersionID, "yolo")
	if len(after) != len(before) || e.version(t, b.VersionID).Stats.TotalFrames != len(before) {
		t.Fatalf("version has %d frames after the delete, had %d", len(after), len(before))
	}
	for _, fr := range after {
		if status, body := get(t, fr.URL); status != 200 || len(body) == 0 {
			t.Errorf("frame %s: %d, %d bytes", fr.UniqueName, status, len(body))
		}
	}
	dir, err := e.read.DownloadDataset(ctx, b.VersionID, "YOLO Darknet", t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	if n := countMedia(t, dir, victim+".jpg"); n != 1 {
		t.Errorf("archive holds %d copies of the deleted file %s, want 1", n, victim)
	}

	// A new version made from it reads the lake: the deleted file is not in it.
	v2 := e.built(t)(e.write.CreateDatasetVersion(ctx, b.DatasetID, 100, 0, 0))
	if n := len(e.frames(t, v2.VersionID, "yolo")); n != 4 {
		t.Errorf("version 2.0 has %d frames, want the 2 files left and their augmented frames", n)
	}

	// Deleting the version releases its frames: the deleted file's blob and
	// its augmented frame's go; the files' blobs and the augmented frames
	// version 2.0 made again (same seed, same bytes) stay.
	d, err = e.write.DeleteDatasetVersion(ctx, b.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Removed.Versions != 1 || d.Removed.Frames != len(before) || d.Removed.Blobs != 2 || d.Kept.Blobs != 4 {
		t.Errorf("delete version answered %+v (want 1 version, %d frames, 2 blobs removed, 4 kept)", d, len(before))
	}
	if _, err := os.Stat(blob); !os.IsNotExist(err) {
		t.Errorf("blob of the deleted file and version still on disk: %v", err)
	}
	for _, n := range names[1:] {
		if status, _ := get(t, e.a.Lake.URLOf(n)); status != 200 {
			t.Errorf("file %s lost its media with the version: %d", n, status)
		}
	}
	if _, err := e.read.DatasetVersion(ctx, b.VersionID); client.CodeOf(err) != "not_found" {
		t.Errorf("deleted version: %v", err)
	}
	if _, err := e.write.DeleteDatasetVersion(ctx, b.VersionID); client.CodeOf(err) != "not_found" {
		t.Errorf("second version delete: %v", err)
	}
	d, err = e.write.DeleteDataset(ctx, b.DatasetID)
	if err != nil || d.Removed != (client.DeleteCounts{Datasets: 1, Versions: 1, Frames: 4, Blobs: 2}) ||
		d.Kept != (client.DeleteCounts{Blobs: 2}) {
		t.Errorf("delete the dataset with version 2.0: %+v %v", d, err)
	}
	if _, err := e.write.DeleteDataset(ctx, b.DatasetID); client.CodeOf(err) != "not_found" {
		t.Errorf("second dataset delete: %v", err)
	}
}

// countMedia counts the files named name under dir.
func countMedia(t *testing.T, dir, name string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			n++
		}
		return nil
	})
	return n
}

func TestDeleteCollectionWithAndWithoutFiles(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	upload := func(coll string, seeds ...int) []string {
		var ups []client.UploadFile
		for _, s := range seeds {
			ups = append(ups, memFile(fmt.Sprintf("i%d.jpg", s), testmedia.JPEG(32, 24, s)))
		}
		res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: coll}, ups...)
		if err != nil || len(res.Stored) != len(seeds) {
			t.Fatalf("upload to %s: %+v %v", coll, res, err)
		}
		var out []string
		for _, s := range res.Stored {
			out = append(out, s.UniqueName)
		}
		return out
	}
	upload("keep", 1, 2, 3)
	gone := upload("gone", 4, 5)
	upload("other", 4) // same bytes as a file of "gone", its own file row
	collID := func(name string) string {
		c, err := e.a.Lake.CollectionByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	keep, goneID, other := collID("keep"), collID("gone"), collID("other")

	if _, err := e.read.DeleteCollection(ctx, keep, false); client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key: %v", err)
	}
	d, err := e.write.DeleteCollection(ctx, keep, false)
	if err != nil || d.Removed != (client.DeleteCounts{Collections: 1, Memberships: 3}) ||
		d.Kept != (client.DeleteCounts{Files: 3}) {
		t.Fatalf("delete without files: %+v %v", d, err)
	}
	if n := lakeCount(t, e, "image", ""); n != 6 {
		t.Errorf("%d images after deleting a collection without its files, want 6", n)
	}
	if _, err := e.read.GetCollectionDetails(ctx, keep, nil); client.CodeOf(err) != "not_found" {
		t.Errorf("deleted collection: %v", err)
	}

	d, err = e.write.DeleteCollection(ctx, goneID, true)
	// One blob is shared with "other"'s file, which keeps it.
	if err != nil || d.Removed != (client.DeleteCounts{Files: 2, Collections: 1, Memberships: 2, Blobs: 1}) ||
		d.Kept != (client.DeleteCounts{Blobs: 1}) {
		t.Fatalf("delete with files: %+v %v", d, err)
	}
	for _, n := range gone {
		if _, err := e.read.GetFileDetails(ctx, n, nil); client.CodeOf(err) != "not_found" {
			t.Errorf("file %s of the deleted collection: %v", n, err)
		}
	}
	if n := lakeCount(t, e, "image", ""); n != 4 {
		t.Errorf("%d images left, want 4", n)
	}
	if c, err := e.read.GetItemCountFromCollection(ctx, other, "", nil); err != nil || len(c) == 0 || c[0].Count != 1 {
		t.Errorf("the collection sharing bytes: %+v %v", c, err)
	}
	if _, err := e.write.DeleteCollection(ctx, "col_missing", false); client.CodeOf(err) != "not_found" {
		t.Errorf("unknown collection: %v", err)
	}
	status, body := e.raw(t, http.MethodDelete, "/api/v1/lake/collections/"+other+"?files=maybe", "", nil)
	if status != 400 || body["field"] != "files" {
		t.Errorf("files=maybe: %d %v", status, body)
	}
}

func TestListAndDeleteProjects(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	keepID, kept := projectFrames(t, e, "keep-frames", 2, 1)
	goneID, gone := projectFrames(t, e, "gone-frames", 3, 10)

	list, err := e.read.ListProjects(ctx, client.ProjectListOptions{})
	if err != nil || list.ProjectCount != 2 || len(list.ProjectList) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	p := list.ProjectList[1]
	if p.ProjectID != goneID || p.TaskCount != 1 || p.FrameCount != 3 || p.CompletedFrames != 3 ||
		p.Progress != 100 || len(p.Labels) != 2 || p.Labels[1].Name != "bus" {
		t.Errorf("second project: %+v", p)
	}
	page, err := e.read.ListProjects(ctx, client.ProjectListOptions{PageIndex: 1, PageSize: 1})
	if err != nil || page.ProjectCount != 2 || len(page.ProjectList) != 1 || page.ProjectList[0].ProjectID != goneID {
		t.Errorf("page 1 of size 1: %+v %v", page, err)
	}
	if _, err := e.read.ListProjects(ctx, client.ProjectListOptions{PageSize: 1001}); client.CodeOf(err) != "invalid_argument" {
		t.Errorf("pageSize over the maximum: %v", err)
	}

	if _, err := e.read.DeleteProject(ctx, keepID, false); client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key: %v", err)
	}
	d, err := e.write.DeleteProject(ctx, keepID, false)
	if err != nil || d.Removed != (client.DeleteCounts{Projects: 1, Labels: 2, Tasks: 1, TaskFrames: 2}) ||
		d.Kept != (client.DeleteCounts{Files: 2, Annotations: 2, Collections: 1}) {
		t.Fatalf("delete project without files: %+v %v", d, err)
	}
	for _, n := range kept {
		if _, err := e.read.GetFileDetails(ctx, n, nil); err != nil {
			t.Errorf("frame %s left the lake: %v", n, err)
		}
	}
	var boxes int
	e.a.Lake.DB().R.QueryRow(`SELECT count(*) FROM annotation WHERE operation = ? AND source = 'human'`, keepID).Scan(&boxes)
	if boxes != 2 {
		t.Errorf("the deleted project's frames keep %d human boxes, want 2", boxes)
	}
	if _, err := e.read.TaskList(ctx, client.TaskListOptions{ProjectID: keepID}); client.CodeOf(err) != "not_found" {
		t.Errorf("tasks of the deleted project: %v", err)
	}

	d, err = e.write.DeleteProject(ctx, goneID, true)
	if err != nil || d.Removed != (client.DeleteCounts{Projects: 1, Labels: 2, Tasks: 1, TaskFrames: 3, Files: 3,
		Memberships: 3, Annotations: 3, Collections: 1, Blobs: 3}) || d.Kept != (client.DeleteCounts{}) {
		t.Fatalf("delete project with files: %+v %v", d, err)
	}
	for _, n := range gone {
		if _, err := e.read.GetFileDetails(ctx, n, nil); client.CodeOf(err) != "not_found" {
			t.Errorf("frame %s of the project deleted with its files: %v", n, err)
		}
	}
	if list, err := e.read.ListProjects(ctx, client.ProjectListOptions{}); err != nil || list.ProjectCount != 0 {
		t.Errorf("list after deleting both: %+v %v", list, err)
	}
	if _, err := e.write.DeleteProject(ctx, goneID, false); client.CodeOf(err) != "not_found" {
		t.Errorf("second project delete: %v", err)
	}
}

// TestDeleteBuildingVersionCancelsBuild: with no job workers the build stays
// queued; deleting the dataset cancels it and deletes the version.
func TestDeleteBuildingVersionCancelsBuild(t *testing.T) {
	e := start(t, appliance.Config{JobWorkers: -1})
	ctx := context.Background()
	if _, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "q"}, memFile("a.jpg", testmedia.JPEG(32, 24, 1))); err != nil {
		t.Fatal(err)
	}
	c, err := e.a.Lake.CollectionByName(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.write.CreateDatasetFromCollection(ctx, "queued", c.ID, client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.write.DeleteDataset(ctx, b.DatasetID)
	if err != nil || d.Removed.Datasets != 1 || d.Removed.Versions != 1 || len(d.CancelledJobs) != 1 ||
		d.CancelledJobs[0] != b.JobID {
		t.Fatalf("delete a dataset whose build is queued: %+v %v", d, err)
	}
	if j, err := e.read.Job(ctx, b.JobID); err != nil || j.Status != "cancelled" {
		t.Errorf("build job after the delete: %+v %v", j, err)
	}
}
