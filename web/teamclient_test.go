package web_test

import (
	"slices"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
)

// TestTeamClient drives the Go client's team functions against a real
// server as a script would: a curator cuts and reassigns jobs and manages
// members, an annotator reads their queue, submits, resolves a comment and
// pulls the next job, a reviewer comments and rejects, an admin manages
// people; a curator may not manage people.
func TestTeamClient(t *testing.T) {
	tm := startTeam(t)
	for _, p := range []struct {
		name string
		role auth.Role
	}{{"ana", auth.Annotator}, {"bob", auth.Annotator}, {"rev", auth.Reviewer}} {
		tm.person(p.name, p.role, true)
	}
	k, secret, err := tm.a.Keys.Create(tm.ctx, "adm", auth.Admin, 0)
	if err != nil {
		t.Fatal(err)
	}
	as := func(who string) *client.Client { return client.New(tm.base, tm.keys[who][0], tm.keys[who][1]) }
	cur, ana, rev, adm := as("cur"), as("ana"), as("rev"), client.New(tm.base, k.Key, secret)
	ctx := tm.ctx
	task, names := tm.task("streets", 2)

	jobs, err := cur.CreateLabelJobs(ctx, task, client.JobPlan{Size: 1, Assignees: []string{"ana"}})
	if err != nil || len(jobs) != 2 || *jobs[0].Assignee != "ana" {
		t.Fatalf("jobs: %+v %v", jobs, err)
	}
	bob, nobody := "bob", ""
	j2, err := cur.ReassignLabelJob(ctx, task, 2, client.JobAssignment{Assignee: &bob, Reviewer: &nobody})
	if err != nil || j2.Assignee == nil || *j2.Assignee != "bob" || j2.Reviewer != nil {
		t.Fatalf("reassigned: %+v %v", j2, err)
	}
	if all, err := cur.LabelJobs(ctx, task); err != nil || len(all) != 2 {
		t.Fatalf("the task's jobs: %+v %v", all, err)
	}
	if j1, err := cur.LabelJob(ctx, task, 1); err != nil || len(j1.Frames) != 1 || j1.Frames[0].UniqueName != names[0] {
		t.Fatalf("job 1: %+v %v", j1, err)
	}
	if q, err := ana.Queue(ctx); err != nil || len(q) != 1 || q[0].Number != 1 || q[0].Action != "annotate" {
		t.Fatalf("ana's queue: %+v %v", q, err)
	}

	if _, err := ana.SetLabelJobState(ctx, task, 1, client.JobStateChange{State: "submitted"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rev.SetLabelJobState(ctx, task, 1, client.JobStateChange{State: "in_review"}); err != nil {
		t.Fatal(err)
	}
	cm, err := rev.AddComment(ctx, tm.proj, names[0], client.NewComment{Text: "missed the second car"})
	if err != nil || cm.Author != "rev" || cm.Resolved {
		t.Fatalf("comment: %+v %v", cm, err)
	}
	rejected, err := rev.SetLabelJobState(ctx, task, 1, client.JobStateChange{State: "rejected", Note: "see the comment"})
	if err != nil || rejected.State != "rejected" {
		t.Fatalf("rejected: %+v %v", rejected, err)
	}
	if cs, err := ana.FrameComments(ctx, tm.proj, names[0]); err != nil || len(cs) != 1 || cs[0].ID != cm.ID {
		t.Fatalf("frame comments: %+v %v", cs, err)
	}
	if cs, err := ana.JobComments(ctx, task, 1); err != nil || len(cs) != 1 {
		t.Fatalf("job comments: %+v %v", cs, err)
	}
	if r, err := ana.ResolveComment(ctx, cm.ID, true); err != nil || !r.Resolved || r.ResolvedBy == nil || *r.ResolvedBy != "ana" {
		t.Fatalf("resolved: %+v %v", r, err)
	}

	task2, _ := tm.task("more", 1)
	if _, err := cur.CreateLabelJobs(ctx, task2, client.JobPlan{Size: 1}); err != nil {
		t.Fatal(err)
	}
	if next, err := ana.NextLabelJob(ctx, tm.proj); err != nil || next.TaskID != task2 || *next.Assignee != "ana" {
		t.Fatalf("next job: %+v %v", next, err)
	}

	if _, err := adm.CreateUser(ctx, "zed", "a long enough password", "annotator"); err != nil {
		t.Fatal(err)
	}
	if _, err := cur.CreateUser(ctx, "zoe", "a long enough password", "annotator"); client.CodeOf(err) != "permission_denied" {
		t.Fatalf("a curator created a person: %v", err)
	}
	if m, err := cur.PutMember(ctx, tm.proj, "zed", "reviewer"); err != nil || m.Role != "reviewer" || m.UserRole != "annotator" {
		t.Fatalf("member: %+v %v", m, err)
	}
	memberNames := func() []string {
		ms, err := cur.ProjectMembers(ctx, tm.proj)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	if got := memberNames(); !slices.Equal(got, []string{"ana", "bob", "rev", "zed"}) {
		t.Fatalf("members: %v", got)
	}
	if err := cur.DeleteMember(ctx, tm.proj, "zed"); err != nil || slices.Contains(memberNames(), "zed") {
		t.Fatalf("unmember: %v %v", err, memberNames())
	}
	if u, err := adm.SetUserRole(ctx, "zed", "reviewer"); err != nil || u.Role != "reviewer" {
		t.Fatalf("role: %+v %v", u, err)
	}
	if _, err := adm.ResetPassword(ctx, "zed", "another long password"); err != nil {
		t.Fatal(err)
	}
	if u, err := adm.DisableUser(ctx, "zed", true); err != nil || u.DisabledAt == nil {
		t.Fatalf("disabled: %+v %v", u, err)
	}
	users, err := adm.Users(ctx)
	if err != nil || !slices.ContainsFunc(users, func(u client.User) bool { return u.Name == "zed" && u.DisabledAt != nil }) {
		t.Fatalf("users: %+v %v", users, err)
	}
}
