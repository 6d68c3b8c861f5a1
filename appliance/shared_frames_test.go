package appliance_test

import (
	"context"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestFileInTasksOfTwoProjects: one lake file is a frame of a task in each
// of two projects. Each task keeps its own boxes, frame version, frame state
// and task status; Download Annotations and the review's patches of a task
// show that task's boxes only; a second task of the same project with the
// file is refused (409) and makes nothing.
func TestFileInTasksOfTwoProjects(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "pics"},
		memFile("a.jpg", testmedia.JPEG(640, 480, 1)), memFile("b.jpg", testmedia.JPEG(640, 480, 2)))
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Stored[0].UniqueName, res.Stored[1].UniqueName
	pa := e.project(t, client.ContentImage)
	pb, err := e.write.CreateProject(ctx, client.Project{Name: "second opinion", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	ta, err := e.write.CreateTask(ctx, pa, client.NewTask{TaskName: "first", UniqueNames: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := e.write.CreateTask(ctx, pb, client.NewTask{TaskName: "second", UniqueNames: []string{b, a}})
	if err != nil {
		t.Fatalf("the same files in a task of another project: %v", err)
	}

	// Project A boxes file a; project B's frame of it is untouched.
	if _, err := e.write.ReplaceFrameAnnotationsAt(ctx, pa, a, 1, []client.Box{carBox(5)}); err != nil {
		t.Fatal(err)
	}
	sb, err := e.read.FrameAnnotations(ctx, pb, a)
	if err != nil || sb.Version != 1 || sb.Annotated || len(sb.Annotations) != 0 || sb.TaskID != tb.ID {
		t.Fatalf("B's frame after A's edit: %+v %v", sb, err)
	}
	// B edits its frame at its own version 1, which A's edit did not move.
	if _, err := e.write.ReplaceFrameAnnotationsAt(ctx, pb, a, 1, []client.Box{carBox(40), carBox(60)}); err != nil {
		t.Fatalf("B's edit at its own version: %v", err)
	}
	sa, err := e.read.FrameAnnotations(ctx, pa, a)
	if err != nil || sa.Version != 2 || len(sa.Annotations) != 1 || sa.Annotations[0].X != 5 || sa.TaskID != ta.ID {
		t.Fatalf("A's frame after B's edit: %+v %v", sa, err)
	}

	// A marks b empty and completes; B stays in progress with one frame done.
	if _, err := e.write.ReplaceFrameAnnotations(ctx, pa, b, []client.Box{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.write.CompleteTask(ctx, ta.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.write.CompleteTask(ctx, tb.ID); client.CodeOf(err) != "failed_precondition" {
		t.Fatalf("B done with b unannotated there: %v", err)
	}
	for _, c := range []struct {
		project, task    string
		status, done, xs int
	}{{pa, ta.ID, 2, 2, 1}, {pb, tb.ID, 1, 1, 2}} {
		list, err := e.read.TaskList(ctx, client.TaskListOptions{ProjectID: c.project})
		if err != nil || len(list.TaskList) != 1 || list.TaskList[0].Status != c.status || list.TaskList[0].CompletedFrames != c.done {
			t.Fatalf("task list of %s: %+v %v", c.project, list, err)
		}
		dl, err := e.read.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: c.project})
		if err != nil || len(dl.Data) != 1 || dl.Data[0].TaskID != c.task {
			t.Fatalf("download of %s: %+v %v", c.project, dl, err)
		}
		n := 0
		for _, f := range dl.Data[0].Frames {
			n += len(f.Annotations)
		}
		if n != c.xs {
			t.Fatalf("download of %s: %d boxes, want %d: %+v", c.project, n, c.xs, dl.Data[0].Frames)
		}
	}

	// The review of B's task: B's two car boxes, placed in B (file a is its frame 1).
	var page struct {
		PatchCount int
		Patches    []struct {
			X          float64
			TaskID     string
			FrameIndex *int
		}
	}
	if err := e.getJSON(t, "/api/v1/lake/patches?label=car&source=human&taskId="+tb.ID, &page); err != nil {
		t.Fatal(err)
	}
	if page.PatchCount != 2 || page.Patches[0].X != 40 || page.Patches[0].TaskID != tb.ID || *page.Patches[0].FrameIndex != 1 {
		t.Fatalf("B's patches: %+v", page)
	}

	// Within one project a file is a frame of one task.
	if _, err := e.write.CreateTask(ctx, pa, client.NewTask{TaskName: "again", UniqueNames: []string{b}}); client.CodeOf(err) != "already_exists" {
		t.Fatalf("a file in two tasks of one project: %v", err)
	}
	if list, _ := e.read.TaskList(ctx, client.TaskListOptions{ProjectID: pa}); len(list.TaskList) != 1 {
		t.Fatalf("the refused task was made: %+v", list)
	}
}
