package annotate_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// lakeVideo stores a 2 s video of 10 frames (5 fps) in the lake.
func (f *fixture) lakeVideo(t *testing.T) lake.File {
	t.Helper()
	path := filepath.Join(f.dir, "clip.mp4")
	if err := testmedia.Video(path, 64, 48, 5, 2); err != nil {
		t.Fatal(err) // ffmpeg missing: make test installs it
	}
	res, err := f.l.Add(f.ctx, lake.AddOptions{Collection: "clips"}, []lake.Upload{{Name: "clip.mp4",
		Open: func() (io.ReadCloser, error) { return os.Open(path) }}})
	if err != nil || len(res.Stored) != 1 || res.Stored[0].FrameCount != 10 {
		t.Fatalf("add video: %v %+v", err, res)
	}
	return res.Stored[0]
}

// TestVideoTaskRules: a task made from a lake video takes the whole video,
// every frame, by default, or a range every N; each bad input is refused
// naming its field, and nothing is written.
func TestVideoTaskRules(t *testing.T) {
	f := open(t, annotate.Video)
	v := f.lakeVideo(t)
	img := f.lakeImages(t, 1)[0]
	images, err := f.s.CreateProject(f.ctx, annotate.NewProject{Name: "pics", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		project string
		nt      annotate.NewVideoTask
		code    errs.Code
		field   string
	}{
		{f.proj.ID, annotate.NewVideoTask{Video: img.UniqueName}, errs.InvalidArgument, "video"},
		{f.proj.ID, annotate.NewVideoTask{Video: "no-such-video"}, errs.NotFound, "video"},
		{images.ID, annotate.NewVideoTask{Video: v.UniqueName}, errs.InvalidArgument, "video"},
		{f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, FirstFrame: ptr(-1)}, errs.InvalidArgument, "firstFrame"},
		{f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, FirstFrame: ptr(10)}, errs.InvalidArgument, "firstFrame"},
		{f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, LastFrame: ptr(10)}, errs.InvalidArgument, "lastFrame"},
		{f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, FirstFrame: ptr(5), LastFrame: ptr(4)}, errs.InvalidArgument, "lastFrame"},
		{f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, Every: -1}, errs.InvalidArgument, "every"},
	} {
		_, err := f.s.CreateVideoTask(f.ctx, c.project, c.nt)
		var e *errs.Error
		if !asErr(err, &e) || e.Code != c.code || e.Field != c.field {
			t.Errorf("%+v: %v, want %s naming %s", c.nt, err, c.code, c.field)
		}
	}
	if n := f.count(t, "upload_session"); n != 0 {
		t.Fatalf("refused tasks wrote %d sessions", n)
	}
	whole, err := f.s.CreateVideoTask(f.ctx, f.proj.ID, annotate.NewVideoTask{Name: "whole", Video: v.UniqueName,
		LastFrame: ptr(4)})
	if err != nil || whole.FrameCount != 5 || whole.ContentType != annotate.Video {
		t.Fatalf("frames 0-4: %+v %v", whole, err)
	}
	_, err = f.s.CreateVideoTask(f.ctx, f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, FirstFrame: ptr(3)})
	if e := (*errs.Error)(nil); !asErr(err, &e) || e.Code != errs.AlreadyExists || e.Field != "firstFrame" {
		t.Fatalf("frames 3-9 overlap task 0-4: %v", err)
	}
	some, err := f.s.CreateVideoTask(f.ctx, f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, FirstFrame: ptr(6),
		Every: 3})
	if err != nil || some.FrameCount != 2 {
		t.Fatalf("frames 6-9 every 3: %+v %v", some, err)
	}
	w, err := f.s.TaskWorkspace(f.ctx, some.ID)
	if err != nil || w.Video == nil || w.Video.UniqueName != v.UniqueName || len(w.Frames) != 2 {
		t.Fatalf("workspace: %+v %v", w, err)
	}
	var got []string
	for _, fr := range w.Frames {
		got = append(got, fmt.Sprintf("%d:%s:%d", fr.SequenceNo, fr.UniqueName, *fr.Frame))
	}
	if want := []string{"0:" + v.UniqueName + ":6", "1:" + v.UniqueName + ":9"}; !slices.Equal(got, want) {
		t.Fatalf("frames %v, want %v", got, want)
	}
}

// TestVideoTaskJobs cuts a video task into jobs of sampled frames; an
// annotator writes tracks only inside the jobs they hold while they are
// theirs to work on; reviews judge frames by number.
func TestVideoTaskJobs(t *testing.T) {
	f := open(t, annotate.Video)
	v := f.lakeVideo(t)
	task, err := f.s.CreateVideoTask(f.ctx, f.proj.ID, annotate.NewVideoTask{Video: v.UniqueName, FirstFrame: ptr(1), Every: 2})
	if err != nil || task.FrameCount != 5 { // 1 3 5 7 9
		t.Fatalf("task: %+v %v", task, err)
	}
	if _, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 2, Overlap: &annotate.Overlap{Share: 0.5,
		Annotators: 2}}, cur); codeOf(err) != string(errs.InvalidArgument) {
		t.Fatalf("overlap on a video task: %v", err)
	}
	jobs, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 2, Assignees: []string{"ana", "ben"}}, cur)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%d:%d:%s", j.Number, j.FrameCount, *j.Assignee))
	}
	if want := []string{"1:2:ana", "2:2:ben", "3:1:ana"}; !slices.Equal(got, want) {
		t.Fatalf("jobs %v, want %v", got, want)
	}
	j1, err := f.s.Job(f.ctx, task.ID, 1)
	if err != nil || j1.Video == nil || len(j1.Frames) != 2 || *j1.Frames[0].Frame != 1 || *j1.Frames[1].Frame != 3 {
		t.Fatalf("job 1: %+v %v", j1, err)
	}
	// Job 1 spans frames 1-4 (to the frame before job 2's first), job 2 5-8,
	// job 3 9 to the task's end.
	for _, c := range []struct {
		m      annotate.Member
		frames []int
		want   string
	}{
		{ana, []int{1, 4}, "ok"}, {ana, []int{9}, "ok"}, {ana, []int{3, 5}, string(errs.PermissionDenied)},
		{ben, []int{5, 8}, "ok"}, {ben, []int{4}, string(errs.PermissionDenied)},
		{ana, []int{0}, string(errs.PermissionDenied)}, // before the task's first frame
		{cur, []int{0, 5}, "ok"}, {rev, []int{1}, string(errs.PermissionDenied)},
	} {
		if _, err := f.s.CheckTrackEdit(f.ctx, f.proj.ID, v.UniqueName, c.frames, c.m); codeOf(err) != c.want {
			t.Errorf("%s on %v: %v, want %s", c.m.Name, c.frames, err, c.want)
		}
	}
	if _, err := f.s.CheckTrackEdit(f.ctx, f.proj.ID, "no-such-video", []int{1}, ana); codeOf(err) != string(errs.NotFound) {
		t.Errorf("a video of no task: %v", err)
	}
	// A comment on a frame of the video belongs to the job holding it.
	c, err := f.s.AddComment(f.ctx, f.proj.ID, v.UniqueName, annotate.NewComment{Text: "box late", Frame: ptr(6)}, "rev")
	if err != nil || c.Job == nil || *c.Job != 2 || c.TaskID != task.ID || *c.Frame != 6 {
		t.Fatalf("a comment on frame 6: %+v %v", c, err)
	}
	if _, err := f.s.AddComment(f.ctx, f.proj.ID, v.UniqueName, annotate.NewComment{Text: "where?"}, "rev"); codeOf(err) != string(errs.InvalidArgument) {
		t.Fatalf("a comment on a video without its frame: %v", err)
	}
	// A track on frames 1-3 written in job 1 starts it and annotates its frames.
	ed, err := f.s.CheckTrackEdit(f.ctx, f.proj.ID, v.UniqueName, []int{1, 3}, ana)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.SetTrack(f.ctx, v.UniqueName, lake.Human, f.proj.ID, lake.Track{Number: 1, Label: "car",
		Keyframes: []lake.Box{{Frame: 1, X: 1, Y: 1, W: 10, H: 10}, {Frame: 3, X: 5, Y: 1, W: 10, H: 10}}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.StartTrackEdit(f.ctx, ed); err != nil {
		t.Fatal(err)
	}
	if st := f.taskStatus(t, task.ID); st != annotate.InProgress {
		t.Fatalf("status after a save in a job: %v", st)
	}
	if j1, _ = f.s.Job(f.ctx, task.ID, 1); j1.AnnotatedCount != 2 || !j1.Frames[0].Annotated {
		t.Fatalf("job 1 after a track on frames 1-3: %+v", j1)
	}
	if _, err := f.s.SetJobState(f.ctx, task.ID, 1, annotate.StateChange{State: annotate.JobSubmitted}, ana); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CheckTrackEdit(f.ctx, f.proj.ID, v.UniqueName, []int{3}, ana); codeOf(err) != string(errs.FailedPrecondition) {
		t.Fatalf("a frame of a submitted job: %v", err)
	}
	if _, err := f.s.SetJobState(f.ctx, task.ID, 1, annotate.StateChange{State: annotate.JobInReview}, rev); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CheckTrackEdit(f.ctx, f.proj.ID, v.UniqueName, []int{3}, rev); err != nil {
		t.Fatalf("the reviewer edits the job in review: %v", err)
	}
	j1, err = f.s.SetJobState(f.ctx, task.ID, 1, annotate.StateChange{Frames: map[string]string{"3": "rejected"}}, rev)
	if err != nil || j1.RejectedFrames != 1 || j1.Frames[1].Review == nil || *j1.Frames[1].Review != "rejected" {
		t.Fatalf("frame 3 rejected: %+v %v", j1, err)
	}
	if _, err := f.s.SetJobState(f.ctx, task.ID, 1, annotate.StateChange{Frames: map[string]string{"5": "accepted"}},
		rev); codeOf(err) != string(errs.NotFound) {
		t.Fatalf("frame 5 is job 2's: %v", err)
	}
}

// TestChangedFrames: an edit's frames are those where a track's keyframes
// or outside frames differ, every frame of a track added, removed or
// relabelled, and none where only the spelling of nothing differs.
func TestChangedFrames(t *testing.T) {
	box := func(frame int, x float64) lake.Box { return lake.Box{Frame: frame, X: x, Y: 1, W: 4, H: 4} }
	before := []lake.Track{
		{Number: 1, Label: "car", Keyframes: []lake.Box{box(0, 1), box(10, 2), box(20, 3)}, Outside: []int{12}},
		{Number: 2, Label: "bus", Keyframes: []lake.Box{box(30, 1)}},
		{Number: 3, Label: "car", Keyframes: []lake.Box{box(40, 1), box(44, 1)}},
	}
	same := box(0, 1)
	same.Attributes = []byte(`{}`)
	after := []lake.Track{
		{Number: 1, Label: "car", Keyframes: []lake.Box{same, box(10, 5), box(25, 3)}, Outside: []int{14}},
		{Number: 3, Label: "bus", Keyframes: []lake.Box{box(40, 1), box(44, 1)}},
		{Number: 4, Label: "car", Keyframes: []lake.Box{box(50, 1)}},
	}
	got := annotate.ChangedFrames(before, after)
	slices.Sort(got)
	if want := []int{10, 12, 14, 20, 25, 30, 40, 44, 50}; !slices.Equal(got, want) {
		t.Fatalf("changed %v, want %v", got, want)
	}
}
