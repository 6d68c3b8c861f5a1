package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	_ "image/jpeg"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
)

type env struct {
	a                  *appliance.Appliance
	base, dir          string // server URL, data folder
	admin, read, write *client.Client
	wkey, wsecret      string
}

// migrated is a database with every owner's migrations applied, made once
// per test binary by appliance.Migrate, as appliance.Open does. start copies it
// into each test's data folder, where Open runs Migrate for every owner
// again and finds them applied (an owner missing here would be migrated
// there). Migrating a fresh database was about 0.14 CPU-s of each of the
// package's ~100 starts.
var (
	migratedOnce sync.Once
	migratedDir  string
	migratedErr  error
)

func migratedDB(t testing.TB) string {
	t.Helper()
	migratedOnce.Do(func() {
		if migratedDir, migratedErr = os.MkdirTemp("", "appliance-migrated-"); migratedErr != nil {
			return
		}
		ctx := context.Background()
		db, err := sqlitedb.Open(ctx, filepath.Join(migratedDir, "framelake.db"), sqlitedb.Options{})
		if err != nil {
			migratedErr = err
			return
		}
		if err := appliance.Migrate(ctx, db); err != nil {
			db.Close()
			migratedErr = err
			return
		}
		migratedErr = db.Close()
	})
	if migratedErr != nil {
		t.Fatalf("the migrated database: %v", migratedErr)
	}
	return filepath.Join(migratedDir, "framelake.db")
}

// start runs a real appliance on a loopback port for the test.
func start(t testing.TB, cfg appliance.Config) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg.DataDir, cfg.Addr = t.TempDir(), "127.0.0.1:0"
	if b, err := os.ReadFile(migratedDB(t)); err != nil || os.WriteFile(filepath.Join(cfg.DataDir, "framelake.db"), b, 0o644) != nil {
		t.Fatalf("copying the migrated database: %v", err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := appliance.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		a.Close()
	})
	e := &env{a: a, base: a.BaseURL(), dir: cfg.DataDir}
	mk := func(role auth.Role) (*client.Client, string, string) {
		k, s, err := a.Keys.Create(ctx, string(role), role, 0)
		if err != nil {
			t.Fatal(err)
		}
		return client.New(e.base, k.Key, s), k.Key, s
	}
	e.admin, _, _ = mk(auth.Admin)
	e.read, _, _ = mk(auth.Read)
	e.write, e.wkey, e.wsecret = mk(auth.Write)
	return e
}

func memFile(name string, b []byte) client.UploadFile {
	return client.UploadFile{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

// raw sends a request with the write key and returns status and decoded error body.
func (e *env) raw(t *testing.T, method, path, ctype string, body io.Reader) (int, map[string]string) {
	t.Helper()
	status, _, b := e.send(t, method, path, ctype, body)
	var eb struct{ Error map[string]string }
	json.Unmarshal(b, &eb)
	return status, eb.Error
}

// send sends a request with the write key and returns status, headers and the raw body.
func (e *env) send(t *testing.T, method, path, ctype string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.base+path, body)
	req.SetBasicAuth(e.wkey, e.wsecret) // Basic works as well as the key/secret headers
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func TestAuth(t *testing.T) {
	e := start(t, appliance.Config{})
	resp, err := http.Get(e.base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	for _, c := range []struct {
		name string
		cl   *client.Client
		code string
	}{
		{"no key", client.New(e.base, "", ""), "unauthenticated"},
		{"wrong secret", client.New(e.base, "flx", "nope"), "unauthenticated"},
	} {
		if _, err := c.cl.Job(context.Background(), "job_x"); client.CodeOf(err) != c.code {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	_, err = e.read.UploadFiles(context.Background(), client.UploadOptions{}, memFile("a.jpg", testmedia.JPEG(8, 8, 1)))
	var ce *client.Error
	if !errorsAs(err, &ce) || ce.Status != 403 || ce.Code != "permission_denied" {
		t.Errorf("read key upload: %v", err)
	}
	if _, err := e.read.Job(context.Background(), "job_missing"); client.CodeOf(err) != "not_found" {
		t.Errorf("read key read: %v", err)
	}
}

func errorsAs(err error, target **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestUploadAndMedia(t *testing.T) { onBothMedia(t, testUploadAndMedia) }

func testUploadAndMedia(t *testing.T, cfg appliance.Config) {
	e := start(t, cfg)
	ctx := context.Background()
	img := testmedia.JPEG(64, 48, 7)
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "street", Metadata: json.RawMessage(`{"cam": 2}`)},
		memFile("a.jpg", img), memFile("bad.jpg", img[:100]))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stored) != 1 || len(res.Rejected) != 1 || res.Rejected[0].Name != "bad.jpg" {
		t.Fatalf("upload result %+v", res)
	}
	f := res.Stored[0]
	if f.Width != 64 || f.Height != 48 || !strings.HasPrefix(f.UniqueName, "street-a-") {
		t.Errorf("stored %+v", f)
	}
	resp, err := http.Get(f.URL) // signed: no key needed
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || !bytes.Equal(body, img) || resp.Header.Get("Content-Type") != "image/jpeg" || etag == "" {
		t.Fatalf("media: %d %s %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
	}
	req, _ := http.NewRequest("GET", f.URL, nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, _ = http.DefaultClient.Do(req)
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 206 || !bytes.Equal(part, img[10:20]) {
		t.Errorf("range: %d %q", resp.StatusCode, part)
	}
	resp, err = http.Get(strings.Replace(f.URL, "/media/", "/thumbs/128/", 1))
	if err != nil {
		t.Fatal(err)
	}
	th, _, err := image.Decode(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil || th.Bounds().Dx() != 64 {
		t.Errorf("thumbnail: %d %v", resp.StatusCode, err)
	}
	req, _ = http.NewRequest("GET", f.URL, nil)
	req.Header.Set("If-None-Match", etag)
	if resp, _ = http.DefaultClient.Do(req); resp.StatusCode != 304 {
		t.Errorf("conditional get: %d", resp.StatusCode)
	}
	tampered := strings.Replace(f.URL, "sig=", "sig=x", 1)
	if resp, _ = http.Get(tampered); resp.StatusCode != 401 {
		t.Errorf("tampered url: %d", resp.StatusCode)
	}
}

func multipartBody(t *testing.T, fields map[string]string, files map[string][]byte) (string, *bytes.Buffer) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for name, data := range files {
		w, _ := mw.CreateFormFile("files", name)
		w.Write(data)
	}
	mw.Close()
	return mw.FormDataContentType(), &b
}

func TestUploadBadInput(t *testing.T) {
	e := start(t, appliance.Config{MaxUploadBytes: 1 << 20})
	img := testmedia.JPEG(32, 32, 1)
	cases := []struct {
		name   string
		fields map[string]string
		files  map[string][]byte
		ctype  string
		status int
		field  string
		want   string
	}{
		{"truncated", nil, map[string][]byte{"cut.jpg": img[:len(img)/2]}, "", 400, "files", "not a decodable image"},
		{"empty", nil, map[string][]byte{"zero.jpg": {}}, "", 400, "files", "empty"},
		{"traversal", nil, map[string][]byte{"../../etc/x.jpg": img}, "", 400, "files", "path separators"},
		{"bad metadata", map[string]string{"metadata": `"text"`}, map[string][]byte{"a.jpg": img}, "", 400, "metadata", "JSON object"},
		{"unknown field", map[string]string{"colour": "red"}, map[string][]byte{"a.jpg": img}, "", 400, "colour", "unknown field"},
		{"no files", map[string]string{"collectionName": "x"}, nil, "", 400, "files", "files is required"},
		{"too large", nil, map[string][]byte{"big.jpg": make([]byte, 2<<20)}, "", 413, "", "larger than"},
		{"not multipart", nil, nil, "application/json", 415, "", "multipart/form-data"},
	}
	for _, c := range cases {
		ctype, body := multipartBody(t, c.fields, c.files)
		if c.ctype != "" {
			ctype = c.ctype
		}
		status, eb := e.raw(t, "POST", "/api/v1/lake/files", ctype, body)
		if status != c.status || eb["field"] != c.field || !strings.Contains(eb["message"], c.want) {
			t.Errorf("%s: %d %v; want %d field %q message containing %q", c.name, status, eb, c.status, c.field, c.want)
		}
	}
	var n int
	e.a.Lake.DB().R.QueryRow("SELECT count(*) FROM file").Scan(&n)
	if n != 0 {
		t.Errorf("%d files stored by bad requests", n)
	}
}

func TestJobsRoutes(t *testing.T) {
	e := start(t, appliance.Config{})
	if status, eb := e.raw(t, "GET", "/api/v1/jobs/job_nope", "", nil); status != 404 || eb["code"] != "not_found" {
		t.Errorf("unknown job: %d %v", status, eb)
	}
	if status, eb := e.raw(t, "GET", "/api/v1/jobs?pageSize=5000", "", nil); status != 400 || eb["field"] != "pageSize" {
		t.Errorf("pageSize over max: %d %v", status, eb)
	}
	if status, _ := e.raw(t, "GET", "/api/v1/jobs?status=running,queued", "", nil); status != 200 {
		t.Errorf("list: %d", status)
	}
	if status, eb := e.raw(t, "GET", "/api/v1/nothing-here", "", nil); status != 404 || eb["code"] != "not_found" {
		t.Errorf("unknown route: %d %v", status, eb)
	}
}

func TestOpenAPIServed(t *testing.T) {
	e := start(t, appliance.Config{})
	req, _ := http.NewRequest("GET", e.base+"/api/v1/openapi.yaml", nil)
	req.SetBasicAuth(e.wkey, e.wsecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, path := range []string{"/api/v1/projects:", "/api/v1/dataset-versions/{datasetVersionId}/data:", "/api/v1/lake/files:"} {
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(path)) {
			t.Errorf("openapi.yaml: %d, missing %s", resp.StatusCode, path)
		}
	}
}
