package main_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/framelake/framelake/client"
)

// TestWebAppShapesPages checks that the pages outside the workspace draw
// every shape (issue 33, web/ui/test/shapespages.mjs): frame 0 of
// shapesTask holds a polygon with a hole, a mask, keypoints of a declared
// skeleton and a polyline; the grid tile, the item view, the review crops of
// each label and an evaluation's examples each draw them, checked by the
// canvas's pixels (inside the polygon and not in its hole, inside the mask,
// on the skeleton's edge between two points and not beside it; in the
// evaluation, in the outcome's colour). The sign-in page of a server without
// single sign-on has no SSO button.
func TestWebAppShapesPages(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	task := s.shapesTask(t)
	names := task["names"].([]string)
	// An evaluation of fixedDetector's boxes (truck, bike) against frame 0's
	// shapes: no label matches, so every human shape is a miss (fn) and both
	// boxes false positives.
	only := fmt.Sprintf("uniqueName = %q", names[0])
	s.machineBoxes(t, only)
	ctx := context.Background()
	admin := client.New(s.base, s.admin["key"], s.admin["secret"])
	var runs struct{ RunList []struct{ RunID string } }
	s.call(t, s.read, "GET", "/api/v1/runs", "", nil, &runs)
	job, err := admin.EvaluateDetections(ctx, client.EvaluationRequest{PredRunID: runs.RunList[0].RunID, Key: "shapes",
		GTOperations: []string{task["projectId"].(string)}, Query: only})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := admin.WaitJob(ctx, job); err != nil || j.Status != "completed" {
		t.Fatalf("evaluation: %+v %v", j, err)
	}
	task["evalKey"] = "shapes"
	// A dataset version of frame 0's shapes, for the dataset page's counts by type.
	build, err := admin.CreateDatasetFromDatalake(ctx, "shape-counts", "image", client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car", "road", "person"}, Query: only,
		OperationList: []string{task["projectId"].(string)}})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := admin.WaitJob(ctx, build.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("dataset build: %+v %v", j, err)
	}
	task["datasetId"] = build.DatasetID
	s.browserCheck(t, "shapespages.mjs", s.admin, task, shotsDir(t, "shapes-pages"))
}

// TestWebAppTeamPages looks at the team's pages as an annotator, a reviewer
// and a curator (web/ui/test/teampages.mjs): the sign-in page of a server
// with single sign-on (a real OpenID provider on loopback) shows "Sign in
// with SSO", leading to the provider; after the reviewer rejects a job the
// annotator's job header follows the job's state (no stale "job
// submitted"); and no link on any page a role is shown leads to a page
// whose requests answer 403.
func TestWebAppTeamPages(t *testing.T) {
	needBrowser(t)
	issuer := startProvider(t)
	s := startUIServer(t, "--oidc-issuer", issuer, "--oidc-client-id", "framelake", "--oidc-client-secret", "fl-secret",
		"--oidc-redirect-url", "http://127.0.0.1:1/api/v1/session/oidc/callback", "--oidc-role-map", "labelers=annotator")
	task := s.boxedTask(t, "pages", 2, 640, 480, 1, []string{"car", "person"})
	pid := task["projectId"].(string)
	for _, u := range [][2]string{{"ana", "annotator"}, {"rev", "reviewer"}, {"cur", "curator"}} {
		s.call(t, s.admin, "POST", "/api/v1/users", "application/json",
			strings.NewReader(fmt.Sprintf(`{"name":%q,"password":"correct horse battery","role":%q}`, u[0], u[1])), nil)
		if u[1] != "curator" {
			s.call(t, s.admin, "PUT", "/api/v1/projects/"+pid+"/members/"+u[0], "application/json",
				strings.NewReader(fmt.Sprintf(`{"role":%q}`, u[1])), nil)
		}
	}
	s.call(t, s.admin, "POST", "/api/v1/tasks/"+task["taskId"].(string)+"/jobs", "application/json",
		strings.NewReader(`{"size":2,"assignees":["ana"]}`), nil)
	task["issuer"] = issuer
	s.browserCheck(t, "teampages.mjs", s.admin, task, shotsDir(t, "shapes-pages-team"))
}

// startProvider serves a real OpenID provider (zitadel's example) on
// loopback with framelake's client; the sign-in page only needs it to exist.
func startProvider(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	storage.RegisterClients(storage.WebClient("framelake", "fl-secret", "http://127.0.0.1:1/api/v1/session/oidc/callback"))
	srv := &http.Server{Handler: exampleop.SetupServer(issuer, storage.NewStorage(storage.NewUserStore(issuer)), nil, false),
		ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return issuer
}
