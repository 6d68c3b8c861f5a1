package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestHistoryRestore: restoring a change writes the frame's shapes back to
// their state right after it, as a new change through "restore of <id>";
// the frame's version moves, so a workspace open on the old version gets a
// 409, and a restore made on a stale version is a 409 that changes
// nothing. The history then survives backup, restore and check of the real
// binary, every version reading back the same.
func TestHistoryRestore(t *testing.T) {
	ctx := context.Background()
	data, dest, restored := t.TempDir(), filepath.Join(t.TempDir(), "bk"), filepath.Join(t.TempDir(), "restored")
	s := startServer(t, data)
	key, secret := writeKey(t, data)
	c := client.New(s.base, key, secret)
	res, err := c.UploadFiles(ctx, client.UploadOptions{}, bytesFile("street.jpg", testmedia.JPEG(200, 100, 1)))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	name := res.Stored[0].UniqueName
	pid, err := c.CreateProject(ctx, client.Project{Name: "street", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}, {Name: "person"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTask(ctx, pid, client.NewTask{TaskName: "street", UniqueNames: []string{name}, StartFrom: "empty"}); err != nil {
		t.Fatal(err)
	}
	car := client.Box{Label: "car", X: 10, Y: 10, Width: 50, Height: 30}
	person := client.Box{Label: "person", X: 100, Y: 20, Width: 20, Height: 60}
	moved := client.Box{Label: "car", X: 15, Y: 12, Width: 50, Height: 30}
	var version int
	for _, boxes := range [][]client.Box{{car}, {car, person}, {moved}} {
		e, err := c.ReplaceFrameAnnotationsAt(ctx, pid, name, version, boxes)
		if err != nil {
			t.Fatal(err)
		}
		version = e.Version
	}
	h, err := c.History(ctx, client.HistoryQuery{UniqueName: name})
	if err != nil || len(h) != 3 {
		t.Fatalf("history: %d changes %v, want 3", len(h), err)
	}
	second := h[1] // newest first: the car and the person
	want, err := c.ChangeShapes(ctx, second.ID)
	if err != nil || len(want) != 2 {
		t.Fatalf("the shapes after the second change: %s %v", want, err)
	}

	// A restore made on the version before the last save changes nothing.
	_, err = c.RestoreChange(ctx, second.ID, version-1)
	var conflict *client.ConflictError
	if !errors.As(err, &conflict) || conflict.Current.Version != version || len(conflict.Current.Annotations) != 1 {
		t.Fatalf("a restore on a stale version: %v, want a 409 holding version %d", err, version)
	}
	if h, _ := c.History(ctx, client.HistoryQuery{UniqueName: name}); len(h) != 3 {
		t.Fatalf("the refused restore made a change: %d changes", len(h))
	}

	r, err := c.RestoreChange(ctx, second.ID, version)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != version+1 || r.Change == nil || r.Change.Via != "restore of "+second.ID || r.Change.Who != "crash" ||
		len(r.Change.Added) != 2 || len(r.Change.Removed) != 1 {
		t.Fatalf("the restore: %+v (change %+v), want version %d and a change by crash adding 2 shapes and removing 1", r, r.Change, version+1)
	}
	got, err := c.ChangeShapes(ctx, r.Change.ID)
	if err != nil || !sameShapes(got, want) {
		t.Fatalf("the frame after the restore: %s, want %s (%v)", got, want, err)
	}
	st, err := c.FrameAnnotations(ctx, pid, name)
	if err != nil || st.Version != version+1 || len(st.Annotations) != 2 {
		t.Fatalf("the frame's state after the restore: %+v %v", st, err)
	}
	// A workspace still open on the old version is told someone else saved.
	if _, err := c.ReplaceFrameAnnotationsAt(ctx, pid, name, version, []client.Box{car}); !errors.As(err, &conflict) {
		t.Fatalf("a save on the version before the restore: %v, want a 409", err)
	}
	// Restoring the state the frame is in again is no change.
	if r2, err := c.RestoreChange(ctx, second.ID, 0); err != nil || r2.Change != nil || r2.Version != version+2 {
		t.Fatalf("restoring the current state: %+v %v, want no change", r2, err)
	}
	if _, err := c.RestoreChange(ctx, "chg_nothing", 0); client.CodeOf(err) != "not_found" {
		t.Fatalf("restoring an unknown change: %v", err)
	}
	for _, q := range []client.HistoryQuery{{ProjectID: pid}, {Who: "crash"}, {UniqueName: name, Frame: new(int)}} {
		if h, err := c.History(ctx, q); err != nil || len(h) != 4 {
			t.Errorf("history %+v: %d changes %v, want 4", q, len(h), err)
		}
	}
	if h, err := c.History(ctx, client.HistoryQuery{ProjectID: "prj_other"}); err != nil || len(h) != 0 {
		t.Errorf("another project's history: %d changes %v", len(h), err)
	}
	// The person's day: 4 changes (3 saves and the restore) of one frame.
	today := time.Now().UTC().Format(time.DateOnly)
	people, err := c.PeopleStats(ctx, today, today, pid)
	if err != nil || len(people) != 1 || people[0].User != "crash" || people[0].Day != today || people[0].Frames != 1 ||
		people[0].Changes != 4 || people[0].Shapes != 5 || people[0].RejectionRate != nil {
		t.Fatalf("the day's statistics: %+v %v, want crash's 4 changes adding 5 shapes to 1 frame\n%s", people, err, s.log.String())
	}
	if _, err := c.PeopleStats(ctx, today, "yesterday", ""); client.CodeOf(err) != "invalid_argument" {
		t.Fatalf("statistics to=yesterday: %v, want invalid_argument", err)
	}
	before := historyVersions(t, c, name)

	s.stop(t)
	if out, err := run(t, "backup", "--data", data, "--out", dest); err != nil {
		t.Fatalf("backup: %v %s", err, out)
	}
	if out, err := run(t, "restore", "--from", dest, "--data", restored); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
	mustCheck(t, restored)
	rs := startServer(t, restored)
	after := historyVersions(t, client.New(rs.base, key, secret), name)
	if !slices.Equal(before, after) {
		t.Fatalf("the history after backup and restore:\n%s\nwant\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	mustCheck(t, restored) // check of a folder in use leaves it as it was
	if again := historyVersions(t, client.New(rs.base, key, secret), name); !slices.Equal(before, again) {
		t.Fatalf("the history after check changed")
	}
}

// historyVersions lists every change of a file with the shapes right after it.
func historyVersions(t *testing.T, c *client.Client, name string) []string {
	t.Helper()
	h, err := c.History(context.Background(), client.HistoryQuery{UniqueName: name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ch := range h {
		shapes, err := c.ChangeShapes(context.Background(), ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(shapes)
		out = append(out, ch.ID+" "+ch.Who+" "+ch.Via+" "+ch.At.String()+" "+string(b))
	}
	return out
}

// sameShapes compares shapes as sets of their JSON.
func sameShapes(a, b []json.RawMessage) bool {
	as, bs := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		as[i] = string(a[i])
	}
	for i := range b {
		bs[i] = string(b[i])
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}
