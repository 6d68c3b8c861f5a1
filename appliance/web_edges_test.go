package appliance_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
)

// TestMalformedPart sends multipart bodies whose part headers are wrong; the
// error must name the header, not a field the client never sent.
func TestMalformedPart(t *testing.T) {
	e := start(t, appliance.Config{})
	const boundary = "XbX"
	for name, header := range map[string]string{
		"attachment":  `Content-Disposition: attachment; name="files"; filename="a.jpg"`,
		"no name":     `Content-Disposition: form-data; filename="a.jpg"`,
		"unparseable": `Content-Disposition: form-data; name="files"; filename="a.jpg`,
	} {
		body := "--" + boundary + "\r\n" + header + "\r\n\r\nbytes\r\n--" + boundary + "--\r\n"
		status, eb := e.raw(t, "POST", "/api/v1/lake/files", "multipart/form-data; boundary="+boundary, strings.NewReader(body))
		if status != 400 || !strings.Contains(eb["message"], "Content-Disposition") {
			t.Errorf("%s: %d %v; want 400 naming Content-Disposition", name, status, eb)
		}
	}
}

// TestJSONBodyLimit: a JSON body over the 16 MiB cap is a 413 that says so,
// and nothing is created.
func TestJSONBodyLimit(t *testing.T) {
	e := start(t, appliance.Config{})
	big := `{"projectName": "p", "contentType": 2, "labels": [{"labelName": "dog", "labelDescription": "` +
		strings.Repeat("x", 17<<20) + `"}]}`
	status, eb := e.raw(t, "POST", "/api/v1/projects", "application/json", strings.NewReader(big))
	if status != 413 || !strings.Contains(eb["message"], "larger than") {
		t.Errorf("17 MiB JSON: %d %v; want 413", status, eb)
	}
	var n int
	if err := e.a.Lake.DB().R.QueryRow("SELECT count(*) FROM project").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d projects created by an over-limit body (%v)", n, err)
	}
}

// TestRequestID: every response carries a request id for the logs; a caller's
// own id is kept so it can follow a request across services.
func TestRequestID(t *testing.T) {
	e := start(t, appliance.Config{})
	get := func(id string) string {
		req, _ := http.NewRequest("GET", e.base+"/api/v1/jobs", bytes.NewReader(nil))
		req.SetBasicAuth(e.wkey, e.wsecret)
		if id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("X-Request-Id")
	}
	a, b := get(""), get("")
	if a == "" || b == "" || a == b {
		t.Errorf("request ids %q and %q: want two distinct ids", a, b)
	}
	if got := get("trace-42"); got != "trace-42" {
		t.Errorf("caller's request id came back as %q", got)
	}
}
