package appliance_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestJSONNotHTMLEscaped: answers are JSON as a program or a shell reads it:
// a media link keeps its &, a query error its <label>.
func TestJSONNotHTMLEscaped(t *testing.T) {
	e := start(t, appliance.Config{})
	ct, body := multipartBody(t, nil, map[string][]byte{"a.jpg": testmedia.JPEG(8, 8, 1)})
	status, _, raw := e.send(t, "POST", "/api/v1/lake/files", ct, body)
	if status != 200 || !bytes.Contains(raw, []byte("&sig=")) || bytes.Contains(raw, []byte(`\u0026`)) {
		t.Errorf("upload answer %d: want a url with a literal &sig=, got %s", status, raw)
	}
	// The streamed Download Annotations writes its JSON by hand.
	pid := e.project(t, client.ContentImage)
	up, err := e.write.InitializeUpload(context.Background(), pid, "batch", 1)
	if err == nil {
		_, err = e.write.UploadFrame(context.Background(), up.UploadID, client.Frame{File: jpegFrame(1)})
	}
	if err != nil {
		t.Fatal(err)
	}
	status, _, raw = e.send(t, "GET", "/api/v1/projects/"+pid+"/annotations", "", nil)
	if status != 200 || !bytes.Contains(raw, []byte("&sig=")) || bytes.Contains(raw, []byte(`\u0026`)) {
		t.Errorf("annotations download %d: want frame urls with a literal &sig=, got %s", status, raw)
	}
	status, _, raw = e.send(t, "POST", "/api/v1/client/get_item_count_from_lake", "application/json",
		strings.NewReader(`{"query": "nosuchfield = 1"}`))
	if status != 400 || !bytes.Contains(raw, []byte("(<label>)")) || bytes.Contains(raw, []byte(`\u003c`)) {
		t.Errorf("query error %d: want a literal <label>, got %s", status, raw)
	}
}

// TestMediaURLRefusals: a media link that is refused says which part is
// missing or wrong.
func TestMediaURLRefusals(t *testing.T) {
	e := start(t, appliance.Config{URLTTL: time.Nanosecond}) // links expire as they are made
	res, err := e.write.UploadFiles(context.Background(), client.UploadOptions{}, memFile("a.jpg", testmedia.JPEG(8, 8, 1)))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(res.Stored[0].URL)
	exp, sig := u.Query().Get("exp"), u.Query().Get("sig")
	path := u.Path
	for _, c := range []struct{ name, query, want string }{
		{"no parameters", "", "is not signed"},
		{"no sig", "?exp=" + exp, "has no sig parameter"},
		{"no exp", "?sig=" + sig, "has no exp parameter"},
		{"escaped &", "?exp=" + exp + `\u0026sig=` + sig, `written as \\u0026`},
		{"exp not a number", "?exp=soon&sig=" + sig, "is not a unix time"},
		{"bad signature", "?exp=" + exp + "&sig=x" + sig, "signature does not match"},
		{"exp changed", "?exp=9" + exp + "&sig=" + sig, "signature does not match"},
		{"expired", "?exp=" + exp + "&sig=" + sig, "expired at "},
	} {
		resp, err := http.Get(e.base + path + c.query)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %d %s; want 401 saying %q", c.name, resp.StatusCode, b, c.want)
		}
	}
}

// TestHEADOnGETRoutes: HEAD answers every GET route with GET's status and
// headers and no body.
func TestHEADOnGETRoutes(t *testing.T) {
	e := start(t, appliance.Config{})
	for _, path := range []string{"/healthz", "/api/v1/jobs", "/api/v1/datasets", "/api/v1/models",
		"/api/v1/openapi.yaml", "/api/v1/jobs/job_missing", "/api/v1/tasks"} {
		gs, gh, gb := e.send(t, "GET", path, "", nil)
		hs, hh, hb := e.send(t, "HEAD", path, "", nil)
		if hs != gs || len(hb) != 0 || (gs == 200 && hh.Get("Content-Type") != gh.Get("Content-Type")) {
			t.Errorf("HEAD %s: %d %q %q; GET: %d %q", path, hs, hh.Get("Content-Type"), hb, gs, gh.Get("Content-Type"))
		}
		if gs == 200 && hh.Get("Content-Length") != "" && hh.Get("Content-Length") != gh.Get("Content-Length") &&
			gh.Get("Content-Length") != "" {
			t.Errorf("HEAD %s: Content-Length %s, GET's %s", path, hh.Get("Content-Length"), gh.Get("Content-Length"))
		}
		if gs == 200 && len(gb) == 0 {
			t.Errorf("GET %s: empty body", path)
		}
	}
	req, _ := http.NewRequest("HEAD", e.base+"/api/v1/jobs", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Errorf("HEAD without a key: %v %v; want 401", resp, err)
	}
}
