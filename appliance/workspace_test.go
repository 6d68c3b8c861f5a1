package appliance_test

import (
	"context"
	"errors"
	"net/http"
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
