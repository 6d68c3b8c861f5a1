package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// uiServer is a running framelake with an admin and a read key.
type uiServer struct {
	base, data  string
	admin, read map[string]string
	pid         int // the server's process
}

func startUIServer(t testing.TB, serveArgs ...string) *uiServer {
	t.Helper()
	data := t.TempDir()
	addr := freeAddr(t)
	var log bytes.Buffer
	srv := exec.Command(bin, append([]string{"serve", "--data", data, "--addr", addr}, serveArgs...)...)
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last first: the server is stopped, and its output whole,
	// before a failed test shows it.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server output:\n%s", log.Bytes())
		}
	})
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	s := &uiServer{base: "http://" + addr, data: data, pid: srv.Process.Pid}
	waitHealthy(t, s.base)
	b, err := os.ReadFile(filepath.Join(data, "admin-key.json"))
	if err != nil || json.Unmarshal(b, &s.admin) != nil {
		t.Fatalf("admin key: %v", err)
	}
	out, err := run(t, "keys", "create", "--data", data, "--name", "viewer", "--role", "read", "--json")
	if err != nil || json.Unmarshal([]byte(out), &s.read) != nil {
		t.Fatalf("keys create: %v %s", err, out)
	}
	return s
}

// call sends a request with key k and decodes a JSON answer into out.
func (s *uiServer) call(t testing.TB, k map[string]string, method, path, ctype string, body io.Reader, out any) {
	t.Helper()
	code, b := s.raw(t, k, method, path, ctype, body)
	if code != 200 {
		t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(b), out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// upload stores the file at path in the lake as name.
func (s *uiServer) upload(t *testing.T, name, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("files", name)
	fw.Write(b)
	mw.Close()
	s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, nil)
}

// fixedDetector is a model package that finds the same two boxes in any
// image: a sure truck and a doubtful bike, in the 300 x 300 pixels it is sent.
const fixedDetector = `
def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return body

def predict_fn(data, model):
    return {"boxes": [[30, 30, 150, 120], [200, 150, 280, 280]], "classes": [0, 1], "scores": [0.9, 0.3]}

def output_fn(pred, accept):
    import json
    return json.dumps(pred)
`

// machineBoxes runs fixedDetector as an auto tagging model over the files
// query selects, so they carry machine boxes beside their human ones.
func (s *uiServer) machineBoxes(t *testing.T, query string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	for name, body := range map[string]string{"code/inference.py": fixedDetector, "code/requirements.txt": "",
		"label_list.yaml": "- truck\n- bike\n", "model.pt": "weights"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	admin := client.New(s.base, s.admin["key"], s.admin["secret"])
	if _, err := admin.RegisterModel(ctx, dir, "fixed", "auto_tagging"); err != nil {
		t.Fatal(err)
	}
	low := 0.1
	run, err := admin.GenerateAutoTagsToLake(ctx, "image", client.AnalysisOptions{ModelName: "fixed",
		ConfidenceThreshold: &low, Query: query})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := admin.WaitJob(ctx, run.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("auto tagging: %+v %v", j, err)
	}
}

// embeddings registers an embedding model "lens" (never run: its vectors are
// given) and stores vecs as its embeddings, for find similar.
func (s *uiServer) embeddings(t *testing.T, vecs map[string][]float32) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "code"), 0o755)
	os.WriteFile(filepath.Join(dir, "code", "requirements.txt"), nil, 0o644)
	if err := os.WriteFile(filepath.Join(dir, "code", "inference.py"), []byte(fixedDetector), 0o644); err != nil {
		t.Fatal(err)
	}
	admin := client.New(s.base, s.admin["key"], s.admin["secret"])
	if _, err := admin.RegisterModel(ctx, dir, "lens", "embedding"); err != nil {
		t.Fatal(err)
	}
	var list []client.Embedding
	for name, v := range vecs {
		list = append(list, client.Embedding{UniqueName: name, Embeddings: v})
	}
	if _, err := admin.InsertImageEmbeddings(ctx, list, "lens", 3); err != nil {
		t.Fatal(err)
	}
}

// uploadLabelled stores images through an annotation project (docs/spec/rest.md) with
// human boxes; labels[i] are the boxes of image i. It returns uniqueNames.
func (s *uiServer) uploadLabelled(t *testing.T, w, h int, labels []string) []string {
	t.Helper()
	var p struct{ ProjectID string }
	s.call(t, s.admin, "POST", "/api/v1/projects", "application/json", strings.NewReader(
		`{"projectName":"streets","contentType":2,"labels":[{"labelName":"car"},{"labelName":"person"}]}`), &p)
	var up struct{ UploadID string }
	s.call(t, s.admin, "POST", "/api/v1/projects/"+p.ProjectID+"/uploads", "application/json",
		strings.NewReader(fmt.Sprintf(`{"collectionName":"batch","totalFileCount":%d}`, len(labels))), &up)
	var names []string
	for i, l := range labels {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("files", fmt.Sprintf("street-%d.jpg", i))
		fw.Write(testmedia.JPEG(w, h, i+1))
		mw.WriteField("labels", l)
		mw.Close()
		var r struct{ UniqueName string }
		s.call(t, s.admin, "POST", "/api/v1/uploads/"+up.UploadID+"/files", mw.FormDataContentType(), &body, &r)
		names = append(names, r.UniqueName)
	}
	return names
}

// browserCheck runs web/ui/test/<script> in Node against s, signed in
// with key, with expect as EXPECT (JSON), screenshots into shots and env
// besides; it fails the test when the script fails and returns its output.
func (s *uiServer) browserCheck(t *testing.T, script string, key map[string]string, expect any, shots string, env ...string) string {
	t.Helper()
	node, ui := needBrowser(t)
	want, err := json.Marshal(expect)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "test/"+script)
	cmd.Dir = ui
	cmd.Env = append(append(os.Environ(), "BASE="+s.base, "KEY="+key["key"], "SECRET="+key["secret"],
		"EXPECT="+string(want), "OUT="+shots), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("browser checks: %v", err)
	}
	return string(out)
}

// needBrowser returns node and web/ui, failing (never skipping) when Node,
// Chromium or playwright-core is missing: `make test` installs them.
func needBrowser(t testing.TB) (node, ui string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; make test installs it (Debian nodejs)")
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Fatal("/usr/bin/chromium is missing; make test installs it (Debian chromium)")
	}
	ui, _ = filepath.Abs("../../web/ui")
	if _, err := os.Stat(filepath.Join(ui, "node_modules", "playwright-core")); err != nil {
		t.Fatal("web/ui/node_modules/playwright-core is missing; run make ui-deps (npm ci in web/ui)")
	}
	return node, ui
}

// TestWebAppInBrowser signs in to the real binary's web app in Chromium and
// checks the grid, the count, a placed query error and a box's position
// against its annotation (web/ui/test/browser.mjs). It fails, never skips,
// when Node, Chromium or playwright-core is missing: `make test` installs them.
func TestWebAppInBrowser(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	names := s.uploadLabelled(t, 640, 480, []string{
		`[{"label":"car","x":100,"y":60,"width":200,"height":120}]`,
		`[{"label":"person","x":400,"y":200,"width":80,"height":200}]`,
		`[]`,
	})
	s.machineBoxes(t, `collection = "batch"`)
	s.embeddings(t, map[string][]float32{names[0]: {1, 0, 0}, names[1]: {0.9, 0.3, 0}, names[2]: {0, 0, 1}})
	// Enough plain files that the grid must virtualise and "go to" must page.
	const fillers = 2000
	for i := 0; i < fillers; i += 500 {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for j := i; j < i+500; j++ {
			fw, _ := mw.CreateFormFile("files", fmt.Sprintf("filler-%04d.jpg", j))
			fw.Write(testmedia.JPEG(32, 24, j+10))
		}
		mw.Close()
		s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, nil)
	}
	video := filepath.Join(t.TempDir(), "clip.mp4")
	if err := testmedia.Video(video, 320, 240, 10, 1); err != nil {
		t.Fatal(err)
	}
	s.upload(t, "clip.mp4", video)
	// A job for the jobs page to watch: a dataset of the labelled images.
	var ds map[string]any
	s.call(t, s.admin, "POST", "/api/v1/client/create_dataset_from_datalake", "application/json", strings.NewReader(
		`{"dataset_name":"streets","labels":["car","person"],"split_info":{"train":70,"test":20,"validation":10}}`), &ds)
	t.Logf("dataset: %v", ds)
	shots := shotsDir(t, "ui")
	expect := map[string]any{"count": 3 + fillers, "uniqueName": names[0], "width": 640, "height": 480, "datasetId": ds["datasetId"],
		"similar": names[1:3],
		"box":     map[string]any{"label": "car", "x": 100, "y": 60, "width": 200, "height": 120}}
	key, secret := namedWriteKey(t, s.data, "curator")
	fresh := filepath.Join(t.TempDir(), "fresh.jpg")
	if err := os.WriteFile(fresh, testmedia.JPEG(320, 240, 4242), 0o644); err != nil {
		t.Fatal(err)
	}
	s.browserCheck(t, "browser.mjs", s.read, expect, shots, "WRITE_KEY="+key, "WRITE_SECRET="+secret, "UPLOAD_JPEG="+fresh)
}

// TestThumbnailsAndMe checks the routes the web app adds: /api/v1/me names
// the key's role, facets count by type and source, lake items carry signed thumbnail URLs that answer a JPEG
// fitting the size, cached on disk by content hash, with an ETag that a
// revalidation matches; a video gets its first frame; a bad signature is a 401.
func TestThumbnailsAndMe(t *testing.T) {
	s := startUIServer(t)
	var me map[string]string
	s.call(t, s.read, "GET", "/api/v1/me", "", nil, &me)
	if me["role"] != "read" || me["name"] != "viewer" || me["key"] != s.read["key"] {
		t.Fatalf("me: %v", me)
	}
	checkNoChallengeToKeys(t, s)
	s.uploadLabelled(t, 1920, 1080, []string{`[{"label":"car","x":10,"y":20,"width":30,"height":40}]`})
	video := filepath.Join(t.TempDir(), "clip.mp4")
	if err := testmedia.Video(video, 320, 240, 10, 1); err != nil {
		t.Fatal(err)
	}
	s.upload(t, "clip.mp4", video)

	checkFacets(t, s)

	for _, c := range []struct {
		itemType  string
		w, h, fit int
	}{{"image", 256, 144, 256}, {"video", 128, 96, 128}} {
		var page struct {
			Items []struct {
				ThumbURL string `json:"thumbUrl"`
				Boxes    []struct{ Label string }
			}
		}
		s.call(t, s.read, "GET", fmt.Sprintf("/api/v1/lake/items?itemType=%s&thumbSize=%d", c.itemType, c.fit), "", nil, &page)
		if len(page.Items) != 1 || !strings.Contains(page.Items[0].ThumbURL, fmt.Sprintf("/thumbs/%d/", c.fit)) {
			t.Fatalf("%s items: %+v", c.itemType, page)
		}
		if c.itemType == "image" && (len(page.Items[0].Boxes) != 1 || page.Items[0].Boxes[0].Label != "car") {
			t.Errorf("image item boxes: %+v", page.Items[0].Boxes)
		}
		u := page.Items[0].ThumbURL
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.DecodeConfig(resp.Body)
		resp.Body.Close()
		etag := resp.Header.Get("ETag")
		if err != nil || resp.StatusCode != 200 || img.Width != c.w || img.Height != c.h || etag == "" ||
			!strings.Contains(resp.Header.Get("Cache-Control"), "max-age=31536000") {
			t.Fatalf("%s thumbnail: %d %v %dx%d etag %q cache %q", c.itemType, resp.StatusCode, err, img.Width, img.Height,
				etag, resp.Header.Get("Cache-Control"))
		}
		cached, _ := filepath.Glob(filepath.Join(s.data, "thumbs", fmt.Sprint(c.fit), "*", strings.Trim(strings.Split(etag, "-")[0], `"`)+".jpg"))
		if len(cached) != 1 {
			t.Errorf("%s thumbnail not cached under thumbs/%d by content hash (etag %s)", c.itemType, c.fit, etag)
		}
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("If-None-Match", etag)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 304 {
			t.Errorf("%s revalidation: %v %v, want 304", c.itemType, resp.StatusCode, err)
		}
		bad := strings.Replace(u, "sig=", "sig=x", 1)
		if resp, err := http.Get(bad); err != nil || resp.StatusCode != 401 {
			t.Errorf("%s thumbnail with a bad signature: %v %v, want 401", c.itemType, resp.StatusCode, err)
		}
	}
}

// checkNoChallengeToKeys: the app signs in with key headers; a wrong secret is a 401 without a Basic
// challenge, which would make the browser open its own password dialog.
func checkNoChallengeToKeys(t *testing.T, s *uiServer) {
	t.Helper()
	for _, c := range []struct {
		key       string
		challenge bool
	}{{s.read["key"], false}, {"", true}} {
		req, _ := http.NewRequest("GET", s.base+"/api/v1/me", nil)
		if c.key != "" {
			req.Header.Set("key", c.key)
			req.Header.Set("secret", "wrong")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("WWW-Authenticate") != ""; resp.StatusCode != 401 || got != c.challenge {
			t.Errorf("me with key %q: %d, challenge %v, want 401 and %v", c.key, resp.StatusCode, got, c.challenge)
		}
	}
}

// checkFacets counts one image with a human box (over 100 px wide) and one video.
func checkFacets(t *testing.T, s *uiServer) {
	t.Helper()
	var facets map[string][]struct {
		Value  string
		Count  int
		Clause string
	}
	s.call(t, s.read, "GET", "/api/v1/lake/facets?query=width%20%3E%20100", "", nil, &facets)
	got := map[string]int{}
	for field, vs := range facets {
		for _, v := range vs {
			got[field+"="+v.Value] = v.Count
		}
	}
	// Counts by shape type are the files having each (the one labelled image has a box).
	if want := map[string]int{"type=image": 1, "type=video": 1, "type=other": 0, "annotation.source=human": 1,
		"annotation.source=machine": 0, "annotation.source=raw": 0, "annotation.type=box": 1, "annotation.type=polygon": 0,
		"annotation.type=mask": 0, "annotation.type=keypoints": 0, "annotation.type=polyline": 0,
		"annotation.type=class": 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("facets: %v, want %v", got, want)
	}
}
