package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
)

// team is a real appliance on loopback with a project, a curator's key and
// people (annotators and reviewers, members of the project) with keys.
type team struct {
	t     *testing.T
	ctx   context.Context
	a     *appliance.Appliance
	base  string
	keys  map[string][2]string // person → key, secret
	proj  string
	http  http.Client
	mu    sync.Mutex
	names []string
}

func startTeam(t *testing.T) *team {
	t.Helper()
	ctx, a := serveAppliance(t, appliance.Config{JobWorkers: -1})
	tm := &team{t: t, ctx: ctx, a: a, base: "http://" + a.Addr(), keys: map[string][2]string{},
		http: http.Client{Timeout: 30 * time.Second}}
	k, secret, err := a.Keys.Create(ctx, "cur", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	tm.keys["cur"] = [2]string{k.Key, secret}
	p, err := a.Annotate.CreateProject(ctx, annotate.NewProject{Name: "streets", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	tm.proj = p.ID
	return tm
}

// person adds a user of role with a key, a member of the project when member.
func (tm *team) person(name string, role auth.Role, member bool) {
	tm.t.Helper()
	if _, err := tm.a.Keys.CreateUser(tm.ctx, name, "a long password", role); err != nil {
		tm.t.Fatal(err)
	}
	k, secret, err := tm.a.Keys.CreateUserKey(tm.ctx, name, "key-"+name, "", 0)
	if err != nil {
		tm.t.Fatal(err)
	}
	if member {
		if _, err := tm.a.Keys.SetMember(tm.ctx, tm.proj, name, role); err != nil {
			tm.t.Fatal(err)
		}
	}
	tm.mu.Lock()
	tm.keys[name] = [2]string{k.Key, secret}
	tm.mu.Unlock()
}

// task uploads a task of n frames, each with one car, and answers its id and
// the frames' names.
func (tm *team) task(name string, n int) (string, []string) {
	tm.t.Helper()
	sess, err := tm.a.Annotate.InitializeUpload(tm.ctx, tm.proj, name, n)
	if err != nil {
		tm.t.Fatal(err)
	}
	var names []string
	for i := range n {
		b := testmedia.JPEG(64, 48, i+1)
		r, err := tm.a.Annotate.UploadFrame(tm.ctx, sess.ID, annotate.Frame{Name: fmt.Sprintf("f%d.jpg", i),
			Boxes: []annotate.Box{{Label: "car", X: 1, Y: 1, Width: 10, Height: 10}},
			Open:  func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
		if err != nil {
			tm.t.Fatal(err)
		}
		names = append(names, r.UniqueName)
	}
	return sess.TaskID, names
}

// do sends body as who and answers the status and the decoded JSON body.
func (tm *team) do(who, method, path string, body any) (int, map[string]any) {
	tm.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, tm.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	tm.mu.Lock()
	k := tm.keys[who]
	tm.mu.Unlock()
	req.Header.Set("key", k[0])
	req.Header.Set("secret", k[1])
	resp, err := tm.http.Do(req)
	if err != nil {
		tm.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		json.Unmarshal(b, &out)
	}
	return resp.StatusCode, out
}

// want fails unless the call answers status; it answers the body.
func (tm *team) want(status int, who, method, path string, body any) map[string]any {
	tm.t.Helper()
	got, out := tm.do(who, method, path, body)
	if got != status {
		tm.t.Fatalf("%s %s %s: %d %v, want %d", who, method, path, got, out, status)
	}
	return out
}

func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// TestLabelJobsOverHTTP walks the team's flow through a real server: a
// curator cuts a task into jobs; an annotator writes only their job's frames
// and not once submitted; a reviewer comments on a shape and rejects; the
// annotator sees it first in their queue, resolves the comment, fixes and
// resubmits; the reviewer accepts. Wrong moves and wrong people are refused.
func TestLabelJobsOverHTTP(t *testing.T) {
	tm := startTeam(t)
	tm.person("ana", auth.Annotator, true)
	tm.person("ben", auth.Annotator, true)
	tm.person("rev", auth.Reviewer, true)
	tm.person("eve", auth.Annotator, false)
	taskID, names := tm.task("morning", 4)
	jobs := tm.want(200, "cur", "POST", "/api/v1/tasks/"+taskID+"/jobs", map[string]any{"size": 2, "assignees": []string{"ana", "ben"}})
	if js := jobs["jobs"].([]any); len(js) != 2 || js[1].(map[string]any)["assignee"] != "ben" {
		t.Fatalf("jobs: %v", jobs)
	}
	tm.want(403, "ana", "POST", "/api/v1/tasks/"+taskID+"/jobs", map[string]any{"size": 1, "replace": true})
	tm.want(403, "eve", "GET", "/api/v1/tasks/"+taskID+"/jobs", nil)

	frame := func(i int) string { return "/api/v1/projects/" + tm.proj + "/frames/" + url.PathEscape(names[i]) }
	car := func(x float64) []map[string]any {
		return []map[string]any{{"label": "car", "x": x, "y": 2, "width": 12, "height": 9}}
	}
	out := tm.want(403, "ana", "PUT", frame(2)+"/annotations", car(3))
	if !strings.Contains(errMessage(out), "ben") {
		t.Fatalf("ana writes ben's frame: %v", out)
	}
	tm.want(200, "ana", "PUT", frame(0)+"/annotations", car(3))
	job1 := "/api/v1/tasks/" + taskID + "/jobs/1"
	tm.want(403, "ben", "POST", job1+"/state", map[string]any{"state": "submitted"})
	tm.want(200, "ana", "POST", job1+"/state", map[string]any{"state": "submitted"})
	out = tm.want(409, "ana", "PUT", frame(0)+"/annotations", car(4))
	if !strings.Contains(errMessage(out), "submitted") {
		t.Fatalf("write to a submitted job: %v", out)
	}
	out = tm.want(409, "rev", "POST", job1+"/state", map[string]any{"state": "accepted"})
	if !strings.Contains(errMessage(out), "submitted") {
		t.Fatalf("accept a submitted job: %v", out)
	}
	if q := tm.want(200, "rev", "GET", "/api/v1/queue", nil)["jobs"].([]any); len(q) != 1 || q[0].(map[string]any)["action"] != "review" {
		t.Fatalf("reviewer's queue: %v", q)
	}
	tm.want(403, "rev", "PUT", frame(2)+"/annotations", car(5)) // ben's job, in annotation
	tm.want(200, "rev", "POST", job1+"/state", map[string]any{"state": "in_review"})
	tm.want(200, "rev", "PUT", frame(1)+"/annotations", car(1)) // edits where quicker

	shapes := tm.want(200, "rev", "GET", frame(0)+"/annotations", nil)["annotations"].([]any)
	shapeID := shapes[0].(map[string]any)["id"]
	cm := tm.want(200, "rev", "POST", frame(0)+"/comments", map[string]any{"text": "box too loose", "shapeId": shapeID})
	if cm["job"] != float64(1) || cm["author"] != "rev" || cm["shape"].(map[string]any)["x"] != float64(3) || cm["resolved"] != false {
		t.Fatalf("comment: %v", cm)
	}
	tm.want(404, "rev", "POST", frame(0)+"/comments", map[string]any{"text": "x", "shapeId": "ann_nope"})
	tm.want(200, "rev", "POST", job1+"/state", map[string]any{"state": "rejected", "note": "see the comment",
		"frames": map[string]string{names[0]: "rejected", names[1]: "accepted"}})

	q := tm.want(200, "ana", "GET", "/api/v1/queue", nil)["jobs"].([]any)
	if len(q) != 1 || q[0].(map[string]any)["action"] != "fix" || q[0].(map[string]any)["openComments"] != float64(1) {
		t.Fatalf("ana's queue: %v", q)
	}
	cs := tm.want(200, "ana", "GET", job1+"/comments", nil)["comments"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["text"] != "box too loose" {
		t.Fatalf("ana's job comments: %v", cs)
	}
	comment := "/api/v1/comments/" + cm["id"].(string)
	tm.want(403, "ben", "PATCH", comment, map[string]any{"resolved": true})
	tm.want(200, "ana", "PUT", frame(0)+"/annotations", car(2))
	if r := tm.want(200, "ana", "PATCH", comment, map[string]any{"resolved": true}); r["resolvedBy"] != "ana" || r["resolved"] != true {
		t.Fatalf("resolved: %v", r)
	}
	tm.want(200, "ana", "POST", job1+"/state", map[string]any{"state": "submitted", "note": "fixed"})
	tm.want(200, "rev", "POST", job1+"/state", map[string]any{"state": "in_review"})
	j := tm.want(200, "rev", "POST", job1+"/state", map[string]any{"state": "accepted"})
	if j["state"] != "accepted" || len(j["events"].([]any)) != 8 {
		t.Fatalf("accepted job: %v", j)
	}
	task := tm.want(200, "cur", "GET", "/api/v1/tasks/"+taskID, nil)
	if task["status"] != float64(1) {
		t.Fatalf("task with one of two jobs accepted: status %v", task["status"])
	}
	tm.want(200, "cur", "PATCH", "/api/v1/tasks/"+taskID+"/jobs/2", map[string]any{"assignee": "ana"})
	tm.want(403, "eve", "POST", "/api/v1/projects/"+tm.proj+"/jobs/next", nil)
}

// TestNextJobTwentyAtOnce: 20 annotators pull "next job" at the same moment
// through HTTP; each gets another job, and a 21st pull finds none.
func TestNextJobTwentyAtOnce(t *testing.T) {
	tm := startTeam(t)
	taskID, _ := tm.task("pull", 20)
	tm.want(200, "cur", "POST", "/api/v1/tasks/"+taskID+"/jobs", map[string]any{"size": 1})
	var who []string
	for i := range 21 {
		name := fmt.Sprintf("a%02d", i)
		tm.person(name, auth.Annotator, true)
		who = append(who, name)
	}
	type pull struct {
		status int
		number float64
	}
	got := make([]pull, 20)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			<-start
			status, out := tm.do(who[i], "POST", "/api/v1/projects/"+tm.proj+"/jobs/next", nil)
			n, _ := out["number"].(float64)
			got[i] = pull{status, n}
		})
	}
	close(start)
	wg.Wait()
	seen := map[float64]string{}
	for i, p := range got {
		if p.status != 200 || seen[p.number] != "" {
			t.Fatalf("%s: %d job %v (taken by %q)", who[i], p.status, p.number, seen[p.number])
		}
		seen[p.number] = who[i]
	}
	tm.want(404, who[20], "POST", "/api/v1/projects/"+tm.proj+"/jobs/next", nil)
	jobs := tm.want(200, "cur", "GET", "/api/v1/tasks/"+taskID+"/jobs", nil)["jobs"].([]any)
	for _, j := range jobs {
		jm := j.(map[string]any)
		if seen[jm["number"].(float64)] != jm["assignee"] {
			t.Fatalf("job %v held by %v, handed to %s", jm["number"], jm["assignee"], seen[jm["number"].(float64)])
		}
	}
}

// TestCopyJobOverHTTP: a copy job's holder reads and writes the frame
// through the workspace's routes and gets their own answer, kept apart from
// the project's (operation "<projectId>/copy1"), which the project's
// download still answers alone.
func TestCopyJobOverHTTP(t *testing.T) {
	tm := startTeam(t)
	tm.person("ana", auth.Annotator, true)
	tm.person("ben", auth.Annotator, true)
	taskID, _ := tm.task("twice", 2)
	tm.want(200, "cur", "POST", "/api/v1/tasks/"+taskID+"/jobs", map[string]any{"size": 2, "assignees": []string{"ana", "ben"},
		"overlap": map[string]any{"share": 0.5, "annotators": 2}, "seed": 1})
	cp := tm.want(200, "cur", "GET", "/api/v1/tasks/"+taskID+"/jobs/2", nil)
	if cp["copy"] != float64(1) || cp["assignee"] != "ben" || cp["frameCount"] != float64(1) {
		t.Fatalf("copy job: %v", cp)
	}
	name := cp["frames"].([]any)[0].(map[string]any)["uniqueName"].(string)
	path := "/api/v1/projects/" + tm.proj + "/frames/" + url.PathEscape(name) + "/annotations"
	if got := tm.want(200, "ben", "GET", path, nil); len(got["annotations"].([]any)) != 0 || got["version"] != float64(1) {
		t.Fatalf("ben's copy before his save: %v", got)
	}
	two := []map[string]any{{"label": "car", "x": 20, "y": 2, "width": 9, "height": 9}, {"label": "car", "x": 40, "y": 2, "width": 9, "height": 9}}
	if got := tm.want(200, "ben", "PUT", path, two); got["version"] != float64(2) {
		t.Fatalf("ben's copy save: %v", got)
	}
	if got := tm.want(200, "ben", "GET", path, nil); len(got["annotations"].([]any)) != 2 {
		t.Fatalf("ben's copy after his save: %v", got)
	}
	if got := tm.want(200, "ana", "GET", path, nil); len(got["annotations"].([]any)) != 1 {
		t.Fatalf("the project's answer, as ana sees it: %v", got)
	}
	d := tm.want(200, "cur", "GET", "/api/v1/projects/"+tm.proj+"/annotations?taskList="+taskID, nil)
	for _, fr := range d["data"].([]any)[0].(map[string]any)["frames"].([]any) {
		if n := len(fr.(map[string]any)["annotations"].([]any)); n != 1 {
			t.Fatalf("download of %v: %d boxes, copies leak", fr.(map[string]any)["uniqueName"], n)
		}
	}
}
