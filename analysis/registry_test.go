package analysis

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

// entry is one tar entry of a hand-made archive.
type entry struct {
	name, body, link string
	typ              byte
}

func archive(t *testing.T, es ...entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: e.typ, Linkname: e.link}
		if e.typ == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	zw.Close()
	return &buf
}

var goodEmbedding = []entry{{name: "code/inference.py", body: noopCode}, {name: "code/requirements.txt"}}

func TestModelRegistrationChecks(t *testing.T) {
	e := newEnv(t, Options{MaxPackageBytes: 1 << 20})
	ctx := context.Background()
	reg := func(name, app string, pkg *bytes.Buffer) error {
		_, err := e.svc.Register(ctx, RegisterRequest{Name: name, Application: app, Package: pkg})
		return err
	}
	cases := []struct {
		name, app string
		pkg       *bytes.Buffer
		code      errs.Code
		msg       string
	}{
		{"absolute", "embedding", archive(t, append(goodEmbedding, entry{name: "/etc/evil", body: "x"})...), errs.InvalidArgument, "absolute path"},
		{"dotdot", "embedding", archive(t, append(goodEmbedding, entry{name: "code/../../evil", body: "x"})...), errs.InvalidArgument, "leaves the package folder"},
		{"link-out", "embedding", archive(t, append(goodEmbedding, entry{name: "etc", typ: tar.TypeSymlink, link: "../../../etc"})...), errs.InvalidArgument, "outside the package"},
		{"link-abs", "embedding", archive(t, append(goodEmbedding, entry{name: "pw", typ: tar.TypeSymlink, link: "/etc/passwd"})...), errs.InvalidArgument, "must be relative"},
		{"link-chain", "embedding", archive(t, append(goodEmbedding, entry{name: "here", typ: tar.TypeSymlink, link: "."},
			entry{name: "code/up", typ: tar.TypeSymlink, link: "../here/.."})...), errs.InvalidArgument, "resolves outside the package"},
		{"write-through-link", "embedding", archive(t, append(goodEmbedding, entry{name: "sub", typ: tar.TypeSymlink, link: "code"},
			entry{name: "sub/x.py", body: "x"})...), errs.InvalidArgument, "written through a link"},
		{"device", "embedding", archive(t, append(goodEmbedding, entry{name: "null", typ: tar.TypeChar})...), errs.InvalidArgument, "special file"},
		{"oversize", "embedding", archive(t, append(goodEmbedding, entry{name: "big.bin", body: strings.Repeat("x", 2<<20)})...), errs.TooLarge, "larger than the limit"},
		{"not-gzip", "embedding", bytes.NewBufferString("plain text"), errs.InvalidArgument, "not a .tar.gz"},
		{"no-inference", "embedding", archive(t, entry{name: "code/requirements.txt"}), errs.InvalidArgument, "no code/inference.py"},
		{"no-labels", "auto_tagging", archive(t, append(goodEmbedding, entry{name: "m.pt", body: "x"})...), errs.InvalidArgument, "no label_list.yaml"},
		{"no-pt", "autotagging", archive(t, append(goodEmbedding, entry{name: "label_list.yaml", body: "- a\n"})...), errs.InvalidArgument, "no .pt model file"},
		{"bad-app", "detection", archive(t, goodEmbedding...), errs.InvalidArgument, "not one of auto_tagging"},
		{"default", "embedding", archive(t, goodEmbedding...), errs.InvalidArgument, "reserved"},
		{"bad name!", "embedding", archive(t, goodEmbedding...), errs.InvalidArgument, "must be 1 to 100"},
	}
	for _, c := range cases {
		err := reg(c.name, c.app, c.pkg)
		if errs.CodeOf(err) != c.code || !strings.Contains(errText(err), c.msg) {
			t.Errorf("%s: got %v (%s), want %s %q", c.name, err, errs.CodeOf(err), c.code, c.msg)
		}
	}
	// Nothing was left behind.
	ents, _ := os.ReadDir(filepath.Join(e.dir, "models"))
	if len(ents) != 1 {
		t.Errorf("models folder holds %d entries after failed registrations", len(ents))
	}
	if ms, _ := e.svc.Models(ctx); len(ms) != 0 {
		t.Errorf("models %+v", ms)
	}
	// A package wrapped in one folder, the autotagging alias, labels in a flow list.
	m, err := e.svc.Register(ctx, RegisterRequest{Name: "wrapped", Application: "autotagging", Package: archive(t,
		entry{name: "mymodel/code/inference.py", body: noopCode}, entry{name: "mymodel/code/requirements.txt"},
		entry{name: "mymodel/weights/best.pt", body: "x"}, entry{name: "mymodel/label_list.yaml", body: "names: ['car', \"bus\", truck]  # coco subset\n"},
		entry{name: "mymodel/labels", typ: tar.TypeSymlink, link: "label_list.yaml"})})
	if err != nil || m.Application != AutoTagging || strings.Join(m.Labels, ",") != "car,bus,truck" {
		t.Fatalf("%+v %v", m, err)
	}
	if err := reg("wrapped", "embedding", archive(t, goodEmbedding...)); errs.CodeOf(err) != errs.AlreadyExists {
		t.Errorf("duplicate name: %v", err)
	}
}

func TestModelPipInstall(t *testing.T) {
	wheels := t.TempDir() // an empty offline wheel folder: pip must fail, offline, with its message
	e := newEnv(t, Options{PipFindLinks: wheels})
	_, err := e.svc.Register(context.Background(), RegisterRequest{Name: "needs-numpy", Application: "embedding",
		Package: archive(t, entry{name: "code/inference.py", body: noopCode}, entry{name: "code/requirements.txt", body: "framelake-no-such-package==1.0\n"})})
	if errs.CodeOf(err) != errs.InvalidArgument || !strings.Contains(errText(err), "installing code/requirements.txt failed") ||
		!strings.Contains(errText(err), "framelake-no-such-package") {
		t.Fatalf("got %v", err)
	}
	if _, err := e.svc.Model(context.Background(), "needs-numpy"); !errs.Is(err, errs.NotFound) {
		t.Errorf("failed registration is listed: %v", err)
	}
}

// TestModelPipInstallsIntoVenv: a requirement from an offline wheel folder
// is installed into the model's own environment (by the interpreter's pip,
// the venv has none) and the package imports it.
func TestModelPipInstallsIntoVenv(t *testing.T) {
	wheels := t.TempDir()
	files := [][2]string{{"framelake_demo/__init__.py", "VALUE = 42\n"},
		{"framelake_demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: framelake-demo\nVersion: 1.0\n"},
		{"framelake_demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}}
	var record strings.Builder
	for _, f := range files {
		sum := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(f[1]))
	}
	record.WriteString("framelake_demo-1.0.dist-info/RECORD,,\n")
	files = append(files, [2]string{"framelake_demo-1.0.dist-info/RECORD", record.String()})
	whl, err := os.Create(filepath.Join(wheels, "framelake_demo-1.0-py3-none-any.whl"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(whl)
	for _, f := range files {
		w, _ := zw.Create(f[0])
		w.Write([]byte(f[1]))
	}
	if err := zw.Close(); err != nil || whl.Close() != nil {
		t.Fatal(err)
	}
	e := newEnv(t, Options{PipFindLinks: wheels})
	ctx := context.Background()
	e.register(t, "with-dep", Embedding, writePkg(t, map[string]string{"code/requirements.txt": "framelake-demo==1.0\n",
		"code/inference.py": `
import framelake_demo
def model_fn(d): return None
def input_fn(b, c): return b
def predict_fn(x, m): return [float(framelake_demo.VALUE), 1.0]
def output_fn(p, a): return {"embedding": p}
`}))
	r, err := e.svc.LocalRunner(ctx, "with-dep")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Invoke(ctx, Request{Body: []byte("x"), ContentType: "image/jpeg"})
	if err != nil || !strings.Contains(string(resp.Body), "[42.0, 1.0]") {
		t.Fatalf("%s %v", resp.Body, err)
	}
}

func TestParseLabels(t *testing.T) {
	for in, want := range map[string]string{
		"- person\n- car\n":                       "person,car",
		"names:\n  - person\n  - 'traffic light'": "person,traffic light",
		"nc: 2\nnames: [person, car]\n":           "person,car",
		"names:\n  0: person\n  1: car\n":         "person,car",
		"1: car\n0: person\n":                     "person,car",
		"person\ncar\n":                           "person,car",
		"# classes\n- \"a # b\"\n":                "a # b",
	} {
		got, err := parseLabels([]byte(in))
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "names:\n", "0: a\n2: b\n"} {
		if _, err := parseLabels([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
