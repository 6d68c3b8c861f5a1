package web_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
)

// TestProjectAgreement: a task's frames all given twice (an overlap copy
// job), the copy's holder draws the same car on one frame, a car elsewhere
// on another and an extra car on the third; the project's agreement answers
// each frame's F1 and the label's, the review queue follows the threshold,
// and a consensus accepted by a curator becomes the frame's answer, a
// change in its history; a reviewer accepts one only while the job is in
// review, and a stranger to the project reads nothing.
func TestProjectAgreement(t *testing.T) {
	tm := startTeam(t)
	tm.person("ana", auth.Annotator, true)
	tm.person("ben", auth.Annotator, true)
	tm.person("rev", auth.Reviewer, true)
	tm.person("eve", auth.Annotator, false)
	taskID, names := tm.task("agree", 3)
	out := tm.want(200, "cur", "POST", "/api/v1/tasks/"+taskID+"/jobs", map[string]any{"size": 3,
		"assignees": []string{"ana", "ben"}, "overlap": map[string]any{"share": 1, "annotators": 2}})
	holders := map[float64]string{}
	for _, j := range out["jobs"].([]any) {
		j := j.(map[string]any)
		holders[j["copy"].(float64)] = j["assignee"].(string)
	}
	main, copier := holders[0], holders[1]
	if main == "" || copier == "" || main == copier {
		t.Fatalf("jobs: %v", out)
	}
	path := "/api/v1/projects/" + tm.proj
	agreementOf := func(query string) map[string]any {
		return tm.want(200, "cur", "GET", path+"/agreement"+query, nil)
	}
	if a := agreementOf(""); a["measuredFrames"].(float64) != 0 || len(a["pending"].([]any)) != 3 {
		t.Fatalf("before the copy is drawn: %v", a)
	}
	car := func(x, y float64) map[string]any {
		return map[string]any{"label": "car", "x": x, "y": y, "width": 10, "height": 10}
	}
	// Every frame's own answer is the uploaded car at (1, 1).
	for i, boxes := range [][]map[string]any{{car(1, 1)}, {car(30, 30)}, {car(1, 1), car(40, 30)}} {
		tm.want(200, copier, "PUT", path+"/frames/"+names[i]+"/annotations", boxes)
	}
	// The copy job's history is the copy's saves, by its holder.
	h := tm.want(200, "cur", "GET", "/api/v1/lake/history?task="+taskID+"&job=2", nil)["changes"].([]any)
	for _, c := range h {
		if c := c.(map[string]any); c["who"] != copier || c["operation"] != tm.proj+"/copy1" {
			t.Errorf("a change of the copy job: %v", c)
		}
	}
	if len(h) != 3 {
		t.Errorf("the copy job's history: %d changes, want 3", len(h))
	}
	if all := tm.want(200, "cur", "GET", "/api/v1/lake/history?task="+taskID, nil)["changes"].([]any); len(all) != 6 {
		t.Errorf("the task's history: %d changes, want 6 (3 uploads, 3 copy saves)", len(all))
	}
	tm.want(400, "cur", "GET", "/api/v1/lake/history?job=2", nil)
	a := agreementOf("")
	f1s := map[string]float64{}
	for _, f := range a["frames"].([]any) {
		f := f.(map[string]any)
		f1s[f["key"].(string)] = f["f1"].(float64)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if a["measuredFrames"].(float64) != 3 || !near(f1s[names[0]], 1) || !near(f1s[names[1]], 0) ||
		!near(f1s[names[2]], 2.0/3) || !near(a["byLabel"].(map[string]any)["car"].(float64), 4.0/7) ||
		!near(a["f1"].(float64), 4.0/7) || a["kappa"] != nil {
		t.Fatalf("agreement: %v", a)
	}
	for _, c := range []struct {
		query string
		want  []string
	}{{"", []string{names[1], names[2]}}, {"?threshold=0.5", []string{names[1]}}, {"?threshold=0.01", []string{names[1]}}} {
		var got []string
		for _, k := range agreementOf(c.query)["review"].([]any) {
			got = append(got, k.(string))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("review queue %s: %v, want %v", c.query, got, c.want)
		}
	}
	tm.want(400, "cur", "GET", path+"/agreement?threshold=2", nil)
	tm.want(403, "eve", "GET", path+"/agreement", nil)

	// The consensus of the third frame keeps the car both drew.
	// Through the Go client, as a script would.
	c := client.New(tm.base, tm.keys["cur"][0], tm.keys["cur"][1])
	if a, err := c.Agreement(tm.ctx, tm.proj, 0.5, 0); err != nil || a.MeasuredFrames != 3 || len(a.Review) != 1 ||
		a.Review[0] != names[1] || len(a.Frames) != 3 {
		t.Fatalf("the client's agreement: %+v %v", a, err)
	}
	cons, err := c.AcceptConsensus(tm.ctx, tm.proj, names[2])
	if err != nil || cons.Shapes != 1 || cons.Version < 2 || len(cons.Annotators) != 2 {
		t.Fatalf("consensus: %+v %v", cons, err)
	}
	// It is the frame's own answer already: a save that changes nothing is
	// no change in the history.
	h = tm.want(200, "cur", "GET", "/api/v1/lake/history?uniqueName="+names[2]+"&limit=1", nil)["changes"].([]any)
	if len(h) > 0 && strings.HasPrefix(h[0].(map[string]any)["via"].(string), "consensus") {
		t.Fatalf("a consensus equal to the frame's answer made a change: %v", h[0])
	}
	st := tm.want(200, "cur", "GET", path+"/frames/"+names[2]+"/annotations", nil)
	if n := len(st["annotations"].([]any)); n != 1 {
		t.Fatalf("the frame after its consensus: %d shapes, want 1", n)
	}
	// The second frame's consensus is empty: no car was drawn by both.
	tm.want(403, "rev", "POST", path+"/frames/"+names[1]+"/consensus", nil) // the job is not in review
	tm.want(200, main, "POST", "/api/v1/tasks/"+taskID+"/jobs/1/state", map[string]any{"state": "submitted"})
	tm.want(200, "rev", "POST", "/api/v1/tasks/"+taskID+"/jobs/1/state", map[string]any{"state": "in_review"})
	ok := tm.want(200, "rev", "POST", path+"/frames/"+names[1]+"/consensus", nil)
	ch := tm.want(200, "cur", "GET", "/api/v1/lake/history?uniqueName="+names[1]+"&limit=1", nil)["changes"].([]any)[0].(map[string]any)
	if ok["shapes"].(float64) != 0 || ch["who"] != "rev" /* the person, not their key's name */ || !strings.HasPrefix(ch["via"].(string), "consensus of ") ||
		len(ch["removed"].([]any)) != 1 {
		t.Fatalf("the reviewer's consensus: %v, change %v", ok, ch)
	}
	tm.want(404, "cur", "POST", path+"/frames/nothing.jpg/consensus", nil)
	tm.want(403, main, "POST", path+"/frames/"+names[0]+"/consensus", nil) // an annotator accepts none
}
