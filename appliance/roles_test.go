package appliance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/web"
)

// teamProject is one project of the team fixture: its id, one task (upload
// session) and the frames uploaded into it.
type teamProject struct {
	id, upload, task string
	frames           []string
}

// team is a lake with projects A and B and one person per role, each with
// an API key of their own (a person's key acts with the person's rights).
type team struct {
	a, b    teamProject
	comment string          // a comment on A's first frame
	creds   map[string]cred // by teamRoles' names
}

// teamRoles are the callers the table test tries on every route: the
// members are members of project A; the non-members are the same roles in
// project B only; the disabled person was an annotator of A.
var teamRoles = []string{"admin", "curator", "annotator-member", "annotator-non-member", "reviewer-member",
	"reviewer-non-member", "viewer", "disabled", "none"}

func (e *env) teamProject(t *testing.T, name string, seed int) teamProject {
	t.Helper()
	ctx := context.Background()
	id, err := e.write.CreateProject(ctx, client.Project{Name: name, ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}, {Name: "bus"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := teamProject{id: id}
	up, err := e.write.InitializeUpload(ctx, id, "frames-"+name, 2)
	if err != nil {
		t.Fatal(err)
	}
	p.upload = up.UploadID
	for i := range 2 {
		r, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{
			File:  memFile(fmt.Sprintf("%s%d.jpg", name, i), testmedia.JPEG(64, 48, seed+i)),
			Boxes: []client.Box{{Label: "car", X: 2, Y: 3, Width: 20, Height: 10}}})
		if err != nil {
			t.Fatal(err)
		}
		p.frames = append(p.frames, r.UniqueName)
	}
	tasks, err := e.write.TaskList(ctx, client.TaskListOptions{ProjectID: id})
	if err != nil || len(tasks.TaskList) != 1 {
		t.Fatalf("tasks of %s: %+v %v", name, tasks, err)
	}
	p.task = tasks.TaskList[0].ID
	return p
}

func (e *env) team(t *testing.T) team {
	t.Helper()
	ctx := context.Background()
	tm := team{a: e.teamProject(t, "A", 10), b: e.teamProject(t, "B", 20), creds: map[string]cred{"none": {}}}
	people := []struct {
		name    string
		role    auth.Role
		project string // member of
	}{
		{"admin", auth.Admin, ""}, {"curator", auth.Curator, ""}, {"viewer", auth.Viewer, ""},
		{"annotator-member", auth.Annotator, tm.a.id}, {"annotator-non-member", auth.Annotator, tm.b.id},
		{"reviewer-member", auth.Reviewer, tm.a.id}, {"reviewer-non-member", auth.Reviewer, tm.b.id},
		{"disabled", auth.Annotator, tm.a.id},
	}
	for _, p := range people {
		if _, err := e.a.Keys.CreateUser(ctx, "p-"+p.name, "a long enough password", p.role); err != nil {
			t.Fatal(err)
		}
		k, secret, err := e.a.Keys.CreateUserKey(ctx, "p-"+p.name, p.name+"'s key", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		tm.creds[p.name] = cred{k.Key, secret}
		if p.project != "" {
			body := `{"role": "` + string(p.role) + `"}`
			if st, b := e.hostile(t, tm.creds["curator"], "PUT", "/api/v1/projects/"+p.project+"/members/p-"+p.name,
				"application/json", strings.NewReader(body)); st != 200 {
				t.Fatalf("member %s: %d %s", p.name, st, b)
			}
		}
	}
	// The annotator of A holds a job of A's task, so the frame routes'
	// own check (annotators edit the frames of their jobs) lets them in.
	if st, b := e.hostile(t, tm.creds["curator"], "POST", "/api/v1/tasks/"+tm.a.task+"/jobs", "application/json",
		strings.NewReader(`{"size": 10, "assignees": ["p-annotator-member"]}`)); st != 200 {
		t.Fatalf("jobs of A: %d %s", st, b)
	}
	st, b := e.hostile(t, tm.creds["curator"], "POST", "/api/v1/projects/"+tm.a.id+"/frames/"+tm.a.frames[0]+"/comments",
		"application/json", strings.NewReader(`{"text": "box too loose"}`))
	var cm struct{ ID string }
	if err := json.Unmarshal(b, &cm); st != 200 || err != nil || cm.ID == "" {
		t.Fatalf("comment on A: %d %s", st, b)
	}
	tm.comment = cm.ID
	off := true
	if _, err := e.a.Keys.UpdateUser(ctx, "p-disabled", auth.UserChange{Disabled: &off}); err != nil {
		t.Fatal(err)
	}
	return tm
}

// fill puts project A's ids in a route's path. A DELETE gets placeholders
// throughout: those allowed to delete answer 404 instead of emptying the
// fixture, and the refusals come before any lookup.
func (tm team) fill(method, path string) string {
	if method == http.MethodDelete {
		return pathParam.ReplaceAllString(path, "x_hostile")
	}
	switch path { // listings that name their project in the query
	case "/api/v1/tasks":
		return path + "?projectId=" + tm.a.id
	case "/api/v1/lake/history":
		return path + "?project=" + tm.a.id
	}
	ids := map[string]string{":projectId": tm.a.id, ":taskId": tm.a.task, ":uniqueName": tm.a.frames[0],
		":uploadId": tm.a.upload, ":number": "1", ":frame": "0", ":size": "64", ":commentId": tm.comment}
	return pathParam.ReplaceAllStringFunc(path, func(p string) string {
		if v, ok := ids[p]; ok {
			return v
		}
		return "x_hostile"
	})
}

// verdict is what a rule says of a caller: allow (any status but 401 and
// 403), 401, 403, or either of allow and 403 (the handler decides by the
// body: a job's state, a comment's author).
type verdict string

const (
	allow  verdict = "allowed"
	unauth verdict = "401"
	denied verdict = "403"
	either verdict = "allowed or 403"
)

// ruleVerdict is the route table's vocabulary (routeAccess) as a verdict
// per caller.
func ruleVerdict(t *testing.T, rule, role string) verdict {
	switch role {
	case "none", "disabled":
		return unauth
	case "admin", "curator":
		if rule == "admin" && role == "curator" {
			return denied
		}
		return allow
	}
	yes := func(ok bool) verdict {
		if ok {
			return allow
		}
		return denied
	}
	switch rule {
	case "own":
		return allow
	case "viewer", "project:view":
		return yes(role == "viewer" || (rule == "project:view" && strings.HasSuffix(role, "-member") && !strings.Contains(role, "non")))
	case "curator", "admin", "project:curate":
		return denied
	case "project:annotate":
		return yes(role == "annotator-member")
	case "project:review":
		return yes(role == "reviewer-member")
	case "project:member":
		if strings.HasSuffix(role, "non-member") {
			return denied
		}
		return either
	}
	t.Fatalf("routeAccess rule %q is not one of public, signed, sign-in, own, viewer, curator, admin, "+
		"project:view, project:annotate, project:review, project:curate, project:member (read is viewer, write curator)", rule)
	return ""
}

// TestEveryRoleOnEveryRoute walks the router's routes against the real
// server with every caller of the team (teamRoles), each with project A's
// real ids in the path, and checks allowed against 401/403 exactly as the
// route's rule in routeAccess says.
func TestEveryRoleOnEveryRoute(t *testing.T) {
	e := start(t, appliance.Config{})
	tm := e.team(t)
	for _, r := range web.Routes() {
		name := r.Method + " " + r.Path
		rule, ok := routeAccess[name]
		if !ok {
			continue // TestEveryRouteRefusesStrangers names it
		}
		switch rule {
		case "public", "sign-in", "signed":
			continue // no key decides these: TestEveryRouteRefusesStrangers and the leak test walk them
		}
		path := tm.fill(r.Method, r.Path)
		for _, role := range teamRoles {
			want := ruleVerdict(t, rule, role)
			got, body := e.hostile(t, tm.creds[role], r.Method, path, "application/json", strings.NewReader("{}"))
			ok := map[verdict]bool{allow: got != 401 && got != 403, unauth: got == 401, denied: got == 403,
				either: got != 401}[want]
			if !ok {
				t.Errorf("%s (%s) as %s: %d, want %s: %.200s", name, rule, role, got, want, body)
			}
			if r.Method == http.MethodGet { // HEAD answers as its GET, refusals included
				head, _ := e.hostile(t, tm.creds[role], http.MethodHead, path, "", nil)
				if (head == 401 || head == 403 || got == 401 || got == 403) && head != got {
					t.Errorf("HEAD %s as %s: %d, its GET %d", r.Path, role, head, got)
				}
			}
		}
	}
}

// TestAnnotatorCannotReadAnotherProject: an annotator of project A walks
// every GET route with A's ids and with B's, and every body they are given
// (media, thumbnail and crop links included) names none of B's frames;
// B's frames are refused through A's routes; links to B's frames made
// without a signature are refused.
func TestAnnotatorCannotReadAnotherProject(t *testing.T) {
	e := start(t, appliance.Config{})
	tm := e.team(t)
	ann := tm.creds["annotator-member"]
	mentionsB := func(body []byte) string {
		for _, f := range tm.b.frames {
			if strings.Contains(string(body), f) || strings.Contains(string(body), url.PathEscape(f)) {
				return f
			}
		}
		return ""
	}
	bIDs := strings.NewReplacer(tm.a.id, tm.b.id, tm.a.task, tm.b.task, tm.a.frames[0], tm.b.frames[0], tm.a.upload, tm.b.upload)
	reached := 0
	for _, r := range web.Routes() {
		if r.Method != http.MethodGet && !(r.Method == http.MethodPost && r.Function != "") {
			continue // reads: GET routes and the client functions (reads are POSTs there too)
		}
		a := tm.fill(r.Method, r.Path)
		for _, path := range []string{a, bIDs.Replace(a), a + "?projectId=" + tm.b.id + "&project=" + tm.b.id +
			"&uniqueName=" + tm.b.frames[0], a + "?projectId=" + tm.a.id} {
			body := `{"unique_name": "` + tm.b.frames[0] + `", "uniqueName": "` + tm.b.frames[0] + `"}`
			st, b := e.hostile(t, ann, r.Method, path, "application/json", strings.NewReader(body))
			if f := mentionsB(b); f != "" && st < 400 {
				t.Errorf("%s %s as A's annotator: %d names B's frame %s: %.300s", r.Method, path, st, f, b)
			}
			if st < 400 {
				reached++
			}
		}
	}
	if reached < 8 {
		t.Errorf("the annotator reached only %d routes: the walk saw too little to prove anything", reached)
	}
	// B's frame through A's frame routes, B's task and project directly.
	for _, path := range []string{
		"/api/v1/projects/" + tm.a.id + "/frames/" + tm.b.frames[0] + "/annotations",
		"/api/v1/projects/" + tm.b.id + "/frames/" + tm.b.frames[0] + "/annotations",
		"/api/v1/tasks/" + tm.b.task + "/frames", "/api/v1/tasks?projectId=" + tm.b.id,
		"/api/v1/projects/" + tm.b.id + "/annotations", "/api/v1/lake/files/" + tm.b.frames[0],
		"/api/v1/lake/items", "/api/v1/lake/history?project=" + tm.b.id + "&uniqueName=" + tm.b.frames[0],
		"/api/v1/lake/history?task=" + tm.b.task,
	} {
		if st, b := e.hostile(t, ann, "GET", path, "", nil); st != 403 && st != 404 {
			t.Errorf("GET %s as A's annotator: %d, want 403 or 404: %.200s", path, st, b)
		}
	}
	// Their project's history, asked about B's frame, answers none of it.
	st, b := e.hostile(t, ann, "GET", "/api/v1/lake/history?project="+tm.a.id+"&uniqueName="+tm.b.frames[0], "", nil)
	if st != 200 || mentionsB(b) != "" {
		t.Errorf("A's history asked about B's frame: %d %.300s", st, b)
	}
	st, b = e.hostile(t, ann, "GET", "/api/v1/lake/history?project="+tm.a.id, "", nil)
	if st != 200 || !strings.Contains(string(b), tm.a.frames[0]) || mentionsB(b) != "" {
		t.Errorf("A's history to A's annotator: %d %.300s", st, b)
	}
	// Links: the annotator's own frames come signed; B's have no link they
	// could have been given, and a made-up one is refused.
	st, b = e.hostile(t, ann, "GET", "/api/v1/tasks/"+tm.a.task+"/frames", "", nil)
	if st != 200 || !strings.Contains(string(b), tm.a.frames[0]) {
		t.Fatalf("A's annotator reads A's task frames: %d %.300s", st, b)
	}
	links := regexp.MustCompile(`https?://[^"]+`).FindAllString(string(b), -1)
	if len(links) == 0 {
		t.Fatalf("no media link in A's task frames: %.300s", b)
	}
	for _, link := range links {
		if f := mentionsB([]byte(link)); f != "" {
			t.Errorf("a link to B's frame %s: %s", f, link)
		}
		forged := strings.Replace(link, url.PathEscape(tm.a.frames[0]), url.PathEscape(tm.b.frames[0]), 1)
		forged = strings.Replace(forged, url.PathEscape(tm.a.frames[1]), url.PathEscape(tm.b.frames[0]), 1)
		if forged == link {
			continue
		}
		if st, _ := e.hostile(t, cred{}, "GET", strings.TrimPrefix(forged, e.base), "", nil); st != 401 && st != 403 {
			t.Errorf("A's signature on B's frame (%s): %d, want 401 or 403", forged, st)
		}
	}
	for _, p := range []string{"/media/", "/thumbs/64/", "/crops/64/"} {
		if st, _ := e.hostile(t, cred{}, "GET", p+url.PathEscape(tm.b.frames[0]), "", nil); st != 401 && st != 403 {
			t.Errorf("%s of B's frame unsigned: %d", p, st)
		}
	}
	var me struct {
		Memberships []auth.Member `json:"memberships"`
	}
	_, b = e.hostile(t, ann, "GET", "/api/v1/session", "", nil)
	if err := json.Unmarshal(b, &me); err != nil || len(me.Memberships) != 1 || me.Memberships[0].ProjectID != tm.a.id {
		t.Errorf("the annotator's memberships: %s %v", b, err)
	}
}

// signIn posts a name and password (with a cookie the browser already had,
// if any) and answers the new session's cookie and CSRF token.
func (e *env) signIn(t *testing.T, name, password, cookie string) (*http.Cookie, string, int) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.base+"/api/v1/session", strings.NewReader(`{"name": "`+name+`", "password": "`+password+`"}`))
	req.Header.Set("Content-Type", "application/json")
	if cookie != "" {
		req.Header.Set("Cookie", "framelake_session="+cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		CSRF string `json:"csrfToken"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	for _, c := range resp.Cookies() {
		if c.Name == "framelake_session" {
			return c, body.CSRF, resp.StatusCode
		}
	}
	return nil, body.CSRF, resp.StatusCode
}

// withCookie sends a request signed in by cookie, with a CSRF token and an
// Origin when given, and answers its status and body.
func (e *env) withCookie(t *testing.T, method, path, cookie, csrf, origin, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Cookie", "framelake_session="+cookie)
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAnnotatorSessionAsAnAttacker: an annotator signed in by cookie acts
// in their project and nowhere else; a cookie planted before sign-in (even
// a live one of the attacker's own) is not the victim's session after it;
// a write from a foreign origin without the token is refused; sign-out ends
// the session on the server; disabling the person refuses their live
// session and their key at the next request.
func TestAnnotatorSessionAsAnAttacker(t *testing.T) {
	e := start(t, appliance.Config{})
	tm := e.team(t)
	const pw = "a long enough password"
	planted, _, st := e.signIn(t, "p-annotator-non-member", pw, "")
	if st != 200 || planted == nil {
		t.Fatalf("the attacker signs in: %d", st)
	}
	ck, csrf, st := e.signIn(t, "p-annotator-member", pw, planted.Value)
	if st != 200 || ck == nil || ck.Value == planted.Value || csrf == "" {
		t.Fatalf("sign in over a planted cookie: %d %+v", st, ck)
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure {
		t.Errorf("cookie flags: %+v (HttpOnly, SameSite=Strict, Path /; Secure only over TLS)", ck)
	}
	if _, b := e.withCookie(t, "GET", "/api/v1/session", planted.Value, "", "", ""); !strings.Contains(b, `"p-annotator-non-member"`) ||
		strings.Contains(b, `"p-annotator-member"`) {
		t.Errorf("the planted cookie became the victim's session: %s", b)
	}
	frame := "/api/v1/projects/" + tm.a.id + "/frames/" + tm.a.frames[0] + "/annotations"
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/v1/projects/" + tm.a.id, 200}, {"GET", frame, 200},
		{"GET", "/api/v1/projects/" + tm.b.id, 403}, {"GET", "/api/v1/lake/items", 403},
		{"GET", "/api/v1/tasks?projectId=" + tm.b.id, 403}, {"GET", "/api/v1/datasets", 403},
	} {
		if got, b := e.withCookie(t, c.method, c.path, ck.Value, "", "", ""); got != c.want {
			t.Errorf("%s %s by cookie: %d, want %d: %.200s", c.method, c.path, got, c.want, b)
		}
	}
	save := `[{"label": "car", "x": 1, "y": 1, "width": 5, "height": 5}]`
	if got, _ := e.withCookie(t, "PUT", frame, ck.Value, "", "http://evil.example", save); got != 403 {
		t.Errorf("a save from a foreign origin without the token: %d, want 403", got)
	}
	if got, b := e.withCookie(t, "PUT", frame, ck.Value, csrf, "", save); got != 200 {
		t.Errorf("the annotator saves a frame of their job: %d %.300s", got, b)
	}
	if got, _ := e.withCookie(t, "DELETE", "/api/v1/session", ck.Value, csrf, "", ""); got != 204 {
		t.Errorf("sign out: %d", got)
	}
	if got, _ := e.withCookie(t, "GET", "/api/v1/projects/"+tm.a.id, ck.Value, "", "", ""); got != 401 {
		t.Errorf("the cookie after sign-out: %d, want 401", got)
	}
	// Disabled while signed in and holding a key: both refused at once.
	ck, _, _ = e.signIn(t, "p-reviewer-member", pw, "")
	key := tm.creds["reviewer-member"]
	for _, want := range []int{200, 401} {
		if got, _ := e.withCookie(t, "GET", "/api/v1/projects/"+tm.a.id, ck.Value, "", "", ""); got != want {
			t.Errorf("the reviewer's session: %d, want %d", got, want)
		}
		if got, _ := e.hostile(t, key, "GET", "/api/v1/projects/"+tm.a.id, "", nil); got != want {
			t.Errorf("the reviewer's key: %d, want %d", got, want)
		}
		st, b := e.hostile(t, tm.creds["admin"], "PATCH", "/api/v1/users/p-reviewer-member", "application/json",
			strings.NewReader(`{"disabled": true}`))
		if want == 200 && st != 200 {
			t.Fatalf("disable: %d %s", st, b)
		}
	}
}

// TestDeletedProjectLeavesNoMember: deleting a project removes its
// memberships, so no row is left that could grant anything; an annotator's
// own key saves a frame of their job (the key acts as its person).
func TestDeletedProjectLeavesNoMember(t *testing.T) {
	e := start(t, appliance.Config{})
	tm := e.team(t)
	ctx := context.Background()
	frame := "/api/v1/projects/" + tm.a.id + "/frames/" + tm.a.frames[1] + "/annotations"
	if st, b := e.hostile(t, tm.creds["annotator-member"], "PUT", frame, "application/json",
		strings.NewReader(`[{"label": "bus", "x": 1, "y": 1, "width": 5, "height": 5}]`)); st != 200 {
		t.Errorf("the annotator's key saves a frame of their job: %d %.300s", st, b)
	}
	if ms, err := e.a.Keys.Members(ctx, tm.a.id); err != nil || len(ms) != 3 {
		t.Fatalf("A's members: %+v %v", ms, err)
	}
	if st, b := e.hostile(t, tm.creds["curator"], "DELETE", "/api/v1/projects/"+tm.a.id, "", nil); st != 200 {
		t.Fatalf("delete A: %d %s", st, b)
	}
	if ms, err := e.a.Keys.Members(ctx, tm.a.id); err != nil || len(ms) != 0 {
		t.Errorf("A's members after A went: %+v %v", ms, err)
	}
	if ms, err := e.a.Keys.Memberships(ctx, "p-annotator-non-member"); err != nil || len(ms) != 1 {
		t.Errorf("B's members stay: %+v %v", ms, err)
	}
	if st, _ := e.hostile(t, tm.creds["annotator-member"], "GET", "/api/v1/projects/"+tm.a.id, "", nil); st != 403 {
		t.Errorf("A's former annotator asks for A: %d, want 403", st)
	}
}
