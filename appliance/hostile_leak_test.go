package appliance_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/testmedia"
)

// tarGz is a .tar.gz of hand-made headers and bodies.
func tarGz(t *testing.T, hs ...*tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for _, h := range hs {
		body := strings.Repeat("x", int(h.Size))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

func registerForm(name string, pkg []byte) (string, *bytes.Buffer) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("model_name", name)
	mw.WriteField("application", "embedding")
	part, _ := mw.CreateFormFile("package", name+".tar.gz")
	part.Write(pkg)
	mw.Close()
	return mw.FormDataContentType(), &body
}

// TestErrorsLeakNothing drives the failures whose text comes from the file
// system or the database, not from framelake: a package whose link does
// not resolve, a package the disk cannot take, an upload whose temp folder
// is gone, routes and methods that do not exist. Each answer is checked by
// hostile's noLeak (no data folder, /tmp/, sqlite, SELECT, goroutine, .go:).
func TestErrorsLeakNothing(t *testing.T) {
	e := start(t, appliance.Config{})
	c := e.creds(t)
	code := &tar.Header{Name: "code/inference.py", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}
	reqs := &tar.Header{Name: "code/requirements.txt", Mode: 0o644, Typeflag: tar.TypeReg}
	packages := map[string][]byte{
		"dangling": tarGz(t, code, reqs, &tar.Header{Name: "w", Typeflag: tar.TypeSymlink, Linkname: "missing/file"}),
		"loop": tarGz(t, code, reqs, &tar.Header{Name: "a", Typeflag: tar.TypeSymlink, Linkname: "b"},
			&tar.Header{Name: "b", Typeflag: tar.TypeSymlink, Linkname: "a"}),
		"file-over-folder":  tarGz(t, code, reqs, &tar.Header{Name: "code", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}),
		"folder-under-file": tarGz(t, code, reqs, &tar.Header{Name: "code/inference.py/x", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}),
		"truncated":         tarGz(t, code, reqs)[:40],
		"folder-over-file":  tarGz(t, code, reqs, &tar.Header{Name: "code/inference.py/", Mode: 0o755, Typeflag: tar.TypeDir}),
	}
	for name, pkg := range packages {
		ctype, body := registerForm("leak-"+name, pkg)
		status, b := e.hostile(t, c.admin, "POST", "/api/v1/client/register_model", ctype, body)
		if status != 400 {
			t.Errorf("package %s: %d %s, want a 400 naming what is wrong", name, status, b)
		}
	}

	// The media store's temp folders replaced by files: uploads that spill
	// to disk fail inside the server.
	tmp := filepath.Join(e.dir, "media", "tmp")
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range ents {
		p := filepath.Join(tmp, en.Name())
		os.RemoveAll(p)
		os.WriteFile(p, nil, 0o644)
	}
	big := testmedia.JPEG(1200, 1200, 1)
	var files = map[string][]byte{}
	for i := range 12 { // past the form's 4 MiB in memory
		files[strings.Repeat("f", i+1)+".jpg"] = append(bytes.Clone(big), bytes.Repeat([]byte{0}, 512<<10)...)
	}
	ctype, body := multipartBody(t, nil, files)
	if status, b := e.hostile(t, c.write, "POST", "/api/v1/lake/files", ctype, body); status != 500 {
		// A 500 is the point: the internal error's text (with the temp
		// path) must stay in the log.
		t.Errorf("upload with the temp folders gone: %d %.300s, want the internal error this provokes", status, b)
	}

	for _, r := range [][2]string{{"GET", "/api/v1/nothing"}, {"DELETE", "/api/v1/jobs"}, {"GET", "/api/v1/jobs/%00"},
		{"GET", "/api/v1/projects/..%2F..%2Fetc"}, {"GET", "/media/%2e%2e%2fframelake.db?exp=1&sig=x"}} {
		if status, b := e.hostile(t, c.admin, r[0], r[1], "", nil); status < 400 {
			t.Errorf("%s %s: %d %.200s", r[0], r[1], status, b)
		}
	}
}
