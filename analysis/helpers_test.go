package analysis

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

type testEnv struct {
	svc     *Service
	lake    *lake.Lake
	vectors *vector.Store
	jobs    *job.Queue
	dir     string
}

// newEnv opens a real database, lake, vector store, job queue and Service in
// a temp folder.
func newEnv(t testing.TB, opt Options) *testEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts Python (a model's venv and worker)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		owner string
		fs    fs.FS
	}{{"lake", lake.Migrations}, {"job", job.Migrations()}, {"vector", vector.Migrations}, {"analysis", Migrations}} {
		if err := db.Migrate(ctx, m.owner, m.fs); err != nil {
			t.Fatal(err)
		}
	}
	l, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"), SigningKey: bytes.Repeat([]byte("k"), 32)})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := vector.Open(ctx, db, vector.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	q := job.New(db, job.Options{Workers: 2, PollInterval: 50 * time.Millisecond, ProgressInterval: 20 * time.Millisecond, Logger: log})
	opt.DataDir, opt.Logger = dir, log
	if opt.CallTimeout == 0 {
		opt.CallTimeout = 20 * time.Second
	}
	svc, err := New(ctx, Deps{Lake: l, Vectors: vs, Jobs: q}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Stop(sctx)
		svc.Close()
		vs.Close()
		db.Close()
	})
	return &testEnv{svc: svc, lake: l, vectors: vs, jobs: q, dir: dir}
}

// writePkg writes a package folder from path -> content.
func writePkg(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tarGz packs a folder's contents as .tar.gz.
func tarGz(t testing.TB, dir string) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&os.ModeSymlink != 0 {
			link, _ = os.Readlink(p)
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	return &buf
}

// register registers a package folder.
func (e *testEnv) register(t testing.TB, name string, app Application, dir string) Model {
	t.Helper()
	m, err := e.svc.Register(context.Background(), RegisterRequest{Name: name, Application: string(app), Package: tarGz(t, dir)})
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return m
}

// wait runs a request and waits for its job.
func (e *testEnv) wait(t testing.TB, req RunRequest) (Run, job.Job) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := e.svc.Start(ctx, req)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	j, err := e.jobs.Wait(ctx, run.JobID)
	if err != nil {
		t.Fatal(err)
	}
	run, err = e.svc.Run(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return run, j
}

// The Python side of the test packages: standard library only. JPEGs are
// decoded by ffmpeg (to PPM) in input_fn, since Python has no JPEG decoder.
const decodePy = `
import base64, json, subprocess

def decode(jpeg):
    out = subprocess.run(["ffmpeg", "-v", "error", "-f", "jpeg_pipe", "-i", "-", "-f", "image2pipe",
                          "-c:v", "ppm", "-"], input=jpeg, capture_output=True, check=True).stdout
    parts = out.split(b"\n", 3)
    w, h = map(int, parts[1].split())
    return w, h, parts[3]

COLOURS = {"red": lambda r, g, b: r > 170 and g < 90 and b < 90,
           "green": lambda r, g, b: g > 150 and r < 90 and b < 90,
           "blue": lambda r, g, b: b > 170 and r < 90 and g < 90}

def find(img, colour):
    w, h, pix = img
    test = COLOURS[colour]
    x1 = y1 = 10**9
    x2 = y2 = -1
    n = 0
    for y in range(0, h):
        row = y * w * 3
        for x in range(0, w):
            i = row + 3 * x
            if test(pix[i], pix[i + 1], pix[i + 2]):
                n += 1
                x1, y1, x2, y2 = min(x1, x), min(y1, y), max(x2, x + 1), max(y2, y + 1)
    return [x1, y1, x2, y2] if n > 20 else None
`

// rectPkg is an auto_tagging package: a detector of solid red, green and blue
// rectangles with fixed scores red 0.95, green 0.8, blue 0.3.
func rectPkg(t testing.TB) string {
	return writePkg(t, map[string]string{
		"code/requirements.txt": "# nothing: standard library only\n",
		"label_list.yaml":       "names:\n  0: red\n  1: green\n  2: blue\n",
		"model.pt":              `{"scores": {"red": 0.95, "green": 0.8, "blue": 0.3}}`,
		"code/inference.py": decodePy + `
def model_fn(model_dir):
    with open(model_dir + "/model.pt") as f:
        return json.load(f)

def input_fn(body, content_type):
    assert content_type == "image/jpeg", content_type
    return decode(body)

def predict_fn(img, model):
    out = {"boxes": [], "classes": [], "scores": []}
    for i, c in enumerate(["red", "green", "blue"]):
        b = find(img, c)
        if b:
            out["boxes"].append(b); out["classes"].append(i); out["scores"].append(model["scores"][c])
    return out

def output_fn(pred, accept):
    return json.dumps(pred)
`})
}

// histPkg is an embedding package: a 12-bin colour histogram (4 per channel).
func histPkg(t testing.TB) string {
	return writePkg(t, map[string]string{
		"code/requirements.txt": "",
		"code/inference.py": decodePy + `
def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return decode(body)

def predict_fn(img, model):
    w, h, pix = img
    hist = [0.0] * 12
    for i in range(0, len(pix), 3):
        for c in range(3):
            hist[4 * c + pix[i + c] // 64] += 1
    n = float(w * h)
    return [v / n for v in hist]

def output_fn(pred, accept):
    return {"embedding": pred}
`})
}

// promptPkg is an auto_annotation package: each prompt's description names
// a colour, and the boxes of that colour come back under the prompt's label;
// a prompt whose description is no colour it knows comes back in
// "unsupported", by its description (matched to its label by framelake).
func promptPkg(t testing.TB) string {
	return writePkg(t, map[string]string{
		"code/requirements.txt": "\n",
		"code/inference.py": decodePy + `
def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    assert content_type == "application/json", content_type
    req = json.loads(body)
    return decode(base64.b64decode(req["image"])), req["prompts"]

def predict_fn(data, model):
    img, prompts = data
    out = {"boxes": [], "scores": [], "phrases": [], "unsupported": []}
    for p in prompts:
        if p["description"] not in COLOURS:
            out["unsupported"].append(p["description"])
            continue
        b = find(img, p["description"])
        if b:
            out["boxes"].append(b); out["scores"].append(0.9); out["phrases"].append(p["label"])
    return out

def output_fn(pred, accept):
    return pred
`})
}

// brokenPkg is an auto_tagging package whose inference.py is code.
func brokenPkg(t testing.TB, code string) string {
	return writePkg(t, map[string]string{
		"code/requirements.txt": "",
		"label_list.yaml":       "- thing\n",
		"weights.pt":            "x",
		"code/inference.py":     code,
	})
}

// noopCode answers every image with no detections.
const noopCode = `
def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return body

def predict_fn(data, model):
    return None

def output_fn(pred, accept):
    return b'{"boxes": [], "classes": [], "scores": []}'
`

func contains(t testing.TB, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%q does not contain %q", got, w)
		}
	}
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

func vectorQuery(model, name string) vector.SearchQuery {
	return vector.SearchQuery{Model: model, UniqueName: name, K: 5}
}

func asErr(err error, target **errs.Error) bool { return errors.As(err, target) }
