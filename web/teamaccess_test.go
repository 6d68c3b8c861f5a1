package web_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/internal/auth"
)

// teamOfTwoProjects is startTeam's project, whose annotators ana and bob
// each hold a job of a 2-frame task and reviewer rev reviews it, and a
// second project where annotator eve holds a job and rob reviews; vic is a
// viewer. ana, bob and eve have each saved their first frame. It answers
// the first project's task and frames and the second project's id.
func teamOfTwoProjects(t *testing.T) (tm *team, task string, names []string, other string) {
	tm = startTeam(t)
	for _, p := range []struct {
		name   string
		role   auth.Role
		member bool
	}{{"ana", auth.Annotator, true}, {"bob", auth.Annotator, true}, {"rev", auth.Reviewer, true},
		{"eve", auth.Annotator, false}, {"rob", auth.Reviewer, false}, {"vic", auth.Viewer, false}} {
		tm.person(p.name, p.role, p.member)
	}
	p2, err := tm.a.Annotate.CreateProject(tm.ctx, annotate.NewProject{Name: "fields", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]auth.Role{"eve": auth.Annotator, "rob": auth.Reviewer} {
		if _, err := tm.a.Keys.SetMember(tm.ctx, p2.ID, name, role); err != nil {
			t.Fatal(err)
		}
	}
	first := tm.proj
	tm.proj = p2.ID
	task2, names2 := tm.task("other", 1)
	tm.proj = first
	task, names = tm.task("streets", 2)
	tm.want(200, "cur", "POST", "/api/v1/tasks/"+task+"/jobs", map[string]any{"size": 1, "assignees": []string{"ana", "bob"}})
	tm.want(200, "cur", "POST", "/api/v1/tasks/"+task2+"/jobs", map[string]any{"size": 1, "assignees": []string{"eve"}})
	car := []map[string]any{{"label": "car", "x": 5, "y": 5, "width": 12, "height": 12}}
	tm.want(200, "ana", "PUT", "/api/v1/projects/"+first+"/frames/"+names[0]+"/annotations", car)
	tm.want(200, "bob", "PUT", "/api/v1/projects/"+first+"/frames/"+names[1]+"/annotations", car)
	tm.want(200, "eve", "PUT", "/api/v1/projects/"+p2.ID+"/frames/"+names2[0]+"/annotations", car)
	return tm, task, names, p2.ID
}

// TestPeopleStatsPerRole: GET /stats/people answers each caller the rows
// docs/team.md "Statistics" says: curators and viewers everyone's, an
// annotator their own, a reviewer theirs and the members' of the projects
// they review; project= of a project they are not in is refused them.
func TestPeopleStatsPerRole(t *testing.T) {
	tm, _, _, other := teamOfTwoProjects(t)
	people := func(who, query string) []string {
		var out []string
		for _, r := range tm.want(200, who, "GET", "/api/v1/stats/people"+query, nil)["people"].([]any) {
			if u := r.(map[string]any)["user"].(string); !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		who, query string
		want       []string
	}{
		{"cur", "", []string{"ana", "bob", "eve", "system"}}, // system: the uploads
		{"vic", "", []string{"ana", "bob", "eve", "system"}},
		{"ana", "", []string{"ana"}},
		{"eve", "", []string{"eve"}},
		{"rev", "", []string{"ana", "bob"}},
		{"rob", "", []string{"eve"}},
		{"rev", "?project=" + tm.proj, []string{"ana", "bob"}},
		{"ana", "?project=" + tm.proj, []string{"ana"}},
		{"cur", "?project=" + other, []string{"eve", "system"}},
	} {
		if got := people(c.who, c.query); !slices.Equal(got, c.want) {
			t.Errorf("%s reads the rows of %v, want %v (%s)", c.who, got, c.want, c.query)
		}
	}
	for _, who := range []string{"ana", "rev"} {
		tm.want(403, who, "GET", "/api/v1/stats/people?project="+other, nil)
	}
	tm.want(403, "rob", "GET", "/api/v1/stats/people?project="+tm.proj, nil)
}

// TestRestorePerRole: a restore of a project frame's change is allowed as
// the workspace's save of that frame is: its job's annotator while the job
// is theirs to work on, its reviewer while it is in review, curators
// always; another annotator, a member of another project, a viewer and a
// guessed id are refused (403, the guess as a change they may not restore).
func TestRestorePerRole(t *testing.T) {
	tm, task, names, _ := teamOfTwoProjects(t)
	changes := tm.want(200, "cur", "GET", "/api/v1/lake/history?uniqueName="+names[0], nil)["changes"].([]any)
	if len(changes) != 2 {
		t.Fatalf("frame 0's history: %v", changes)
	}
	upload := changes[1].(map[string]any)["id"].(string) // the oldest: the uploaded car
	restore := "/api/v1/lake/history/" + upload + "/restore"
	for _, who := range []string{"bob", "eve", "rob", "vic", "rev"} { // rev: the job is not in review
		tm.want(403, who, "POST", restore, nil)
	}
	tm.want(403, "ana", "POST", "/api/v1/lake/history/nosuchchange/restore", nil)
	tm.want(404, "cur", "POST", "/api/v1/lake/history/nosuchchange/restore", nil)
	out := tm.want(200, "ana", "POST", restore, nil)
	ch, _ := out["change"].(map[string]any)
	if ch == nil || ch["who"] != "ana" || ch["via"] != "restore of "+upload {
		t.Fatalf("ana's restore: %v", out)
	}
	tm.want(200, "ana", "POST", "/api/v1/tasks/"+task+"/jobs/1/state", map[string]any{"state": "submitted"})
	tm.want(409, "ana", "POST", restore, nil) // submitted: read-only to its annotator
	tm.want(200, "rev", "POST", "/api/v1/tasks/"+task+"/jobs/1/state", map[string]any{"state": "in_review"})
	last := tm.want(200, "cur", "GET", "/api/v1/lake/history?uniqueName="+names[0]+"&limit=3", nil)["changes"].([]any)
	ana := last[1].(map[string]any)["id"].(string) // ana's own save, before her restore
	if out := tm.want(200, "rev", "POST", "/api/v1/lake/history/"+ana+"/restore", nil); out["change"] == nil {
		t.Fatalf("the reviewer's restore in review made no change: %v", out)
	}
	tm.want(200, "cur", "POST", restore, nil)
}
