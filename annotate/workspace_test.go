package annotate_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// lakeImages stores n images in the lake's collection "pics".
func (f *fixture) lakeImages(t *testing.T, n int) []lake.File {
	t.Helper()
	var ups []lake.Upload
	for i := range n {
		b := testmedia.JPEG(64, 48, 100+i)
		ups = append(ups, lake.Upload{Name: fmt.Sprintf("pic-%d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	res, err := f.l.Add(f.ctx, lake.AddOptions{Collection: "pics"}, ups)
	if err != nil || len(res.Stored) != n {
		t.Fatalf("add: %v %+v", err, res)
	}
	return res.Stored
}

// TestTaskFromLakeImages walks a task made of lake images through its states:
// not started until the first edit, in progress, refused as done while a
// frame is unannotated, done once every frame is ("no objects" counting),
// reopened; a stale edit changes nothing and answers the current boxes.
func TestTaskFromLakeImages(t *testing.T) {
	f := open(t, annotate.Image)
	files := f.lakeImages(t, 3)
	names := []string{files[2].UniqueName, files[0].UniqueName, files[1].UniqueName}
	task, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{Name: "morning", UniqueNames: names})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != annotate.NotStarted || task.FrameCount != 3 || task.CompletedFrames != 0 || task.TaskName != "morning" {
		t.Fatalf("new task: %+v", task)
	}
	w, err := f.s.TaskWorkspace(f.ctx, task.ID)
	if err != nil || len(w.Frames) != 3 || w.Frames[0].UniqueName != names[0] || w.Frames[0].Annotated {
		t.Fatalf("workspace: %+v %v", w, err)
	}
	if _, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{UniqueNames: names[:1]}); !errs.Is(err, errs.AlreadyExists) {
		t.Fatalf("a frame in two tasks: %v", err)
	}

	res, err := f.s.ReplaceFrameBoxesAt(f.ctx, f.proj.ID, names[0], 1, []annotate.Box{car(5)})
	if err != nil || res.Version != 2 {
		t.Fatalf("first edit: %+v %v", res, err)
	}
	if task, _ = f.s.Task(f.ctx, task.ID); task.Status != annotate.InProgress || task.CompletedFrames != 1 {
		t.Fatalf("after the first edit: %+v", task)
	}
	_, err = f.s.ReplaceFrameBoxesAt(f.ctx, f.proj.ID, names[0], 1, []annotate.Box{car(20), car(30)})
	var conflict *annotate.Conflict
	if !errors.As(err, &conflict) || !errs.Is(err, errs.FailedPrecondition) || conflict.Current.Version != 2 {
		t.Fatalf("stale edit: %v", err)
	}
	var cur []annotate.Annotation
	json.Unmarshal(conflict.Current.Annotations, &cur)
	if len(cur) != 1 || cur[0].X != 5 {
		t.Fatalf("conflict's current boxes: %s", conflict.Current.Annotations)
	}

	done := annotate.Completed
	if _, err := f.s.UpdateTask(f.ctx, task.ID, annotate.TaskChange{Status: &done}); !errs.Is(err, errs.FailedPrecondition) {
		t.Fatalf("done with 2 frames left: %v", err)
	}
	for _, n := range names[1:] {
		if _, err := f.s.ReplaceFrameBoxes(f.ctx, f.proj.ID, n, []annotate.Box{}); err != nil {
			t.Fatal(err)
		}
	}
	if task, _ = f.s.Task(f.ctx, task.ID); task.Status != annotate.InProgress {
		t.Fatalf("all annotated, not marked done: %+v", task)
	}
	rename := "morning shift"
	task, err = f.s.UpdateTask(f.ctx, task.ID, annotate.TaskChange{Status: &done, Name: &rename})
	if err != nil || task.Status != annotate.Completed || task.TaskName != rename || !task.IsDownloadEnable {
		t.Fatalf("done: %+v %v", task, err)
	}
	d, err := f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, TaskIDs: []string{task.ID}})
	if err != nil || len(d.Data) != 1 || len(d.Data[0].Frames) != 3 || len(boxesOf(t, d.Data[0].Frames[0])) != 1 {
		t.Fatalf("download: %+v %v", d, err)
	}
	reopen := annotate.InProgress
	if task, err = f.s.UpdateTask(f.ctx, task.ID, annotate.TaskChange{Status: &reopen}); err != nil || task.Status != annotate.InProgress {
		t.Fatalf("reopened: %+v %v", task, err)
	}
}

// TestSuggestions: a model's boxes with a project label are open suggestions
// of a frame until accepted (they become human boxes) or rejected.
func TestSuggestions(t *testing.T) {
	f := open(t, annotate.Image)
	files := f.lakeImages(t, 1)
	if _, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{Query: `collection = "pics"`}); err != nil {
		t.Fatal(err)
	}
	sure, doubt := 0.9, 0.3
	err := f.db.Tx(f.ctx, func(tx *sql.Tx) error {
		return lake.ReplaceBoxes(f.ctx, tx, files[0].Seq(), lake.Machine, "run_1", 0, []lake.Box{
			{Label: "car", X: 1, Y: 2, W: 10, H: 12, Confidence: &sure},
			{Label: "bus", X: 20, Y: 2, W: 10, H: 12, Confidence: &doubt},
			{Label: "tree", X: 30, Y: 2, W: 5, H: 5, Confidence: &sure}, // not a project label
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	name := files[0].UniqueName
	st, err := f.s.FrameState(f.ctx, f.proj.ID, name)
	if err != nil || len(st.Suggestions) != 2 || st.Annotated {
		t.Fatalf("frame: %+v %v", st, err)
	}
	min := 0.5
	res, err := f.s.DecideSuggestions(f.ctx, f.proj.ID, name, annotate.Decision{Accept: true, MinConfidence: &min})
	if err != nil {
		t.Fatal(err)
	}
	st, _ = f.s.FrameState(f.ctx, f.proj.ID, name)
	var human []annotate.Annotation
	json.Unmarshal(st.Annotations, &human)
	if len(human) != 1 || human[0].Label != "car" || human[0].Source != lake.Human || human[0].Height != 12 ||
		len(st.Suggestions) != 1 || st.Version != res.Version || !st.Annotated {
		t.Fatalf("after accepting: %+v", st)
	}
	if _, err := f.s.DecideSuggestions(f.ctx, f.proj.ID, name, annotate.Decision{IDs: []string{st.Suggestions[0].ID},
		Version: 1}); !errs.Is(err, errs.FailedPrecondition) {
		t.Fatalf("stale reject: %v", err)
	}
	if _, err := f.s.DecideSuggestions(f.ctx, f.proj.ID, name, annotate.Decision{IDs: []string{st.Suggestions[0].ID}}); err != nil {
		t.Fatal(err)
	}
	st, _ = f.s.FrameState(f.ctx, f.proj.ID, name)
	if len(st.Suggestions) != 0 || !bytes.Contains(st.Annotations, []byte(`"car"`)) {
		t.Fatalf("after rejecting: %+v", st)
	}
}

// TestTaskStartsFromLakeBoxes: a task of labelled lake images (issue 31,
// item 3) opens with their human boxes, now the project's, and frames with
// boxes are annotated; boxes of a label the project lacks and another
// project's boxes stay. An edit replaces the taken-over boxes, so the lake
// holds one set of human boxes. startFrom "empty" leaves the lake as it was.
func TestTaskStartsFromLakeBoxes(t *testing.T) {
	f := open(t, annotate.Image)
	files := f.lakeImages(t, 4)
	other, err := f.s.CreateProject(f.ctx, annotate.NewProject{Name: "other", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	put := func(file lake.File, op string, labels ...string) {
		t.Helper()
		var boxes []lake.Box
		for i, l := range labels {
			boxes = append(boxes, lake.Box{Label: l, X: float64(1 + 10*i), Y: 2, W: 8, H: 8, Source: lake.Human})
		}
		if err := f.db.Tx(f.ctx, func(tx *sql.Tx) error {
			return lake.ReplaceBoxes(f.ctx, tx, file.Seq(), lake.Human, op, 0, boxes)
		}); err != nil {
			t.Fatal(err)
		}
	}
	put(files[0], "import:voc", "car", "car", "dog")
	put(files[1], "import:voc", "bus")
	put(files[1], other.ID, "car")
	// files[2] has no human box; files[3] is for startFrom empty.
	put(files[3], "import:voc", "car")

	names := []string{files[0].UniqueName, files[1].UniqueName, files[2].UniqueName}
	task, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{UniqueNames: names})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != annotate.InProgress || task.CompletedFrames != 2 {
		t.Fatalf("task of labelled images: %+v", task)
	}
	w, err := f.s.TaskWorkspace(f.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		annotated bool
		boxes     int
	}{{true, 2}, {true, 1}, {false, 0}}
	for i, fr := range w.Frames {
		if fr.Annotated != want[i].annotated || fr.BoxCount != want[i].boxes {
			t.Errorf("frame %d: annotated %v, %d boxes; want %+v", i, fr.Annotated, fr.BoxCount, want[i])
		}
	}
	st, err := f.s.FrameState(f.ctx, f.proj.ID, names[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []annotate.Annotation
	json.Unmarshal(st.Annotations, &got)
	if len(got) != 2 || got[0].Label != "car" || got[1].Label != "car" || !st.Annotated {
		t.Fatalf("frame 0's project boxes: %s", st.Annotations)
	}
	ops := func(file lake.File) map[string]int {
		t.Helper()
		rows, err := f.db.R.QueryContext(f.ctx, `SELECT operation || '/' || label, count(*) FROM annotation
			WHERE file_seq = ? AND source = 'human' GROUP BY 1`, file.Seq())
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var k string
			var n int
			rows.Scan(&k, &n)
			out[k] = n
		}
		return out
	}
	p := f.proj.ID
	for i, wantOps := range []map[string]int{
		{p + "/car": 2, "import:voc/dog": 1},
		{p + "/bus": 1, other.ID + "/car": 1},
	} {
		if g := ops(files[i]); fmt.Sprint(g) != fmt.Sprint(wantOps) {
			t.Errorf("file %d's human boxes: %v, want %v", i, g, wantOps)
		}
	}
	if _, err := f.s.ReplaceFrameBoxesAt(f.ctx, p, names[0], st.Version, []annotate.Box{car(30)}); err != nil {
		t.Fatal(err)
	}
	if g := ops(files[0]); fmt.Sprint(g) != fmt.Sprint(map[string]int{p + "/car": 1, "import:voc/dog": 1}) {
		t.Errorf("after the edit: %v", g)
	}

	empty, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{UniqueNames: []string{files[3].UniqueName},
		StartFrom: annotate.StartFromEmpty})
	if err != nil || empty.Status != annotate.NotStarted || empty.CompletedFrames != 0 {
		t.Fatalf("startFrom empty: %+v %v", empty, err)
	}
	if g := ops(files[3]); fmt.Sprint(g) != fmt.Sprint(map[string]int{"import:voc/car": 1}) {
		t.Errorf("startFrom empty moved boxes: %v", g)
	}
	if _, err := f.s.CreateTask(f.ctx, other.ID, annotate.NewTask{UniqueNames: names[:1], StartFrom: "nope"}); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("startFrom nope: %v", err)
	}
}

// A frame edit reads its project on the point-lookup pool, not the reader
// pool that listings fill: under a mixed load the edit waited for a reader
// connection behind lists and counts (frame edit p99 800 ms at 64 clients)
// before it even asked for the writer, and again for its task after it. With
// every reader held it still saves and answers.
func TestFrameEditDoesNotWaitForReaders(t *testing.T) {
	f := open(t, annotate.Image)
	files := f.lakeImages(t, 1)
	task, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{UniqueNames: []string{files[0].UniqueName}})
	if err != nil {
		t.Fatal(err)
	}
	for range f.db.R.Stats().MaxOpenConnections {
		tx, err := f.db.R.BeginTx(f.ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
	}
	short, cancel := context.WithTimeout(f.ctx, 2*time.Second)
	defer cancel()
	res, err := f.s.ReplaceFrameBoxesAt(short, f.proj.ID, files[0].UniqueName, 1, []annotate.Box{car(5)})
	if err != nil || res.Version != 2 {
		t.Fatalf("a frame edit with every reader connection held: %+v, %v", res, err)
	}
	// The edit's answer holds its task, read after the commit.
	if got, err := f.s.Task(short, task.ID); err != nil || got.CompletedFrames != 1 {
		t.Fatalf("the task after the edit, with every reader connection held: %+v, %v", got, err)
	}
}
