package annotate_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

type fixture struct {
	s    *annotate.Service
	l    *lake.Lake
	db   *sqlitedb.DB
	dir  string
	ctx  context.Context
	proj annotate.Project
}

func open(t testing.TB, ct annotate.ContentType) *fixture {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "annotate", annotate.Migrations); err != nil {
		t.Fatal(err)
	}
	l, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"),
		SigningKey: []byte("0123456789abcdef0123"), BaseURL: "http://x"})
	if err != nil {
		t.Fatal(err)
	}
	s := annotate.New(db, l, annotate.Options{BaseURL: "http://x/"})
	p, err := s.CreateProject(ctx, annotate.NewProject{Name: "streets", ContentType: ct,
		Labels: []annotate.Label{{Name: "car", Description: "any car"}, {Name: "bus"}}})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{s: s, l: l, db: db, dir: dir, ctx: ctx, proj: p}
}

func frame(seed int, seq *int, boxes ...annotate.Box) annotate.Frame {
	b := testmedia.JPEG(64, 48, seed)
	return annotate.Frame{Name: "f.jpg", SequenceNo: seq, Boxes: boxes,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func car(x float64) annotate.Box {
	return annotate.Box{Label: "car", X: x, Y: 1, Width: 10, Height: 10, Attributes: json.RawMessage(`{"occluded":"no"}`)}
}

func ptr(n int) *int { return &n }

func (f *fixture) count(t testing.TB, table string) int {
	t.Helper()
	var n int
	if err := f.db.R.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) task(t testing.TB, sess annotate.Session) annotate.Task {
	t.Helper()
	task, err := f.s.Task(f.ctx, sess.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestTaskStatusFollowsFrames(t *testing.T) {
	f := open(t, annotate.Image)
	sess, err := f.s.InitializeUpload(f.ctx, f.proj.ID, "batch-01", 2)
	if err != nil {
		t.Fatal(err)
	}
	if tk := f.task(t, sess); tk.Status != annotate.NotStarted || tk.IsDownloadEnable || tk.CompletedAt != nil {
		t.Fatalf("new task %+v", tk)
	}
	r0, err := f.s.UploadFrame(f.ctx, sess.ID, frame(1, nil, car(1), car(20)))
	if err != nil {
		t.Fatal(err)
	}
	if tk := f.task(t, sess); tk.Status != annotate.InProgress || tk.CompletedFrames != 1 || tk.Progress != 50 ||
		tk.VideoResolutionWidth != 64 || tk.VideoResolutionHeight != 48 || tk.IsDownloadEnable {
		t.Fatalf("after frame 0: %+v", tk)
	}
	// A frame with no objects is an answer: the task completes with it.
	r1, err := f.s.UploadFrame(f.ctx, sess.ID, frame(2, nil))
	if err != nil || r0.SequenceNo != 0 || r1.SequenceNo != 1 {
		t.Fatalf("frame 1: %+v %v", r1, err)
	}
	tk := f.task(t, sess)
	if tk.Status != annotate.Completed || tk.Progress != 100 || tk.CompletedFrames != 2 || !tk.IsDownloadEnable ||
		tk.CompletedAt == nil {
		t.Fatalf("all arrived, one empty: %+v", tk)
	}
	if _, err := f.s.ReplaceFrameBoxes(f.ctx, f.proj.ID, r1.UniqueName, []annotate.Box{car(5)}); err != nil {
		t.Fatal(err)
	}
	// Emptying a frame keeps it annotated.
	if _, err := f.s.ReplaceFrameBoxes(f.ctx, f.proj.ID, r0.UniqueName, []annotate.Box{}); err != nil {
		t.Fatal(err)
	}
	if tk := f.task(t, sess); tk.Status != annotate.Completed || tk.CompletedFrames != 2 || tk.CompletedAt == nil {
		t.Fatalf("boxes removed: %+v", tk)
	}
	// Raising totalFileCount reopens the upload; lowering it below what arrived is refused.
	if _, err := f.s.InitializeUpload(f.ctx, f.proj.ID, "batch-01", 1); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("shrink below received: %v", err)
	}
	if _, err := f.s.InitializeUpload(f.ctx, f.proj.ID, "batch-01", 3); err != nil {
		t.Fatal(err)
	}
	if tk := f.task(t, sess); tk.IsDownloadEnable || tk.FrameCount != 3 || tk.Status != annotate.InProgress ||
		tk.CompletedAt != nil {
		t.Errorf("raised total: %+v", tk)
	}
}

func TestResendKeepsFirstFile(t *testing.T) {
	f := open(t, annotate.Video)
	sess, _ := f.s.InitializeUpload(f.ctx, f.proj.ID, "clip-7", 3)
	first, err := f.s.UploadFrame(f.ctx, sess.ID, frame(1, ptr(2), car(1)))
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.s.UploadFrame(f.ctx, sess.ID, frame(9, ptr(2), car(3), car(4)))
	if err != nil || again.UniqueName != first.UniqueName || !again.Replaced {
		t.Fatalf("re-send: %+v %v", again, err)
	}
	if n := f.count(t, "file"); n != 1 {
		t.Errorf("%d files after a re-send", n)
	}
	file, err := f.l.File(f.ctx, first.UniqueName)
	if err != nil || file.VideoIndex == nil || *file.VideoIndex != 2 {
		t.Errorf("video index of %+v: %v", file, err)
	}
	boxes, _ := f.l.Boxes(f.ctx, lake.BoxQuery{FileSeqs: []int64{file.Seq()}})
	if len(boxes) != 2 || boxes[0].Source != lake.Human || boxes[0].Operation != f.proj.ID {
		t.Errorf("boxes %+v", boxes)
	}
	// The default sequence number follows the highest received.
	next, err := f.s.UploadFrame(f.ctx, sess.ID, frame(3, nil))
	if err != nil || next.SequenceNo != 3 {
		t.Errorf("default after 2: %+v %v", next, err)
	}
}

func TestConcurrentResendsStoreOneFramePerNumber(t *testing.T) {
	f := open(t, annotate.Image)
	const total = 6
	sess, _ := f.s.InitializeUpload(f.ctx, f.proj.ID, "race", total)
	var wg sync.WaitGroup
	errc := make(chan error, 8*total)
	for c := range 8 {
		wg.Go(func() {
			for i := range total {
				seq := (i + c) % total
				if _, err := f.s.UploadFrame(f.ctx, sess.ID, frame(seq, ptr(seq), car(float64(c)))); err != nil {
					errc <- err
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if n, m := f.count(t, "frame"), f.count(t, "file"); n != total || m != total {
		t.Errorf("%d frames, %d files; want %d", n, m, total)
	}
	if n := f.count(t, "annotation"); n != total {
		t.Errorf("%d boxes; want one per frame", n)
	}
	if tk := f.task(t, sess); tk.Status != annotate.Completed || tk.CompletedFrames != total {
		t.Errorf("task %+v", tk)
	}
}

func TestDeletedFileLeavesTask(t *testing.T) {
	f := open(t, annotate.Image)
	sess, _ := f.s.InitializeUpload(f.ctx, f.proj.ID, "b", 2)
	r0, _ := f.s.UploadFrame(f.ctx, sess.ID, frame(1, nil, car(1)))
	if _, err := f.s.UploadFrame(f.ctx, sess.ID, frame(2, nil)); err != nil { // empty, still annotated
		t.Fatal(err)
	}
	if tk := f.task(t, sess); tk.Status != annotate.Completed {
		t.Fatalf("task %+v", tk)
	}
	if err := f.l.Delete(f.ctx, r0.UniqueName); err != nil {
		t.Fatal(err)
	}
	tk := f.task(t, sess)
	if tk.Status != annotate.InProgress || tk.CompletedFrames != 1 || tk.IsDownloadEnable {
		t.Errorf("after delete: %+v", tk)
	}
	s2, _ := f.s.Session(f.ctx, sess.ID)
	if s2.Received != 1 || s2.LastSequenceID != 1 {
		t.Errorf("session after delete: %+v", s2)
	}
	// The freed place can be filled again.
	if _, err := f.s.UploadFrame(f.ctx, sess.ID, frame(3, ptr(0), car(1))); err != nil {
		t.Fatal(err)
	}
}

func TestDownloadFilters(t *testing.T) {
	f := open(t, annotate.Image)
	var tasks []string
	for i, name := range []string{"a", "b", "c"} {
		sess, _ := f.s.InitializeUpload(f.ctx, f.proj.ID, name, 2)
		tasks = append(tasks, sess.TaskID)
		for j := range 2 {
			bus := annotate.Box{Label: "bus", X: 2.5, Y: 2, Width: 5, Height: 5}
			if _, err := f.s.UploadFrame(f.ctx, sess.ID, frame(10*i+j, nil, car(1), bus)); err != nil {
				t.Fatal(err)
			}
		}
	}
	d, err := f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, PageSize: 2})
	if err != nil || d.TaskCount != 3 || len(d.Data) != 2 || len(d.Data[0].Frames) != 2 ||
		len(boxesOf(t, d.Data[0].Frames[1])) != 2 || d.Data[0].Frames[1].FrameID != 1 {
		t.Fatalf("page 0: %+v %v", d, err)
	}
	d, _ = f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, PageSize: 2, PageIndex: 1})
	if len(d.Data) != 1 || d.Data[0].TaskID != tasks[2] {
		t.Errorf("page 1: %+v", d.Data)
	}
	d, _ = f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, TaskIDs: []string{tasks[1]}, Labels: []string{"bus"}})
	if d.TaskCount != 1 || len(d.Data) != 1 || d.Data[0].TaskName != "b" {
		t.Fatalf("filtered: %+v", d)
	}
	for _, fr := range d.Data[0].Frames {
		if b := boxesOf(t, fr); len(b) != 1 || b[0].Label != "bus" || b[0].Source != lake.Human || b[0].ID == "" ||
			b[0].X != 2.5 || b[0].Width != 5 || string(b[0].Attributes) != "{}" {
			t.Errorf("label filter: %+v", b)
		}
	}
	if _, err := f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, TaskIDs: []string{"tsk_nope"}}); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown task: %v", err)
	}
	if _, err := f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, Labels: []string{"tram"}}); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("unknown label: %v", err)
	}
	if _, err := f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, PageSize: 51}); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("page size 51: %v", err)
	}
}

func TestCreateProjectRules(t *testing.T) {
	f := open(t, annotate.Image)
	for _, c := range []struct {
		np    annotate.NewProject
		field string
	}{
		{annotate.NewProject{Name: " ", ContentType: 2, Labels: []annotate.Label{{Name: "a"}}}, "projectName"},
		{annotate.NewProject{Name: "x", ContentType: 3, Labels: []annotate.Label{{Name: "a"}}}, "contentType"},
		{annotate.NewProject{Name: "x", ContentType: 1}, "labels"},
		{annotate.NewProject{Name: "x", ContentType: 1, Labels: []annotate.Label{{Name: "a"}, {Name: "a"}}}, "labels"},
		{annotate.NewProject{Name: "x", ContentType: 1, Labels: []annotate.Label{{Name: ""}}}, "labels"},
	} {
		_, err := f.s.CreateProject(f.ctx, c.np)
		var e *errs.Error
		if !errs.Is(err, errs.InvalidArgument) || !asErr(err, &e) || e.Field != c.field {
			t.Errorf("%+v: %v", c.np, err)
		}
	}
	if n := f.count(t, "project"); n != 1 {
		t.Errorf("%d projects", n)
	}
}

func asErr(err error, e **errs.Error) bool {
	v, ok := err.(*errs.Error)
	*e = v
	return ok
}

func boxesOf(t *testing.T, f annotate.FrameAnnotations) []annotate.Annotation {
	t.Helper()
	var out []annotate.Annotation
	if err := json.Unmarshal(f.Annotations, &out); err != nil {
		t.Fatalf("annotations %s: %v", f.Annotations, err)
	}
	return out
}

// A one-frame upload says "1 frame", not "1 frames".
func TestMessagesCountFrames(t *testing.T) {
	f := open(t, annotate.Image)
	sess, _ := f.s.InitializeUpload(f.ctx, f.proj.ID, "single", 1)
	if _, err := f.s.UploadFrame(f.ctx, sess.ID, frame(1, nil)); err != nil {
		t.Fatal(err)
	}
	_, err := f.s.UploadFrame(f.ctx, sess.ID, frame(2, nil))
	if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "already has all 1 frame (") {
		t.Errorf("past the total: %v", err)
	}
	sess2, _ := f.s.InitializeUpload(f.ctx, f.proj.ID, "two", 2)
	f.s.UploadFrame(f.ctx, sess2.ID, frame(3, nil))
	f.s.UploadFrame(f.ctx, sess2.ID, frame(4, nil))
	if _, err := f.s.InitializeUpload(f.ctx, f.proj.ID, "two", 1); err == nil || !strings.Contains(err.Error(), "below the 2 frames") {
		t.Errorf("shrink: %v", err)
	}
}

// Migration 002 recounts sessions counted when only frames with a box were
// completed: a session whose frames all arrived, one of them empty, becomes
// completed; one still waiting for frames stays in progress.
func TestMigrationCountsEmptyFrames(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	first, err := fs.ReadFile(annotate.Migrations, "001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "annotate", fstest.MapFS{"001_init.sql": {Data: first}}); err != nil {
		t.Fatal(err)
	}
	_, err = db.W.Exec(`INSERT INTO project (seq, id, name, content_type, created_at, updated_at) VALUES (1, 'prj_1', 'p', 2, 1, 1);
		INSERT INTO upload_session (id, task_id, project_seq, collection_id, collection_name, total_file_count, received,
			completed_frames, status, created_at, updated_at) VALUES
			('upl_a', 'tsk_a', 1, 'col_a', 'a', 2, 2, 1, 1, 1, 5), ('upl_b', 'tsk_b', 1, 'col_b', 'b', 3, 2, 0, 0, 1, 5)`)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "annotate", annotate.Migrations); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id                string
		completed, status int
		completedAt       sql.NullInt64
	}{{"upl_a", 2, 2, sql.NullInt64{Int64: 5, Valid: true}}, {"upl_b", 2, 1, sql.NullInt64{}}} {
		var completed, status int
		var at sql.NullInt64
		if err := db.R.QueryRow(`SELECT completed_frames, status, completed_at FROM upload_session WHERE id = ?`,
			c.id).Scan(&completed, &status, &at); err != nil {
			t.Fatal(err)
		}
		if completed != c.completed || status != c.status || at != c.completedAt {
			t.Errorf("%s: completed %d status %d at %v; want %d, %d, %v", c.id, completed, status, at, c.completed,
				c.status, c.completedAt)
		}
	}
}
