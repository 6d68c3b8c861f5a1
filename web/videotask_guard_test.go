package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// TestTrackEditCheckedInItsWrite: an annotator's track edit is allowed or
// refused by the jobs as they are when it is written. Ana's PUT of a track
// in her job arrives while another write holds the database; that write
// reassigns her job to Ben, and only then commits. The PUT, decided before
// the reassignment but written after it, must be refused (403) and write
// nothing; the same for a DELETE of her track once her job is submitted
// meanwhile (409 naming the state). Then the propagation progress route of
// the project (propagationProgress).
func TestTrackEditCheckedInItsWrite(t *testing.T) {
	tm := startTeam(t)
	vp, err := tm.a.Annotate.CreateProject(tm.ctx, annotate.NewProject{Name: "clips", ContentType: annotate.Video,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	tm.proj = vp.ID
	tm.person("ana", auth.Annotator, true)
	tm.person("ben", auth.Annotator, true)
	path := filepath.Join(t.TempDir(), "clip.mp4")
	if err := testmedia.Video(path, 64, 48, 5, 2); err != nil {
		t.Fatal(err) // ffmpeg missing: make test installs it
	}
	res, err := tm.a.Lake.Add(tm.ctx, lake.AddOptions{Collection: "clips"}, []lake.Upload{{Name: "clip.mp4",
		Open: func() (io.ReadCloser, error) { return os.Open(path) }}})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("add: %v %+v", err, res)
	}
	video := res.Stored[0].UniqueName
	task := tm.want(200, "cur", "POST", "/api/v1/projects/"+vp.ID+"/tasks",
		map[string]any{"taskName": "clip", "video": video, "lastFrame": 7, "every": 2})
	taskID := task["id"].(string)
	tm.want(200, "cur", "POST", "/api/v1/tasks/"+taskID+"/jobs", map[string]any{"size": 2, "assignees": []string{"ana", "ben"}})
	v := "/api/v1/projects/" + vp.ID + "/videos/" + url.PathEscape(video) + "/tracks/"
	track := map[string]any{"label": "car", "outside": []int{}, "keyframes": []map[string]any{
		{"frame": 0, "x": 0, "y": 10, "width": 20, "height": 20}, {"frame": 2, "x": 20, "y": 10, "width": 20, "height": 20}}}
	tm.want(200, "ana", "PUT", v+"1", track) // her job, frames 0-3

	// whileHeld sends ana's request while another write holds the database
	// and runs change in it, committing after the request has had time to
	// be checked; it answers the request's status.
	whileHeld := func(method, path string, body any, change string) int {
		held, done := make(chan struct{}), make(chan int, 1)
		txDone := make(chan error, 1)
		go func() {
			txDone <- tm.a.Lake.DB().Tx(context.Background(), func(tx *sql.Tx) error {
				close(held)
				time.Sleep(700 * time.Millisecond) // the request is checked (before the fix) and waits to write
				_, err := tx.Exec(change)
				return err
			})
		}()
		<-held
		go func() { done <- send(tm, "ana", method, path, body) }()
		if err := <-txDone; err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	moved := track
	moved["keyframes"] = []map[string]any{{"frame": 0, "x": 4, "y": 10, "width": 20, "height": 20}}
	if code := whileHeld("PUT", v+"1", moved, `UPDATE label_job SET assignee = 'ben' WHERE assignee = 'ana'`); code != 403 {
		t.Errorf("a PUT in a job reassigned before it was written: %d, want 403", code)
	}
	got := tm.want(200, "cur", "GET", v[:len(v)-1]+"?frame=0", nil)
	if sh, _ := got["shapes"].([]any); len(sh) != 1 || sh[0].(map[string]any)["x"] != 0.0 {
		t.Fatalf("frame 0 after the refused PUT: %v, want track 1 as ana first drew it (x 0)", got)
	}

	if _, err := tm.a.Lake.DB().W.Exec(`UPDATE label_job SET assignee = 'ana' WHERE number = 1`); err != nil {
		t.Fatal(err)
	}
	if code := whileHeld("DELETE", v+"1", nil, `UPDATE label_job SET state = 'submitted' WHERE assignee = 'ana'`); code != 409 {
		t.Errorf("a DELETE in a job submitted before it was written: %d, want 409", code)
	}
	if got := tm.want(200, "cur", "GET", v[:len(v)-1], nil); len(got["tracks"].([]any)) != 1 {
		t.Fatalf("tracks after the refused DELETE: %v", got)
	}
	propagationProgress(t, tm, vp.ID, video)
	propagationRechecked(t, tm, vp.ID, video)
	restoreRechecked(t, tm, vp.ID, video, whileHeld)
}

// restoreRechecked: a restore of a frame's keyframes asks the caller's role
// and the jobs inside its write. Ana's restore arrives while another write
// holds the database and ends her membership, then while one gives her job
// to ben: both are refused (403; before, both were checked before the
// write and let through); with both as they were, her restore is made.
func restoreRechecked(t *testing.T, tm *team, pid, video string, whileHeld func(method, path string, body any, change string) int) {
	hist := tm.want(200, "cur", "GET", "/api/v1/lake/history?"+url.Values{"uniqueName": {video}, "frame": {"0"},
		"project": {pid}}.Encode(), nil)
	changes, _ := hist["changes"].([]any)
	if len(changes) == 0 {
		t.Fatalf("frame 0's history: %v", hist)
	}
	restore := "/api/v1/lake/history/" + changes[len(changes)-1].(map[string]any)["id"].(string) + "/restore"
	if code := whileHeld("POST", restore, nil, `DELETE FROM project_member
		WHERE user_seq = (SELECT seq FROM user_account WHERE name = 'ana')`); code != 403 {
		t.Errorf("a restore by a member removed before it was written: %d, want 403", code)
	}
	if _, err := tm.a.Keys.SetMember(tm.ctx, pid, "ana", auth.Annotator); err != nil {
		t.Fatal(err)
	}
	if code := whileHeld("POST", restore, nil, `UPDATE label_job SET assignee = 'ben' WHERE assignee = 'ana'`); code != 403 {
		t.Errorf("a restore in a job reassigned before it was written: %d, want 403", code)
	}
	if _, err := tm.a.Lake.DB().W.Exec(`UPDATE label_job SET assignee = 'ana' WHERE number = 1`); err != nil {
		t.Fatal(err)
	}
	tm.want(200, "ana", "POST", restore, nil)
}

// propagationRechecked: a propagation's write is asked again, inside the
// write, under the rules its route checked when it was queued. Ana's
// propagation of the project's track is queued while she holds the job;
// the job is then given to ben; a lake operation's track is propagated and
// then deleted. When the workers start (startTeam starts none), both are
// refused with the reason and write nothing (before, ana's wrote into ben's
// job); given back to ana, her
// propagation writes its keyframe.
func propagationRechecked(t *testing.T, tm *team, pid, video string) {
	v := "/api/v1/projects/" + pid + "/videos/" + url.PathEscape(video)
	lakeTrack := "/api/v1/lake/files/" + url.PathEscape(video) + "/tracks"
	follow := map[string]any{"from": 0, "minScore": -1} // never stops for a poor match: there is a write to check
	proj := tm.want(200, "ana", "POST", v+"/tracks/1/propagate", follow)["jobId"].(string)
	lakeJob := tm.want(200, "cur", "POST", lakeTrack+"/1/propagate?operation=review:x", follow)["jobId"].(string)
	tm.want(204, "cur", "DELETE", lakeTrack+"/1?operation=review:x", nil)
	if _, err := tm.a.Lake.DB().W.Exec(`UPDATE label_job SET assignee = 'ben' WHERE assignee = 'ana'`); err != nil {
		t.Fatal(err)
	}
	if err := tm.a.Jobs.Start(tm.ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, want string }{
		{proj, "the 1 propagated keyframes of track 1 were not written: frame 1 is in job 1"},
		{lakeJob, video + ` has no track 1 from "review:x"`}, // deleted before the job began; during it: TestWriteGuard (propagate)
	} {
		j, err := tm.a.Jobs.Wait(tm.ctx, c.id)
		if err != nil || j.Status != "failed" || !strings.Contains(j.Error, c.want) {
			t.Errorf("job %s: %s %q (%v); want failed with %q", c.id, j.Status, j.Error, err, c.want)
		}
	}
	frames := func() []any {
		tracks := tm.want(200, "cur", "GET", v+"/tracks", nil)["tracks"].([]any)
		var out []any
		for _, k := range tracks[0].(map[string]any)["keyframes"].([]any) {
			out = append(out, k.(map[string]any)["frame"])
		}
		return out
	}
	if got := fmt.Sprint(frames()); got != "[0 2]" {
		t.Errorf("the project's track 1 after the refused propagation has keyframes on frames %s, want [0 2]", got)
	}
	if got := tm.want(200, "cur", "GET", lakeTrack+"?operation=review:x", nil)["tracks"].([]any); len(got) != 0 {
		t.Errorf("the deleted track came back: %v", got)
	}
	// The propagations propagationProgress queued end too (refused) before
	// the job is given back, or one would write and be the edit that
	// refuses the next.
	all, _, err := tm.a.Jobs.List(tm.ctx, job.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		if _, err := tm.a.Jobs.Wait(tm.ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tm.a.Lake.DB().W.Exec(`UPDATE label_job SET assignee = 'ana' WHERE number = 1`); err != nil {
		t.Fatal(err)
	}
	again := tm.want(200, "ana", "POST", v+"/tracks/1/propagate", follow)["jobId"].(string)
	if j, err := tm.a.Jobs.Wait(tm.ctx, again); err != nil || j.Status != "completed" {
		t.Fatalf("ana's propagation in her job: %s %q %v", j.Status, j.Error, err)
	}
	if got := fmt.Sprint(frames()); got != "[0 1 2]" {
		t.Errorf("after ana's propagation in her job: keyframes on frames %s, want [0 1 2]", got)
	}
}

// propagationProgress: an annotator reads the propagation she started
// through the project's route (the lake's jobs route refuses her); a member
// who is not an annotator of the project, a job id that is no propagation
// of the project's tracks of the video, are refused or not found.
func propagationProgress(t *testing.T, tm *team, pid, video string) {
	if _, err := tm.a.Lake.DB().W.Exec(`UPDATE label_job SET state = 'annotation' WHERE assignee = 'ana'`); err != nil {
		t.Fatal(err)
	}
	tm.person("rev", auth.Reviewer, true)
	v := "/api/v1/projects/" + pid + "/videos/" + url.PathEscape(video)
	started := tm.want(200, "ana", "POST", v+"/tracks/1/propagate", map[string]any{"from": 2})
	id, _ := started["jobId"].(string)
	got := tm.want(200, "ana", "GET", v+"/propagations/"+id, nil)
	if got["id"] != id || got["type"] != "propagate_track" || got["status"] == nil || got["progress"] == nil {
		t.Errorf("the propagation as its annotator reads it: %v", got)
	}
	tm.want(403, "ana", "GET", "/api/v1/jobs/"+id, nil)
	tm.want(403, "rev", "GET", v+"/propagations/"+id, nil)
	tm.want(404, "ana", "GET", v+"/propagations/job_nosuch", nil)
	// The curator's propagation of a lake operation's track is not the project's.
	lakeTrack := "/api/v1/lake/files/" + url.PathEscape(video) + "/tracks"
	tm.want(200, "cur", "PUT", lakeTrack+"/1?operation=review:x", map[string]any{"label": "car",
		"keyframes": []map[string]any{{"frame": 0, "x": 0, "y": 10, "width": 20, "height": 20}}})
	other := tm.want(200, "cur", "POST", lakeTrack+"/1/propagate?operation=review:x", map[string]any{"from": 0})
	tm.want(404, "ana", "GET", v+"/propagations/"+other["jobId"].(string), nil)
}

// send is tm.do for a goroutine other than the test's: a failure to send
// is status 0.
func send(tm *team, who, method, path string, body any) int {
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
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
