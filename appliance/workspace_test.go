package appliance_test

import (
	"context"
	"encoding/json"
	"errors"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestWorkspaceOverHTTP drives a task made of lake images through the Go
// client: the first edit starts it, a stale edit is a 409 that carries the
// current boxes and changes nothing, a PUT without If-Match still
// overwrites, and done then reopen move its status in Get Task List.
func TestWorkspaceOverHTTP(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "pics"},
		memFile("a.jpg", testmedia.JPEG(64, 48, 1)), memFile("b.jpg", testmedia.JPEG(64, 48, 2)))
	if err != nil {
		t.Fatal(err)
	}
	pid := e.project(t, client.ContentImage)
	task, err := e.write.CreateTask(ctx, pid, client.NewTask{TaskName: "two", Query: `collection = "pics"`})
	if err != nil || task.Status != 0 || task.FrameCount != 2 || task.TaskName != "two" {
		t.Fatalf("create task: %+v %v", task, err)
	}
	w, err := e.read.TaskWorkspace(ctx, task.ID)
	if err != nil || len(w.Frames) != 2 || w.Frames[0].UniqueName != res.Stored[0].UniqueName || len(w.Labels) != 2 {
		t.Fatalf("workspace: %+v %v", w, err)
	}
	first := w.Frames[0].UniqueName
	st, err := e.read.FrameAnnotations(ctx, pid, first)
	if err != nil || st.Version != 1 || st.Annotated {
		t.Fatalf("frame: %+v %v", st, err)
	}
	edit, err := e.write.ReplaceFrameAnnotationsAt(ctx, pid, first, st.Version, []client.Box{carBox(5)})
	if err != nil || edit.Version != 2 || edit.Task == nil || edit.Task.Status != 1 {
		t.Fatalf("first edit: %+v %v", edit, err)
	}
	_, err = e.write.ReplaceFrameAnnotationsAt(ctx, pid, first, st.Version, []client.Box{carBox(30)})
	var conflict *client.ConflictError
	if !errors.As(err, &conflict) || conflict.Err.Status != http.StatusConflict || conflict.Current.Version != 2 ||
		len(conflict.Current.Annotations) != 1 || conflict.Current.Annotations[0].X != 5 {
		t.Fatalf("stale edit: %v", err)
	}
	if _, err := e.write.CompleteTask(ctx, task.ID); client.CodeOf(err) != "failed_precondition" {
		t.Fatalf("done with a frame left: %v", err)
	}
	if _, err := e.write.ReplaceFrameAnnotations(ctx, pid, w.Frames[1].UniqueName, []client.Box{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.write.CompleteTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	list, err := e.read.TaskList(ctx, client.TaskListOptions{ProjectID: pid})
	if err != nil || len(list.TaskList) != 1 || list.TaskList[0].Status != 2 {
		t.Fatalf("task list: %+v %v", list, err)
	}
	if task, err = e.write.ReopenTask(ctx, task.ID); err != nil || task.Status != 1 {
		t.Fatalf("reopen: %+v %v", task, err)
	}
	if _, err := e.read.CompleteTask(ctx, task.ID); client.CodeOf(err) != "permission_denied" {
		t.Fatalf("a read key marks done: %v", err)
	}
}

// TestPatchesAndCrops: the boxes of a label list with their task's place
// and a signed crop URL that answers a JPEG of the box, without a key.
func TestPatchesAndCrops(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "pics"},
		memFile("a.jpg", testmedia.JPEG(640, 480, 1)), memFile("b.jpg", testmedia.JPEG(640, 480, 2)))
	if err != nil {
		t.Fatal(err)
	}
	pid := e.project(t, client.ContentImage)
	task, err := e.write.CreateTask(ctx, pid, client.NewTask{Query: `collection = "pics"`})
	if err != nil {
		t.Fatal(err)
	}
	second := res.Stored[1].UniqueName
	if _, err := e.write.ReplaceFrameAnnotations(ctx, pid, second, []client.Box{{Label: "car", X: 100, Y: 50, Width: 200, Height: 100}}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.base+"/api/v1/lake/patches?label=car&taskId="+task.ID, nil)
	req.Header.Set("key", e.wkey)
	req.Header.Set("secret", e.wsecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		PatchCount int
		Patches    []struct {
			UniqueName, TaskID, CropURL string
			FrameIndex                  *int
		}
	}
	json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if page.PatchCount != 1 || len(page.Patches) != 1 || page.Patches[0].UniqueName != second ||
		page.Patches[0].TaskID != task.ID || page.Patches[0].FrameIndex == nil || *page.Patches[0].FrameIndex != 1 {
		t.Fatalf("patches: %+v", page)
	}
	crop, err := http.Get(page.Patches[0].CropURL)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.DecodeConfig(crop.Body)
	crop.Body.Close()
	// 200 x 100 and a margin of 40 each side (280 x 180), fitted in 128: 128 x 82.
	if err != nil || crop.StatusCode != 200 || img.Width != 128 || img.Height < 80 || img.Height > 84 {
		t.Fatalf("crop: %d %v %dx%d", crop.StatusCode, err, img.Width, img.Height)
	}
	bad, _ := http.Get(strings.Replace(page.Patches[0].CropURL, "sig=", "sig=x", 1))
	if bad.StatusCode != 401 {
		t.Fatalf("crop with a bad signature: %d", bad.StatusCode)
	}
}
