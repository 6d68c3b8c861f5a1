package appliance_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// TestTaskOfLabelledImagesOverHTTP (issue 31, item 3): a task made through
// POST /projects/{id}/tasks from images with human boxes in the lake opens
// with those boxes (now the project's) and its frames annotated; with
// startFrom "empty" it opens with none.
func TestTaskOfLabelledImagesOverHTTP(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "voc"},
		memFile("a.jpg", testmedia.JPEG(64, 48, 1)), memFile("b.jpg", testmedia.JPEG(64, 48, 2)))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	l := e.a.Lake
	err = l.DB().Tx(ctx, func(tx *sql.Tx) error {
		for _, s := range res.Stored {
			f, err := l.File(ctx, s.UniqueName)
			if err != nil {
				return err
			}
			boxes := []lake.Box{{Label: "car", X: 1, Y: 2, W: 10, H: 8, Source: lake.Human},
				{Label: "bus", X: 20, Y: 2, W: 10, H: 8, Source: lake.Human}}
			if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Human, "import:voc", 0, boxes); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := e.project(t, client.ContentImage)
	task, err := e.write.CreateTask(ctx, pid, client.NewTask{TaskName: "from voc", Query: `collection = "voc"`})
	if err != nil || task.Status != 1 || task.CompletedFrames != 2 {
		t.Fatalf("task of labelled images: %+v %v", task, err)
	}
	w, err := e.read.TaskWorkspace(ctx, task.ID)
	if err != nil || len(w.Frames) != 2 {
		t.Fatalf("workspace: %+v %v", w, err)
	}
	for _, fr := range w.Frames {
		st, err := e.read.FrameAnnotations(ctx, pid, fr.UniqueName)
		if err != nil || !fr.Annotated || fr.BoxCount != 2 || !st.Annotated || len(st.Annotations) != 2 {
			t.Fatalf("frame %s: %+v, state %+v %v", fr.UniqueName, fr, st, err)
		}
	}

	p2, err := e.write.CreateProject(ctx, client.Project{Name: "fresh", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := e.write.CreateTask(ctx, p2, client.NewTask{TaskName: "fresh", Query: `collection = "voc"`,
		StartFrom: "empty"})
	if err != nil || empty.Status != 0 || empty.CompletedFrames != 0 {
		t.Fatalf("startFrom empty: %+v %v", empty, err)
	}
	if _, err := e.write.CreateTask(ctx, p2, client.NewTask{TaskName: "bad", UniqueNames: []string{res.Stored[0].UniqueName},
		StartFrom: "yesterday"}); client.CodeOf(err) != "invalid_argument" {
		t.Fatalf("startFrom yesterday: %v", err)
	}
}
