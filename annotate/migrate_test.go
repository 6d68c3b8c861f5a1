package annotate_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// TestFramesKeptByMigration004: a database whose frames were stored before
// 004_frame_per_task rebuilt the frame table keeps every frame, its state and
// its boxes; afterwards a frame of it may join a task of another project.
func TestFramesKeptByMigration004(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	before := fstest.MapFS{}
	for _, name := range []string{"001_init.sql", "002_empty_frames_annotated.sql", "003_workspace.sql"} {
		b, err := fs.ReadFile(annotate.Migrations, name)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = &fstest.MapFile{Data: b}
	}
	if err := db.Migrate(ctx, "annotate", before); err != nil {
		t.Fatal(err)
	}
	l, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"),
		SigningKey: []byte("0123456789abcdef0123"), BaseURL: "http://x"})
	if err != nil {
		t.Fatal(err)
	}
	// Today's code reads and writes the label declarations 005 adds: the old
	// rows are made with that column, dropped again before 004 and 005 run.
	if _, err := db.W.ExecContext(ctx, `ALTER TABLE project_label ADD COLUMN declaration TEXT`); err != nil {
		t.Fatal(err)
	}
	// It also counts a task's jobs (006): an empty stand-in table until then.
	if _, err := db.W.ExecContext(ctx, `CREATE TABLE label_job (session_seq INTEGER, state TEXT, started INTEGER)`); err != nil {
		t.Fatal(err)
	}
	s := annotate.New(db, l, annotate.Options{BaseURL: "http://x/"})
	p, err := s.CreateProject(ctx, annotate.NewProject{Name: "old", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}, {Name: "bus"}}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.InitializeUpload(ctx, p.ID, "old-batch", 2)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.UploadFrame(ctx, sess.ID, frame(1, nil, car(5), car(9)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UploadFrame(ctx, sess.ID, frame(2, nil)); err != nil {
		t.Fatal(err)
	}

	if _, err := db.W.ExecContext(ctx, `ALTER TABLE project_label DROP COLUMN declaration`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.ExecContext(ctx, `DROP TABLE label_job`); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "annotate", annotate.Migrations); err != nil {
		t.Fatal(err)
	}
	w, err := s.TaskWorkspace(ctx, sess.TaskID)
	if err != nil || len(w.Frames) != 2 || w.Frames[0].UniqueName != first.UniqueName || w.Frames[0].BoxCount != 2 ||
		!w.Frames[1].Annotated || w.Task.Status != annotate.Completed {
		t.Fatalf("after 004: %+v %v", w, err)
	}
	st, err := s.FrameState(ctx, p.ID, first.UniqueName)
	var boxes []annotate.Annotation
	if err != nil || json.Unmarshal(st.Annotations, &boxes) != nil || len(boxes) != 2 || st.Version != 1 {
		t.Fatalf("frame after 004: %+v %v", st, err)
	}
	other, err := s.CreateProject(ctx, annotate.NewProject{Name: "other", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTask(ctx, other.ID, annotate.NewTask{UniqueNames: []string{first.UniqueName}}); err != nil {
		t.Fatalf("an old frame in a task of another project: %v", err)
	}
}
