package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestFrameHistory: every change people make to a frame's shapes is kept
// with who made it and through what; a change that changes nothing is not;
// each change's shapes read back as they were right after it.
func TestFrameHistory(t *testing.T) {
	ctx := context.Background()
	s := startUIServer(t)
	c := client.New(s.base, s.admin["key"], s.admin["secret"])
	res, err := c.UploadFiles(ctx, client.UploadOptions{}, bytesFile("street.jpg", testmedia.JPEG(200, 100, 1)))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	name := res.Stored[0].UniqueName
	pid, err := c.CreateProject(ctx, client.Project{Name: "street", ContentType: 2,
		Labels: []client.Label{{Name: "car"}, {Name: "person"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The frame enters the project as a task of lake images.
	s.call(t, s.admin, "POST", "/api/v1/projects/"+pid+"/tasks", "application/json",
		strings.NewReader(`{"taskName": "street", "uniqueNames": ["`+name+`"], "startFrom": "empty"}`), nil)
	car := client.Box{Label: "car", X: 10, Y: 10, Width: 50, Height: 30}
	person := client.Box{Label: "person", X: 100, Y: 20, Width: 20, Height: 60}
	for _, boxes := range [][]client.Box{{car}, {car, person}, {car, person}} { // the third saves nothing new
		if _, err := c.ReplaceFrameAnnotations(ctx, pid, name, boxes); err != nil {
			t.Fatal(err)
		}
	}
	// A person in the web app moves the car.
	resp, _ := http.Post(s.base+"/api/v1/session", "application/json",
		strings.NewReader(`{"name": "admin", "password": "`+s.admin["password"]+`"}`))
	var sess struct {
		CSRF string `json:"csrfToken"`
	}
	json.NewDecoder(resp.Body).Decode(&sess)
	resp.Body.Close()
	moved := `[{"label": "car", "x": 15, "y": 10, "width": 50, "height": 30}, {"label": "person", "x": 100, "y": 20, "width": 20, "height": 60}]`
	req, _ := http.NewRequest("PUT", s.base+"/api/v1/projects/"+pid+"/frames/"+name+"/annotations", strings.NewReader(moved))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", sess.CSRF)
	for _, ck := range resp.Cookies() {
		req.AddCookie(ck)
	}
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
		t.Fatalf("the web app's save: %v %v", r, err)
	}

	var h struct {
		Changes []struct {
			ID, Who, Via   string
			Frame          int
			Removed, Added []struct {
				Label string
				X     float64
			}
		}
	}
	s.call(t, s.read, "GET", "/api/v1/lake/history?uniqueName="+name, "", nil, &h)
	if len(h.Changes) != 3 {
		t.Fatalf("%d changes, want 3 (an unchanged save is none): %+v", len(h.Changes), h)
	}
	latest, first := h.Changes[0], h.Changes[2]
	if latest.Via != "web app" || latest.Who != "admin" || len(latest.Removed) != 1 || latest.Removed[0].X != 10 ||
		len(latest.Added) != 1 || latest.Added[0].X != 15 {
		t.Errorf("the move: %+v", latest)
	}
	if !strings.HasPrefix(first.Via, "api key "+s.admin["key"]) || len(first.Added) != 1 || first.Added[0].Label != "car" {
		t.Errorf("the first save: %+v", first)
	}
	var v struct {
		Shapes []struct{ Label string }
	}
	s.call(t, s.read, "GET", "/api/v1/lake/history/"+h.Changes[1].ID+"/shapes", "", nil, &v)
	if len(v.Shapes) != 2 {
		t.Errorf("the frame after the second save: %+v", v)
	}
	s.call(t, s.read, "GET", "/api/v1/lake/history?who=nobody", "", nil, &h)
	if len(h.Changes) != 0 {
		t.Errorf("nobody's changes: %+v", h)
	}
}
