package annotate_test

import (
	"encoding/json"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
)

// TestCommentsFlow pins comments to a frame and to a shape, files them under
// the job holding the frame, refuses what is wrong without storing it, and
// lets the job's annotator or a reviewer resolve and reopen them.
func TestCommentsFlow(t *testing.T) {
	f := open(t, annotate.Image)
	taskID, names := f.uploadedTask(t, "c", 2)
	if _, err := f.s.CreateJobs(f.ctx, taskID, annotate.JobPlan{Size: 1, Assignees: []string{"ana", "ben"}}, cur); err != nil {
		t.Fatal(err)
	}
	st, err := f.s.FrameState(f.ctx, f.proj.ID, names[0])
	if err != nil {
		t.Fatal(err)
	}
	var shapes []annotate.Annotation
	if err := json.Unmarshal(st.Annotations, &shapes); err != nil || len(shapes) != 1 {
		t.Fatalf("shapes: %s %v", st.Annotations, err)
	}
	onShape, err := f.s.AddComment(f.ctx, f.proj.ID, names[0], annotate.NewComment{Text: " box too loose ", ShapeID: shapes[0].ID}, "rev")
	if err != nil {
		t.Fatal(err)
	}
	if onShape.Job == nil || *onShape.Job != 1 || onShape.TaskID != taskID || onShape.Text != "box too loose" ||
		onShape.Shape == nil || onShape.Shape.Label != "car" || onShape.Shape.X != 5 || onShape.Author != "rev" || onShape.Resolved {
		t.Fatalf("comment on a shape: %+v", onShape)
	}
	frame := 3
	if _, err := f.s.AddComment(f.ctx, f.proj.ID, names[0], annotate.NewComment{Text: "missed the second car", Frame: &frame}, "rev"); err != nil {
		t.Fatal(err)
	}
	two := 2
	for what, nc := range map[string]annotate.NewComment{
		"empty text":      {Text: "  "},
		"unknown shape":   {Text: "x", ShapeID: "ann_nope"},
		"job not holding": {Text: "x", Job: &two},
	} {
		if _, err := f.s.AddComment(f.ctx, f.proj.ID, names[0], nc, "rev"); err == nil {
			t.Errorf("%s: stored", what)
		}
	}
	if _, err := f.s.AddComment(f.ctx, f.proj.ID, "nope.jpg", annotate.NewComment{Text: "x"}, "rev"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("comment on a frame not in the project: %v", err)
	}
	cs, err := f.s.JobComments(f.ctx, taskID, 1)
	if err != nil || len(cs) != 2 || cs[1].Frame == nil || *cs[1].Frame != 3 {
		t.Fatalf("job 1's comments: %+v %v", cs, err)
	}
	if cs, err := f.s.JobComments(f.ctx, taskID, 2); err != nil || len(cs) != 0 {
		t.Fatalf("job 2's comments: %+v %v", cs, err)
	}
	if _, err := f.s.ResolveComment(f.ctx, onShape.ID, true, ben); !errs.Is(err, errs.PermissionDenied) {
		t.Fatalf("another annotator resolves: %v", err)
	}
	c, err := f.s.ResolveComment(f.ctx, onShape.ID, true, ana)
	if err != nil || !c.Resolved || *c.ResolvedBy != "ana" || c.ResolvedAt == nil {
		t.Fatalf("resolved by the job's annotator: %+v %v", c, err)
	}
	if c, err = f.s.ResolveComment(f.ctx, onShape.ID, false, rev); err != nil || c.Resolved || c.ResolvedBy != nil {
		t.Fatalf("reopened by a reviewer: %+v %v", c, err)
	}
	j, err := f.s.Job(f.ctx, taskID, 1)
	if err != nil || j.Comments != 2 || j.OpenComments != 2 {
		t.Fatalf("job counts: %+v %v", j, err)
	}
	if cs, err := f.s.FrameComments(f.ctx, f.proj.ID, names[0]); err != nil || len(cs) != 2 {
		t.Fatalf("frame comments: %+v %v", cs, err)
	}
}
