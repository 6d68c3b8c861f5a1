package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

func jpegFrame(seed int) client.UploadFile {
	return memFile("frame.jpg", testmedia.JPEG(64, 48, seed))
}

func carBox(x float64) client.Box {
	return client.Box{Label: "car", X: x, Y: 2, Width: 10, Height: 8, Attributes: json.RawMessage(`{"occluded":"no"}`)}
}

func intp(n int) *int { return &n }

// project creates a project with labels car and bus.
func (e *env) project(t *testing.T, contentType int) string {
	t.Helper()
	id, err := e.write.CreateProject(context.Background(), client.Project{Name: "streets", ContentType: contentType,
		Labels: []client.Label{{Name: "car", Description: "any car"}, {Name: "bus"}}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// rows counts a table's rows.
func (e *env) rows(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := e.a.Lake.DB().R.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// blobs counts the media files in the store, on disk or in its bucket.
func (e *env) blobs(t *testing.T) int {
	t.Helper()
	r, err := lake.CheckMedia(context.Background(), e.a.Lake.DB(), filepath.Join(e.dir, "media"))
	if err != nil {
		t.Fatal(err)
	}
	return r.Blobs
}

func TestAnnotateProjectOverHTTP(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	pid := e.project(t, client.ContentImage)
	up, err := e.write.InitializeUpload(ctx, pid, "batch-01", 2)
	if err != nil || up.LastSequenceID != -1 || !strings.HasPrefix(up.UploadID, "upl_") {
		t.Fatalf("initialize: %+v %v", up, err)
	}
	f0, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(1), Boxes: []client.Box{carBox(1),
		{Label: "bus", X: 30, Y: 20, Width: 50, Height: 50}}})
	if err != nil || !f0.Success || f0.SequenceNo != 0 || !strings.HasPrefix(f0.UniqueName, "batch-01-frame-") {
		t.Fatalf("frame 0: %+v %v", f0, err)
	}
	tl, err := e.read.TaskList(ctx, client.TaskListOptions{ProjectID: pid})
	if err != nil || tl.TaskCount != 1 || len(tl.TaskList) != 1 {
		t.Fatalf("tasks: %+v %v", tl, err)
	}
	tk := tl.TaskList[0]
	if tk.FrameCount != 2 || tk.CompletedFrames != 1 || tk.Progress != 50 || tk.Status != 1 || tk.IsDownloadEnable ||
		tk.VideoName != "batch-01" || tk.TaskName != "batch-01" || tk.VideoResolutionWidth != 64 ||
		tk.VideoResolutionHeight != 48 || tk.ContentType != 2 || tk.ProjectName != "streets" || tk.CompletedAt != nil ||
		!strings.HasPrefix(tk.DownLoadURL, e.base+"/api/v1/projects/"+pid+"/annotations?taskList=") {
		t.Errorf("task %+v", tk)
	}
	// downLoadUrl works with the key as it stands.
	req, _ := http.NewRequest("GET", tk.DownLoadURL, nil)
	req.SetBasicAuth(e.wkey, e.wsecret)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("downLoadUrl: %v %v", resp, err)
	}
	// The second frame shows nothing (labels []): an answer, so the task completes.
	f1, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(2)})
	if err != nil || f1.SequenceNo != 1 {
		t.Fatalf("frame 1: %+v %v", f1, err)
	}
	tl, _ = e.read.TaskList(ctx, client.TaskListOptions{ProjectID: pid})
	if tk := tl.TaskList[0]; tk.Status != 2 || tk.CompletedFrames != 2 || tk.Progress != 100 || !tk.IsDownloadEnable ||
		tk.CompletedAt == nil {
		t.Errorf("task with an empty frame %+v", tk)
	}
	// An annotator boxes the second frame, then empties the first: both are
	// still annotated, the task stays completed.
	if r, err := e.write.ReplaceFrameAnnotations(ctx, pid, f1.UniqueName, []client.Box{carBox(5)}); err != nil ||
		r.SequenceNo != 1 || r.Task == nil || r.Task.Status != 2 {
		t.Fatalf("replace: %+v %v", r, err)
	}
	if r, err := e.write.ReplaceFrameAnnotations(ctx, pid, f0.UniqueName, []client.Box{}); err != nil ||
		r.Task == nil || r.Task.Status != 2 || r.Task.CompletedFrames != 2 {
		t.Fatalf("emptied frame 0: %+v %v", r, err)
	}
	if _, err := e.write.ReplaceFrameAnnotations(ctx, pid, f0.UniqueName, []client.Box{carBox(1),
		{Label: "bus", X: 30, Y: 20, Width: 50, Height: 50}}); err != nil {
		t.Fatal(err)
	}
	d, err := e.read.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: pid})
	if err != nil || d.TaskCount != 1 || d.PageSize != 5 || d.MetaData.ProjectName != "streets" ||
		len(d.MetaData.Labels) != 2 || d.MetaData.Labels[0].Description != "any car" || len(d.Data) != 1 {
		t.Fatalf("download: %+v %v", d, err)
	}
	fr := d.Data[0].Frames
	if len(fr) != 2 || fr[0].FrameID != 0 || fr[0].UniqueName != f0.UniqueName || fr[0].Width != 64 ||
		len(fr[0].Annotations) != 2 || fr[0].Annotations[0].Source != "human" ||
		string(fr[0].Annotations[0].Attributes) != `{"occluded":"no"}` || len(fr[1].Annotations) != 1 {
		t.Fatalf("frames %+v", fr)
	}
	if resp, err := http.Get(fr[0].URL); err != nil || resp.StatusCode != 200 {
		t.Errorf("frame url: %v %v", resp, err)
	}
	e.checkStreamedDownload(t, pid)
	d, _ = e.read.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: pid, Labels: []string{"bus"},
		TaskIDs: []string{tk.ID}})
	if n := len(d.Data[0].Frames[0].Annotations); n != 1 || len(d.Data[0].Frames[1].Annotations) != 0 {
		t.Errorf("labels filter: %+v", d.Data[0].Frames)
	}
	// Frames are lake files of an image collection with human boxes of the project.
	var collType string
	var members int
	e.a.Lake.DB().R.QueryRow(`SELECT c.type, count(*) FROM collection c JOIN collection_file cf
		ON cf.collection_seq = c.seq WHERE c.name = 'batch-01'`).Scan(&collType, &members)
	var human int
	e.a.Lake.DB().R.QueryRow(`SELECT count(*) FROM annotation WHERE source = 'human' AND operation = ?`, pid).Scan(&human)
	if collType != "image_collection" || members != 2 || human != 3 {
		t.Errorf("lake: %s with %d members, %d human boxes", collType, members, human)
	}
}

func TestAnnotateResumeUpload(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	pid := e.project(t, client.ContentVideo)
	up, _ := e.write.InitializeUpload(ctx, pid, "clip-1", 5)
	for i := range 3 {
		if _, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(i), Boxes: []client.Box{carBox(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	again, err := e.write.InitializeUpload(ctx, pid, "clip-1", 5)
	if err != nil || again.UploadID != up.UploadID || again.LastSequenceID != 2 {
		t.Fatalf("resume: %+v %v", again, err)
	}
	r, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(3)})
	if err != nil || r.SequenceNo != 3 {
		t.Fatalf("after resume: %+v %v", r, err)
	}
	var vi int
	e.a.Lake.DB().R.QueryRow(`SELECT video_index FROM file WHERE unique_name = ?`, r.UniqueName).Scan(&vi)
	if vi != 3 {
		t.Errorf("video_index %d, want 3", vi)
	}
	// Re-sending a number replaces its boxes and keeps its file.
	if _, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(0), SequenceNo: intp(0),
		Boxes: []client.Box{carBox(1), carBox(2), carBox(3)}}); err != nil {
		t.Fatal(err)
	}
	if n, b := e.rows(t, "file"), e.rows(t, "annotation"); n != 4 || b != 5 {
		t.Errorf("%d files, %d boxes after a re-send; want 4 and 5", n, b)
	}
	other := e.project(t, client.ContentVideo)
	if _, err := e.write.InitializeUpload(ctx, other, "clip-1", 5); client.CodeOf(err) != "already_exists" {
		t.Errorf("another project's collection: %v", err)
	}
	if _, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "plain"}, jpegFrame(99)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.write.InitializeUpload(ctx, pid, "plain", 5); client.CodeOf(err) != "already_exists" {
		t.Errorf("a plain lake collection: %v", err)
	}
}

// checkStreamedDownload: the streamed Download Annotations response is what
// encoding/json makes of the service's page.
func (e *env) checkStreamedDownload(t *testing.T, pid string) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.base+"/api/v1/projects/"+pid+"/annotations?pageIndex=0.0", nil)
	req.SetBasicAuth(e.wkey, e.wsecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got, want any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("download body: %v %s", err, resp.Header.Get("Content-Type"))
	}
	page, err := e.a.Annotate.Download(context.Background(), annotate.DownloadQuery{ProjectID: pid})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(page)
	json.Unmarshal(b, &want)
	if g, w := withoutURLs(got), withoutURLs(want); !reflect.DeepEqual(g, w) {
		t.Errorf("streamed download\n%v\nwant\n%v", g, w)
	}
}

// withoutURLs drops signed URLs, whose expiry moves with the clock.
func withoutURLs(v any) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "url")
		for k, x := range v {
			v[k] = withoutURLs(x)
		}
	case []any:
		for i, x := range v {
			v[i] = withoutURLs(x)
		}
	}
	return v
}

type formPart struct {
	name, file string
	data       []byte
}

func frameForm(t *testing.T, fields map[string]string, files ...formPart) (string, *bytes.Buffer) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for _, f := range files {
		w, _ := mw.CreateFormFile(f.name, f.file)
		w.Write(f.data)
	}
	mw.Close()
	return mw.FormDataContentType(), &b
}

// TestUploadRulesLeaveNothing: every rule of docs/spec/rest.md's Upload section is a
// 400 (or 404) that stores no file, frame, box or blob and moves no counter.
func TestUploadRulesLeaveNothing(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	pid := e.project(t, client.ContentImage)
	full, _ := e.write.InitializeUpload(ctx, pid, "full", 1)
	if _, err := e.write.UploadFrame(ctx, full.UploadID, client.Frame{File: jpegFrame(1)}); err != nil {
		t.Fatal(err)
	}
	up, _ := e.write.InitializeUpload(ctx, pid, "batch", 3)
	files, boxes, blobs := e.rows(t, "file"), e.rows(t, "annotation"), e.blobs(t)
	img := testmedia.JPEG(64, 48, 7)
	frame := formPart{"files", "f.jpg", img}
	box := func(b string) map[string]string { return map[string]string{"labels": "[" + b + "]"} }
	cases := []struct {
		name   string
		upload string
		fields map[string]string
		parts  []formPart
		status int
		field  string
		want   string
	}{
		{"label not in project", up.UploadID, box(`{"label":"tram","x":1,"y":1,"width":5,"height":5}`), []formPart{frame}, 400, "labels", "not a label of project"},
		{"zero size", up.UploadID, box(`{"label":"car","x":1,"y":1,"width":0,"height":5}`), []formPart{frame}, 400, "labels", "must be positive"},
		{"negative size", up.UploadID, box(`{"label":"car","x":1,"y":1,"width":5,"height":-3}`), []formPart{frame}, 400, "labels", "must be positive"},
		{"outside the image", up.UploadID, box(`{"label":"car","x":64,"y":1,"width":5,"height":5}`), []formPart{frame}, 400, "labels", "outside the 64x48 image"},
		{"above the image", up.UploadID, box(`{"label":"car","x":1,"y":-20,"width":5,"height":20}`), []formPart{frame}, 400, "labels", "outside"},
		{"undecodable file", up.UploadID, box(``), []formPart{{"files", "f.jpg", img[:len(img)/2]}}, 400, "files", "not a decodable image"},
		{"text file", up.UploadID, box(``), []formPart{{"files", "f.txt", []byte("hello")}}, 400, "files", "not a decodable image"},
		{"empty file", up.UploadID, box(``), []formPart{{"files", "f.jpg", nil}}, 400, "files", "empty"},
		{"past totalFileCount", full.UploadID, box(``), []formPart{frame}, 400, "files", "already has all 1 frame ("},
		{"past totalFileCount with a new number", full.UploadID, map[string]string{"labels": "[]", "sequenceNo": "7"}, []formPart{frame}, 400, "files", "totalFileCount"},
		{"unknown upload", "upl_nope", box(``), []formPart{frame}, 404, "", "not found"},
		{"two files", up.UploadID, box(``), []formPart{frame, frame}, 400, "files", "exactly one"},
		{"no file", up.UploadID, box(``), nil, 400, "files", "exactly one"},
		{"no labels", up.UploadID, nil, []formPart{frame}, 400, "labels", "required"},
		{"labels not JSON", up.UploadID, map[string]string{"labels": "car"}, []formPart{frame}, 400, "labels", "not valid JSON"},
		{"labels an object", up.UploadID, map[string]string{"labels": `{"label":"car"}`}, []formPart{frame}, 400, "labels", "array"},
		{"unknown box field", up.UploadID, box(`{"label":"car","x":1,"y":1,"width":5,"height":5,"colour":"red"}`), []formPart{frame}, 400, "labels", "colour"},
		{"attributes not an object", up.UploadID, box(`{"label":"car","x":1,"y":1,"width":5,"height":5,"attributes":[1]}`), []formPart{frame}, 400, "labels", "attributes"},
		{"negative sequenceNo", up.UploadID, map[string]string{"labels": "[]", "sequenceNo": "-1"}, []formPart{frame}, 400, "sequenceNo", "at least 0"},
		{"fractional sequenceNo", up.UploadID, map[string]string{"labels": "[]", "sequenceNo": "1.5"}, []formPart{frame}, 400, "sequenceNo", "whole number"},
		{"unknown field", up.UploadID, map[string]string{"labels": "[]", "colour": "red"}, []formPart{frame}, 400, "colour", "unknown field"},
	}
	for _, c := range cases {
		ctype, body := frameForm(t, c.fields, c.parts...)
		status, eb := e.raw(t, "POST", "/api/v1/uploads/"+c.upload+"/files", ctype, body)
		if status != c.status || eb["field"] != c.field || !strings.Contains(eb["message"], c.want) {
			t.Errorf("%s: %d %v; want %d field %q message containing %q", c.name, status, eb, c.status, c.field, c.want)
		}
	}
	if f, b, m := e.rows(t, "file"), e.rows(t, "annotation"), e.blobs(t); f != files || b != boxes || m != blobs {
		t.Errorf("bad uploads left %d files, %d boxes, %d blobs behind", f-files, b-boxes, m-blobs)
	}
	again, _ := e.write.InitializeUpload(ctx, pid, "batch", 3)
	if again.LastSequenceID != -1 || e.rows(t, "frame") != 1 {
		t.Errorf("session moved: %+v, %d frames", again, e.rows(t, "frame"))
	}
}

func TestProjectAndTaskBadRequests(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	pid := e.project(t, client.ContentImage)
	up, _ := e.write.InitializeUpload(ctx, pid, "b1", 1)
	f, _ := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(1)})
	other := e.project(t, client.ContentImage)
	j := "application/json"
	cases := []struct {
		name, method, path, body string
		status                   int
		field, want              string
	}{
		{"no name", "POST", "/api/v1/projects", `{"contentType":2,"labels":[{"labelName":"a"}]}`, 400, "projectName", "required"},
		{"content type 3", "POST", "/api/v1/projects", `{"projectName":"p","contentType":3,"labels":[{"labelName":"a"}]}`, 400, "contentType", "1 (video) or 2 (image)"},
		{"content type string", "POST", "/api/v1/projects", `{"projectName":"p","contentType":"2","labels":[{"labelName":"a"}]}`, 400, "contentType", "number"},
		{"no content type", "POST", "/api/v1/projects", `{"projectName":"p","labels":[{"labelName":"a"}]}`, 400, "contentType", "required"},
		{"no labels", "POST", "/api/v1/projects", `{"projectName":"p","contentType":2}`, 400, "labels", "required"},
		{"empty label", "POST", "/api/v1/projects", `{"projectName":"p","contentType":2,"labels":[{"labelName":" "}]}`, 400, "labels", "empty"},
		{"duplicate label", "POST", "/api/v1/projects", `{"projectName":"p","contentType":2,"labels":[{"labelName":"a"},{"labelName":"a"}]}`, 400, "labels", "unique"},
		{"unknown field", "POST", "/api/v1/projects", `{"projectName":"p","contentType":2,"labels":[{"labelName":"a"}],"owner":"x"}`, 400, "owner", "unknown field"},
		{"unknown label field", "POST", "/api/v1/projects", `{"projectName":"p","contentType":2,"labels":[{"labelName":"a","colour":"red"}]}`, 400, "colour", "unknown field"},
		{"init unknown project", "POST", "/api/v1/projects/prj_nope/uploads", `{"collectionName":"x","totalFileCount":1}`, 404, "", "not found"},
		{"init zero files", "POST", "/api/v1/projects/" + pid + "/uploads", `{"collectionName":"x","totalFileCount":0}`, 400, "totalFileCount", "between 1"},
		{"init no count", "POST", "/api/v1/projects/" + pid + "/uploads", `{"collectionName":"x"}`, 400, "totalFileCount", "required"},
		{"init no name", "POST", "/api/v1/projects/" + pid + "/uploads", `{"totalFileCount":3}`, 400, "collectionName", "required"},
		{"init other project's name", "POST", "/api/v1/projects/" + other + "/uploads", `{"collectionName":"b1","totalFileCount":1}`, 409, "collectionName", "another project"},
		{"tasks no project", "GET", "/api/v1/tasks", "", 400, "projectId", "required"},
		{"tasks unknown project", "GET", "/api/v1/tasks?projectId=prj_nope", "", 404, "", "not found"},
		{"tasks page too big", "GET", "/api/v1/tasks?projectId=" + pid + "&pageSize=1001", "", 400, "pageSize", "at most 1000"},
		{"download page too big", "GET", "/api/v1/projects/" + pid + "/annotations?pageSize=51", "", 400, "pageSize", "at most 50"},
		{"download unknown label", "GET", "/api/v1/projects/" + pid + "/annotations?labels=car,tram", "", 400, "labels", "tram"},
		{"download unknown task", "GET", "/api/v1/projects/" + pid + "/annotations?taskList=tsk_nope", "", 404, "", "tsk_nope"},
		{"download unknown project", "GET", "/api/v1/projects/prj_nope/annotations", "", 404, "", "not found"},
		{"put unknown frame", "PUT", "/api/v1/projects/" + pid + "/frames/nope/annotations", `[]`, 404, "", "not found"},
		{"put other project", "PUT", "/api/v1/projects/" + other + "/frames/" + f.UniqueName + "/annotations", `[]`, 404, "", "not found"},
		{"put bad label", "PUT", "/api/v1/projects/" + pid + "/frames/" + f.UniqueName + "/annotations", `[{"label":"tram","x":1,"y":1,"width":2,"height":2}]`, 400, "labels", "not a label"},
		{"put outside", "PUT", "/api/v1/projects/" + pid + "/frames/" + f.UniqueName + "/annotations", `[{"label":"car","x":100,"y":1,"width":2,"height":2}]`, 400, "labels", "outside"},
	}
	for _, c := range cases {
		ct := ""
		if c.body != "" {
			ct = j
		}
		status, eb := e.raw(t, c.method, c.path, ct, strings.NewReader(c.body))
		if status != c.status || eb["field"] != c.field || !strings.Contains(eb["message"], c.want) {
			t.Errorf("%s: %d %v; want %d field %q message containing %q", c.name, status, eb, c.status, c.field, c.want)
		}
	}
	if n := e.rows(t, "project"); n != 2 {
		t.Errorf("%d projects after bad requests", n)
	}
	if status, _ := e.raw(t, "GET", "/api/v1/tasks?projectId="+pid+"&pageIndex=0.0&pageSize=10.0", "", nil); status != 200 {
		t.Errorf("pageIndex as a double: %d", status)
	}
	if _, err := e.read.CreateProject(ctx, client.Project{Name: "p", ContentType: 2, Labels: []client.Label{{Name: "a"}}}); client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key creating a project: %v", err)
	}
}

// TestUploadEightClients: eight clients uploading into one session at once
// end with exactly totalFileCount frames, none lost or doubled, whether the
// server numbers the frames or the clients do (and overlap).
func TestUploadEightClients(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	pid := e.project(t, client.ContentImage)
	const total = 40
	check := func(up *client.UploadSession, name string) {
		t.Helper()
		var n, distinct, lo, hi, members int
		db := e.a.Lake.DB().R
		db.QueryRow(`SELECT count(*), count(DISTINCT f.sequence_no), min(f.sequence_no), max(f.sequence_no)
			FROM frame f JOIN upload_session s ON s.seq = f.session_seq WHERE s.id = ?`, up.UploadID).Scan(&n, &distinct, &lo, &hi)
		db.QueryRow(`SELECT count(*) FROM collection_file cf JOIN collection c ON c.seq = cf.collection_seq
			WHERE c.name = ?`, name).Scan(&members)
		if n != total || distinct != total || lo != 0 || hi != total-1 || members != total {
			t.Errorf("%s: %d frames (%d distinct, %d..%d), %d collection members; want %d", name, n, distinct, lo, hi, members, total)
		}
	}
	// The refused uploads' blobs are gone too: the store holds exactly the
	// stored frames' bytes, each once.
	checkBlobs := func() int {
		t.Helper()
		var frameBlobs int
		e.a.Lake.DB().R.QueryRow(`SELECT count(DISTINCT fi.blob || '.' || fi.ext) FROM frame fr
			JOIN file fi ON fi.seq = fr.file_seq`).Scan(&frameBlobs)
		if got := e.blobs(t); got != frameBlobs {
			t.Errorf("%d blob files in the data folder, %d distinct blobs of stored frames", got, frameBlobs)
		}
		return frameBlobs
	}

	// Server-numbered, oversubscribed: 8 x 8 attempts for 40 places.
	up, _ := e.write.InitializeUpload(ctx, pid, "numbered", total)
	var ok, refused sync.Map
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for i := range 8 {
				r, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(100*c + i), Boxes: []client.Box{carBox(1)}})
				switch {
				case err == nil:
					if _, dup := ok.LoadOrStore(r.SequenceNo, true); dup {
						t.Errorf("sequence number %d handed out twice", r.SequenceNo)
					}
				case client.CodeOf(err) == "invalid_argument":
					refused.Store(100*c+i, true)
				default:
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	nRefused := 0
	refused.Range(func(any, any) bool { nRefused++; return true })
	if nRefused != 64-total {
		t.Errorf("%d uploads refused, want %d", nRefused, 64-total)
	}
	check(up, "numbered")
	if n := checkBlobs(); n != total {
		t.Errorf("%d distinct blobs for %d frames of different bytes", n, total)
	}

	// Client-numbered, overlapping: every client sends every number.
	up2, _ := e.write.InitializeUpload(ctx, pid, "overlap", total)
	for c := range 8 {
		wg.Go(func() {
			order := make([]int, total)
			for i := range order {
				order[i] = (i*7 + c*5) % total
			}
			for _, seq := range order {
				if _, err := e.write.UploadFrame(ctx, up2.UploadID, client.Frame{File: jpegFrame(seq), SequenceNo: intp(seq),
					Boxes: []client.Box{carBox(float64(c))}}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	check(up2, "overlap")
	checkBlobs() // some of overlap's frames have the bytes of some of numbered's
	tl, _ := e.read.TaskList(ctx, client.TaskListOptions{ProjectID: pid})
	if len(tl.TaskList) != 2 || tl.TaskList[0].Status != 2 || tl.TaskList[1].Status != 2 ||
		tl.TaskList[1].CompletedFrames != total {
		t.Errorf("tasks %+v", tl.TaskList)
	}
}
