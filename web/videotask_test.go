package web_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// TestVideoTaskOverHTTP: a curator makes a task from a lake video (bad
// input refused naming the field, nothing written) and cuts it into jobs;
// annotators write the project's tracks of the video only inside their own
// job, and not once it is submitted; non-members and reviewers are refused;
// the project's routes reach only its tasks' videos.
func TestVideoTaskOverHTTP(t *testing.T) {
	tm := startTeam(t)
	imageProject := tm.proj
	vp, err := tm.a.Annotate.CreateProject(tm.ctx, annotate.NewProject{Name: "clips", ContentType: annotate.Video,
		Labels: []annotate.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	tm.proj = vp.ID
	for _, p := range []struct {
		name   string
		role   auth.Role
		member bool
	}{{"ana", auth.Annotator, true}, {"ben", auth.Annotator, true}, {"rev", auth.Reviewer, true}, {"out", auth.Annotator, false}} {
		tm.person(p.name, p.role, p.member)
	}
	path := filepath.Join(t.TempDir(), "clip.mp4")
	if err := testmedia.Video(path, 64, 48, 5, 2); err != nil {
		t.Fatal(err) // ffmpeg missing: make test installs it
	}
	res, err := tm.a.Lake.Add(tm.ctx, lake.AddOptions{Collection: "clips"}, []lake.Upload{{Name: "clip.mp4",
		Open: func() (io.ReadCloser, error) { return os.Open(path) }}, {Name: "pic.jpg",
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(testmedia.JPEG(64, 48, 1))), nil }}})
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("add: %v %+v", err, res)
	}
	video, image := res.Stored[0].UniqueName, res.Stored[1].UniqueName

	tasks := "/api/v1/projects/" + vp.ID + "/tasks"
	for _, c := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{tasks, map[string]any{"video": video, "every": 0}, "every"},
		{tasks, map[string]any{"video": video, "lastFrame": 10}, "lastFrame"},
		{tasks, map[string]any{"video": video, "firstFrame": -2}, "firstFrame"},
		{tasks, map[string]any{"video": image}, "video"},
		{tasks, map[string]any{"video": video, "uniqueNames": []string{image}}, "video"},
		{"/api/v1/projects/" + imageProject + "/tasks", map[string]any{"video": video}, "video"},
	} {
		out := tm.want(400, "cur", "POST", c.path, c.body)
		if e, _ := out["error"].(map[string]any); e["field"] != c.field {
			t.Errorf("%v: %v, want the field %s named", c.body, out, c.field)
		}
	}
	if _, n, err := tm.a.Annotate.Tasks(tm.ctx, annotate.TaskQuery{ProjectID: vp.ID}); err != nil || n != 0 {
		t.Fatalf("refused tasks were written: %d %v", n, err)
	}
	task := tm.want(200, "cur", "POST", tasks, map[string]any{"taskName": "clip 0-7", "video": video, "lastFrame": 7, "every": 2})
	taskID := task["id"].(string)
	if task["frameCount"] != 4.0 {
		t.Fatalf("frames 0-7 every 2: %v", task)
	}
	ws := tm.want(200, "ana", "GET", "/api/v1/tasks/"+taskID+"/frames", nil)
	var frames []string
	for _, f := range ws["frames"].([]any) {
		f := f.(map[string]any)
		frames = append(frames, fmt.Sprintf("%v@%v", f["uniqueName"], f["frame"]))
	}
	if fmt.Sprint(frames) != fmt.Sprintf("[%[1]s@0 %[1]s@2 %[1]s@4 %[1]s@6]", video) {
		t.Fatalf("task frames %v", frames)
	}
	// The Go client makes one too, and reads its frames as the video's numbers.
	cur := client.New(tm.base, tm.keys["cur"][0], tm.keys["cur"][1])
	first, last := 8, 9
	ct, err := cur.CreateTask(tm.ctx, vp.ID, client.NewTask{TaskName: "clip 8-9", Video: video, FirstFrame: &first, LastFrame: &last})
	if err != nil {
		t.Fatal(err)
	}
	cws, err := cur.TaskWorkspace(tm.ctx, ct.ID)
	if err != nil || cws.Video == nil || cws.Video.UniqueName != video || len(cws.Frames) != 2 || cws.Frames[1].Frame == nil || *cws.Frames[1].Frame != 9 {
		t.Fatalf("client's video task workspace: %+v %v", cws, err)
	}
	tm.want(200, "cur", "POST", "/api/v1/tasks/"+taskID+"/jobs", map[string]any{"size": 2, "assignees": []string{"ana", "ben"}})

	v := "/api/v1/projects/" + vp.ID + "/videos/" + url.PathEscape(video)
	box := func(frame int, x float64) map[string]any {
		return map[string]any{"frame": frame, "x": x, "y": 10, "width": 20, "height": 20}
	}
	track := func(kf ...map[string]any) map[string]any {
		return map[string]any{"label": "car", "keyframes": kf, "outside": []int{}}
	}
	// Job 1 is frames 0-3 (ana's), job 2 frames 4-7 (ben's).
	tm.want(200, "ana", "PUT", v+"/tracks/1", track(box(0, 0), box(2, 20)))
	tm.want(403, "ana", "PUT", v+"/tracks/2", track(box(5, 0)))
	tm.want(403, "ana", "PUT", v+"/tracks/1", track(box(0, 0), box(2, 20), box(4, 30)))
	tm.want(200, "ben", "PUT", v+"/tracks/2", track(box(4, 0), box(6, 8)))
	tm.want(403, "ana", "DELETE", v+"/tracks/2", nil)
	tm.want(403, "rev", "PUT", v+"/tracks/3", track(box(1, 0)))
	tm.want(403, "out", "GET", v+"/tracks", nil)
	tm.want(403, "out", "PUT", v+"/tracks/3", track(box(1, 0)))
	// A track edit is in the frame's history; ana restores frame 2's first
	// version in her job, ben (job 2) and a non-member may not.
	tm.want(200, "ana", "PUT", v+"/tracks/1", track(box(0, 0), box(2, 26)))
	hist := tm.want(200, "ana", "GET", "/api/v1/lake/history?"+url.Values{"uniqueName": {video}, "frame": {"2"},
		"project": {vp.ID}}.Encode(), nil)
	changes, _ := hist["changes"].([]any)
	if len(changes) != 2 {
		t.Fatalf("frame 2's history after two edits of track 1: %v", hist)
	}
	firstChange := changes[1].(map[string]any)["id"].(string)
	tm.want(403, "ben", "POST", "/api/v1/lake/history/"+firstChange+"/restore", nil)
	tm.want(403, "out", "POST", "/api/v1/lake/history/"+firstChange+"/restore", nil)
	tm.want(200, "ana", "POST", "/api/v1/lake/history/"+firstChange+"/restore", nil)
	kf := tm.want(200, "ana", "GET", v+"/tracks?frame=2", nil)
	if sh, _ := kf["shapes"].([]any); len(sh) != 1 || sh[0].(map[string]any)["x"] != 20.0 {
		t.Fatalf("frame 2 after the restore: %v, want track 1 back at x 20", kf)
	}
	got := tm.want(200, "ana", "GET", v+"/tracks?frame=1", nil)
	shapes, _ := got["shapes"].([]any)
	if len(shapes) != 1 || shapes[0].(map[string]any)["x"] != 10.0 || shapes[0].(map[string]any)["interpolated"] != true {
		t.Fatalf("frame 1 between keyframes 0 (x 0) and 2 (x 20): %v", got)
	}
	lakeTracks := tm.want(200, "cur", "GET", "/api/v1/lake/files/"+url.PathEscape(video)+"/tracks", nil)
	for _, tr := range lakeTracks["tracks"].([]any) {
		if op := tr.(map[string]any)["operation"]; op != vp.ID {
			t.Errorf("a track written through the project has operation %v, want %s", op, vp.ID)
		}
	}
	// The frame is decoded for members; another project's routes, or a file
	// of no task, are not found.
	req, _ := http.NewRequest("GET", tm.base+v+"/frames/1", nil)
	req.Header.Set("key", tm.keys["ana"][0])
	req.Header.Set("secret", tm.keys["ana"][1])
	resp, err := tm.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("frame 1: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	tm.want(404, "ana", "GET", "/api/v1/projects/"+vp.ID+"/videos/"+url.PathEscape(image)+"/tracks", nil)
	tm.want(404, "cur", "GET", "/api/v1/projects/"+imageProject+"/videos/"+url.PathEscape(video)+"/tracks", nil)
	// Submitted, job 1 is read-only to ana: 409 naming its state.
	job := tm.want(200, "ana", "POST", "/api/v1/tasks/"+taskID+"/jobs/1/state", map[string]any{"state": "submitted"})
	if job["annotatedFrames"] != 2.0 || job["frameCount"] != 2.0 {
		t.Fatalf("job 1 with a track on frames 0-2: %v", job)
	}
	out := tm.want(409, "ana", "PUT", v+"/tracks/1", track(box(0, 0), box(2, 25)))
	if m := errMessage(out); !strings.Contains(m, "submitted") {
		t.Fatalf("409 says %q, want the job's state", m)
	}
	if st := tm.want(200, "cur", "GET", "/api/v1/tasks/"+taskID, nil)["status"]; st != 1.0 {
		t.Fatalf("task status %v, want 1 (in progress)", st)
	}
}
