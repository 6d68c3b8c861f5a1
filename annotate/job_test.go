package annotate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

var (
	ana = annotate.Member{Name: "ana", Annotate: true}
	ben = annotate.Member{Name: "ben", Annotate: true}
	rev = annotate.Member{Name: "rev", Review: true}
	cur = annotate.Member{Name: "cur", Curate: true}
)

// uploadedTask makes a task of n uploaded frames (each with a car, so
// annotated) and returns its id and the frames' unique names in order.
func (f *fixture) uploadedTask(t testing.TB, name string, n int) (string, []string) {
	t.Helper()
	sess, err := f.s.InitializeUpload(f.ctx, f.proj.ID, name, n)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range n {
		r, err := f.s.UploadFrame(f.ctx, sess.ID, frame(i+1, nil, car(5)))
		if err != nil {
			t.Fatal(err)
		}
		names[i] = r.UniqueName
	}
	return sess.TaskID, names
}

func codeOf(err error) string {
	if err == nil {
		return "ok"
	}
	return string(errs.CodeOf(err))
}

func (f *fixture) taskStatus(t testing.TB, taskID string) annotate.TaskStatus {
	t.Helper()
	task, err := f.s.Task(f.ctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	return task.Status
}

// TestJobsCutAndStatus cuts a task into jobs in frame order, refuses a second
// cut unless replacing untouched jobs, and follows the task's status: not
// started, in progress with the first save in a job, completed when every job
// is accepted.
func TestJobsCutAndStatus(t *testing.T) {
	f := open(t, annotate.Image)
	files := f.lakeImages(t, 5)
	var names []string
	for _, fl := range files {
		names = append(names, fl.UniqueName)
	}
	task, err := f.s.CreateTask(f.ctx, f.proj.ID, annotate.NewTask{UniqueNames: names})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 2, Assignees: []string{"ana", "ben"}}, cur)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%d:%d:%s:%s", j.Number, j.FrameCount, *j.Assignee, j.State))
	}
	if want := "1:2:ana:annotation 2:2:ben:annotation 3:1:ana:annotation"; strings.Join(got, " ") != want {
		t.Fatalf("jobs %v, want %s", got, want)
	}
	j1, err := f.s.Job(f.ctx, task.ID, 1)
	if err != nil || len(j1.Frames) != 2 || j1.Frames[0].UniqueName != names[0] || j1.Frames[1].UniqueName != names[1] ||
		len(j1.Events) != 1 || j1.Events[0].Who != "cur" || j1.Events[0].Kind != "created" {
		t.Fatalf("job 1: %+v %v", j1, err)
	}
	if _, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 3}, cur); !errs.Is(err, errs.AlreadyExists) {
		t.Fatalf("second cut: %v", err)
	}
	if jobs, err = f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 3, Assignees: []string{"ana", "ben"},
		Replace: true}, cur); err != nil || len(jobs) != 2 {
		t.Fatalf("replace: %v %d", err, len(jobs))
	}
	if st := f.taskStatus(t, task.ID); st != annotate.NotStarted {
		t.Fatalf("status before any work: %d", st)
	}
	done := annotate.Completed
	if _, err := f.s.UpdateTask(f.ctx, task.ID, annotate.TaskChange{Status: &done}); !errs.Is(err, errs.FailedPrecondition) ||
		!strings.Contains(err.Error(), "jobs") {
		t.Fatalf("marking a task of jobs done: %v", err)
	}
	if _, err := f.s.ReplaceFrameBoxesAs(f.ctx, f.proj.ID, names[0], 0, []annotate.Box{car(3)}, ana); err != nil {
		t.Fatal(err)
	}
	if st := f.taskStatus(t, task.ID); st != annotate.InProgress {
		t.Fatalf("status after a save in job 1: %d", st)
	}
	if _, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 1, Replace: true}, cur); !errs.Is(err, errs.FailedPrecondition) ||
		!strings.Contains(err.Error(), "job 1") {
		t.Fatalf("replace a started cut: %v", err)
	}
	for _, n := range []int{1, 2} {
		if _, err := f.s.SetJobState(f.ctx, task.ID, n, annotate.StateChange{State: annotate.JobAccepted}, cur); err != nil {
			t.Fatal(err)
		}
		want := annotate.InProgress
		if n == 2 {
			want = annotate.Completed
		}
		if st := f.taskStatus(t, task.ID); st != want {
			t.Fatalf("status after accepting job %d: %d, want %d", n, st, want)
		}
	}
	if _, err := f.s.CreateJobs(f.ctx, task.ID, annotate.JobPlan{Size: 0}, cur); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("size 0: %v", err)
	}
}

// TestJobTransitions tries every move of a job from every state by each
// role: the job's annotator, another annotator, a reviewer and a curator.
func TestJobTransitions(t *testing.T) {
	f := open(t, annotate.Image)
	taskID, _ := f.uploadedTask(t, "moves", 1)
	if _, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 1, Assignees: []string{"ana"}}, cur); err != nil {
		t.Fatal(err)
	}
	const (
		ok   = "ok"
		bad  = "failed_precondition"
		deny = "permission_denied"
	)
	// want[from][to] is the outcome for ana (assignee), ben, rev and cur.
	want := map[annotate.JobState]map[annotate.JobState][4]string{
		annotate.JobAnnotation: {
			annotate.JobAnnotation: {bad, bad, bad, bad}, annotate.JobSubmitted: {ok, deny, deny, ok},
			annotate.JobInReview: {bad, bad, bad, ok}, annotate.JobAccepted: {bad, bad, bad, ok},
			annotate.JobRejected: {bad, bad, bad, ok}},
		annotate.JobSubmitted: {
			annotate.JobAnnotation: {bad, bad, bad, ok}, annotate.JobSubmitted: {bad, bad, bad, bad},
			annotate.JobInReview: {deny, deny, ok, ok}, annotate.JobAccepted: {bad, bad, bad, ok},
			annotate.JobRejected: {bad, bad, bad, ok}},
		annotate.JobInReview: {
			annotate.JobAnnotation: {bad, bad, bad, ok}, annotate.JobSubmitted: {bad, bad, bad, ok},
			annotate.JobInReview: {bad, bad, bad, bad}, annotate.JobAccepted: {deny, deny, ok, ok},
			annotate.JobRejected: {deny, deny, ok, ok}},
		annotate.JobAccepted: {
			annotate.JobAnnotation: {bad, bad, bad, ok}, annotate.JobSubmitted: {bad, bad, bad, ok},
			annotate.JobInReview: {bad, bad, bad, ok}, annotate.JobAccepted: {bad, bad, bad, bad},
			annotate.JobRejected: {bad, bad, bad, ok}},
		annotate.JobRejected: {
			annotate.JobAnnotation: {bad, bad, bad, ok}, annotate.JobSubmitted: {ok, deny, deny, ok},
			annotate.JobInReview: {bad, bad, bad, ok}, annotate.JobAccepted: {bad, bad, bad, ok},
			annotate.JobRejected: {bad, bad, bad, bad}},
	}
	reset := func(st annotate.JobState) {
		t.Helper()
		j, err := f.s.Job(f.ctx, taskID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != st {
			if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{State: st}, cur); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.s.UpdateJob(f.ctx, taskID, 1, annotate.JobChange{Reviewer: annotate.Opt{Set: true}}, cur); err != nil {
			t.Fatal(err)
		}
	}
	for _, from := range annotate.JobStates {
		for _, to := range annotate.JobStates {
			for i, m := range []annotate.Member{ana, ben, rev, cur} {
				reset(from)
				_, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{State: to, Note: "n"}, m)
				if got := codeOf(err); got != want[from][to][i] {
					t.Errorf("%s → %s by %s: %s (%v), want %s", from, to, m.Name, got, err, want[from][to][i])
				}
				if err != nil && codeOf(err) == bad && !strings.Contains(err.Error(), string(from)) {
					t.Errorf("%s → %s by %s: %v does not name the state", from, to, m.Name, err)
				}
			}
		}
	}
	// A job taken by one reviewer is not another's to decide.
	reset(annotate.JobSubmitted)
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{State: annotate.JobInReview}, rev); err != nil {
		t.Fatal(err)
	}
	other := annotate.Member{Name: "rita", Review: true}
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{State: annotate.JobAccepted}, other); !errs.Is(err, errs.PermissionDenied) {
		t.Fatalf("another reviewer accepts: %v", err)
	}
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{State: "done"}, cur); !errs.Is(err, errs.InvalidArgument) {
		t.Fatalf("unknown state: %v", err)
	}
}

// TestReviewFlow walks a job through submit, review with per-frame verdicts,
// rejection, a fix and acceptance, and reads its events back.
func TestReviewFlow(t *testing.T) {
	f := open(t, annotate.Image)
	taskID, names := f.uploadedTask(t, "flow", 3)
	if _, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 3, Assignees: []string{"ana"}}, cur); err != nil {
		t.Fatal(err)
	}
	step := func(m annotate.Member, ch annotate.StateChange) annotate.Job {
		t.Helper()
		j, err := f.s.SetJobState(f.ctx, taskID, 1, ch, m)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	step(ana, annotate.StateChange{State: annotate.JobSubmitted})
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{Frames: map[string]string{names[0]: "rejected"}}, rev); !errs.Is(err, errs.FailedPrecondition) {
		t.Fatalf("judging frames of a submitted job: %v", err)
	}
	step(rev, annotate.StateChange{State: annotate.JobInReview})
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{Frames: map[string]string{"nope.jpg": "rejected"}}, rev); !errs.Is(err, errs.NotFound) {
		t.Fatalf("judging a frame not in the job: %v", err)
	}
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{Frames: map[string]string{names[0]: "rejected"}}, ana); !errs.Is(err, errs.PermissionDenied) {
		t.Fatalf("the annotator judges frames: %v", err)
	}
	j := step(rev, annotate.StateChange{State: annotate.JobRejected, Note: "box too loose",
		Frames: map[string]string{names[0]: "accepted", names[1]: "rejected"}})
	if j.State != annotate.JobRejected || j.AcceptedFrames != 1 || j.RejectedFrames != 1 || *j.Reviewer != "rev" ||
		*j.Frames[1].Review != "rejected" || j.Frames[2].Review != nil {
		t.Fatalf("rejected job: %+v", j)
	}
	if _, err := f.s.ReplaceFrameBoxesAs(f.ctx, f.proj.ID, names[1], 0, []annotate.Box{car(7)}, ana); err != nil {
		t.Fatalf("fix after rejection: %v", err)
	}
	step(ana, annotate.StateChange{State: annotate.JobSubmitted, Note: "fixed"})
	step(rev, annotate.StateChange{State: annotate.JobInReview})
	j = step(rev, annotate.StateChange{State: annotate.JobAccepted})
	var moves []string
	for _, e := range j.Events {
		if e.Kind == "state" {
			moves = append(moves, fmt.Sprintf("%s:%s>%s:%s", e.Who, *e.From, *e.To, e.Note))
		}
	}
	want := "ana:annotation>submitted: rev:submitted>in_review: rev:in_review>rejected:box too loose " +
		"ana:rejected>submitted:fixed rev:submitted>in_review: rev:in_review>accepted:"
	if strings.Join(moves, " ") != want {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(moves, " "), want)
	}
	if st := f.taskStatus(t, taskID); st != annotate.Completed {
		t.Fatalf("task of one accepted job: status %d", st)
	}
}

// TestFrameEditRules: once a task has jobs, an annotator writes only the
// frames of their jobs, and only while the job is theirs to work on; a
// reviewer edits a job in review; a task without jobs is written as before.
func TestFrameEditRules(t *testing.T) {
	f := open(t, annotate.Image)
	free, freeNames := f.uploadedTask(t, "free", 1)
	_ = free
	if _, err := f.s.ReplaceFrameBoxesAs(f.ctx, f.proj.ID, freeNames[0], 0, []annotate.Box{car(2)}, ben); err != nil {
		t.Fatalf("a task without jobs: %v", err)
	}
	taskID, names := f.uploadedTask(t, "jobs", 4)
	if _, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 2, Assignees: []string{"ana", "ben"}}, cur); err != nil {
		t.Fatal(err)
	}
	put := func(m annotate.Member, name string) error {
		_, err := f.s.ReplaceFrameBoxesAs(f.ctx, f.proj.ID, name, 0, []annotate.Box{car(4)}, m)
		return err
	}
	if err := put(ana, names[0]); err != nil {
		t.Fatal(err)
	}
	if err := put(ana, names[2]); !errs.Is(err, errs.PermissionDenied) || !strings.Contains(err.Error(), "ben") {
		t.Fatalf("ana writes ben's frame: %v", err)
	}
	if err := put(rev, names[0]); !errs.Is(err, errs.PermissionDenied) {
		t.Fatalf("a reviewer writes a job in annotation: %v", err)
	}
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{State: annotate.JobSubmitted}, ana); err != nil {
		t.Fatal(err)
	}
	if err := put(ana, names[0]); !errs.Is(err, errs.FailedPrecondition) || !strings.Contains(err.Error(), "submitted") {
		t.Fatalf("ana writes her submitted job: %v", err)
	}
	if _, err := f.s.SetJobState(f.ctx, taskID, 1, annotate.StateChange{State: annotate.JobInReview}, rev); err != nil {
		t.Fatal(err)
	}
	if err := put(rev, names[1]); err != nil {
		t.Fatalf("the reviewer edits where quicker: %v", err)
	}
	if err := put(cur, names[3]); err != nil {
		t.Fatalf("a curator writes any frame: %v", err)
	}
	if _, err := f.s.ReplaceFrameBoxesAs(f.ctx, f.proj.ID, freeNames[0], 0, nil, rev); !errs.Is(err, errs.PermissionDenied) {
		t.Fatalf("someone who may not annotate writes a task without jobs: %v", err)
	}
	if err := f.s.CheckFrameEdit(f.ctx, f.proj.ID, names[3], ana); !errs.Is(err, errs.PermissionDenied) {
		t.Fatalf("ana decides suggestions on ben's frame: %v", err)
	}
}

// TestNextJobNeverCollides: 20 people pull jobs at once; each job goes to
// one of them, and the 21st pull finds none left.
func TestNextJobNeverCollides(t *testing.T) {
	f := open(t, annotate.Image)
	taskID, _ := f.uploadedTask(t, "pull", 20)
	if _, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 1}, cur); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]int, 20)
	errs20 := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			j, err := f.s.NextJob(f.ctx, f.proj.ID, fmt.Sprintf("a%02d", i))
			got[i], errs20[i] = j.Number, err
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for i, n := range got {
		if errs20[i] != nil || seen[n] {
			t.Fatalf("pull %d: job %d, %v (seen %v)", i, n, errs20[i], seen)
		}
		seen[n] = true
	}
	if _, err := f.s.NextJob(f.ctx, f.proj.ID, "late"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("21st pull: %v", err)
	}
}

// TestOverlapCopies: a share of frames is cut again into copy jobs held by
// other people, whose saves are stored as another answer
// (operation "<projectId>/copy1") that the project's download does not read.
func TestOverlapCopies(t *testing.T) {
	f := open(t, annotate.Image)
	taskID, names := f.uploadedTask(t, "agree", 10)
	jobs, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 5, Assignees: []string{"ana", "ben", "cy"},
		Overlap: &annotate.Overlap{Share: 0.3, Annotators: 2}}, cur)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 || jobs[2].Copy != 1 || jobs[2].FrameCount != 3 || jobs[2].Number != 3 {
		t.Fatalf("jobs: %+v", jobs)
	}
	copyJob, err := f.s.Job(f.ctx, taskID, 3)
	if err != nil {
		t.Fatal(err)
	}
	holder := *copyJob.Assignee
	name := copyJob.Frames[0].UniqueName
	mainHolder := "ana"
	if slices := names[5:]; strings.Contains(strings.Join(slices, " "), name) {
		mainHolder = "ben"
	}
	if holder == mainHolder {
		t.Fatalf("copy of %s given to its own annotator %s", name, holder)
	}
	m := annotate.Member{Name: holder, Annotate: true}
	res, err := f.s.ReplaceFrameBoxesAs(f.ctx, f.proj.ID, name, 1, []annotate.Box{car(30), car(40)}, m)
	if err != nil || res.Version != 2 {
		t.Fatalf("copy save: %+v %v", res, err)
	}
	var conflict *annotate.Conflict
	if _, err := f.s.ReplaceFrameBoxesAs(f.ctx, f.proj.ID, name, 1, nil, m); !errors.As(err, &conflict) ||
		conflict.Current.Version != 2 {
		t.Fatalf("stale copy save: %v", err)
	}
	mine, err := f.s.FrameStateAs(f.ctx, f.proj.ID, name, m)
	if err != nil || countShapes(t, mine.Annotations) != 2 || mine.Version != 2 {
		t.Fatalf("copy holder's view: %+v %v", mine, err)
	}
	proj, err := f.s.FrameState(f.ctx, f.proj.ID, name)
	if err != nil || countShapes(t, proj.Annotations) != 1 {
		t.Fatalf("the project's answer: %s %v", proj.Annotations, err)
	}
	fl, err := f.l.File(f.ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	copies, err := f.l.Boxes(f.ctx, lake.BoxQuery{FileSeqs: []int64{fl.Seq()}, Sources: []lake.Source{lake.Human},
		Operations: []string{annotate.CopyOperation(f.proj.ID, 1)}})
	if err != nil || len(copies) != 2 {
		t.Fatalf("copy in the lake: %d %v", len(copies), err)
	}
	d, err := f.s.Download(f.ctx, annotate.DownloadQuery{ProjectID: f.proj.ID, TaskIDs: []string{taskID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range d.Data[0].Frames {
		if n := countShapes(t, fr.Annotations); n != 1 {
			t.Fatalf("download of %s has %d boxes: copies leak", fr.UniqueName, n)
		}
	}
	if err := f.s.CheckFrameEdit(f.ctx, f.proj.ID, name, m); !errs.Is(err, errs.FailedPrecondition) {
		t.Fatalf("suggestions on a copy: %v", err)
	}
	if _, err := f.s.UpdateJob(f.ctx, taskID, 3, annotate.JobChange{Assignee: annotate.Opt{Set: true, Name: &mainHolder}}, cur); !errs.Is(err, errs.FailedPrecondition) {
		t.Fatalf("copy given to the frame's annotator: %v", err)
	}
}

func countShapes(t *testing.T, raw json.RawMessage) int {
	t.Helper()
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err != nil {
		t.Fatal(err)
	}
	return len(arr)
}

// TestQueue orders a person's jobs by what to do next: a rejected job to fix
// before new work, reviews in progress before jobs waiting for a reviewer,
// and their own submitted jobs last; submitted jobs with no reviewer show to
// those who may review the project.
func TestQueue(t *testing.T) {
	f := open(t, annotate.Image)
	taskID, _ := f.uploadedTask(t, "q", 4)
	if _, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 1, Assignees: []string{"ana"}}, cur); err != nil {
		t.Fatal(err)
	}
	move := func(n int, m annotate.Member, st annotate.JobState) {
		t.Helper()
		if _, err := f.s.SetJobState(f.ctx, taskID, n, annotate.StateChange{State: st}, m); err != nil {
			t.Fatal(err)
		}
	}
	move(2, ana, annotate.JobSubmitted)
	move(3, ana, annotate.JobSubmitted)
	move(3, rev, annotate.JobInReview)
	move(4, ana, annotate.JobSubmitted)
	move(4, rev, annotate.JobInReview)
	move(4, rev, annotate.JobRejected)
	actions := func(name string, review bool) string {
		q, err := f.s.Queue(f.ctx, name, func(string) bool { return review })
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range q {
			if it.TaskID != taskID || it.ProjectID != f.proj.ID || it.TaskName != "q" {
				t.Errorf("queue item of %s in %s (%s)", it.TaskID, it.ProjectID, it.TaskName)
			}
			out = append(out, fmt.Sprintf("%d:%s", it.Number, it.Action))
		}
		return strings.Join(out, " ")
	}
	if got, want := actions("ana", false), "4:fix 1:annotate 2:wait 3:wait"; got != want {
		t.Errorf("ana's queue %q, want %q", got, want)
	}
	if got, want := actions("rev", true), "3:continue review 2:review"; got != want {
		t.Errorf("rev's queue %q, want %q", got, want)
	}
	if got := actions("rita", false); got != "" {
		t.Errorf("queue of someone who may not review: %q", got)
	}
}
