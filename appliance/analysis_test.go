package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

// A detector of solid red squares, standard library only: the JPEG is turned
// into PPM by ffmpeg, since Python has no JPEG decoder of its own.
const redDetector = `
import json, subprocess

def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    out = subprocess.run(["ffmpeg", "-v", "error", "-f", "jpeg_pipe", "-i", "-", "-f", "image2pipe", "-c:v", "ppm", "-"],
                         input=body, capture_output=True, check=True).stdout
    parts = out.split(b"\n", 3)
    w, h = map(int, parts[1].split())
    return w, h, parts[3]

def predict_fn(img, model):
    w, h, pix = img
    xs, ys = [], []
    for y in range(h):
        for x in range(w):
            i = 3 * (y * w + x)
            if pix[i] > 170 and pix[i + 1] < 90 and pix[i + 2] < 90:
                xs.append(x); ys.append(y)
    if len(xs) < 20:
        return {"boxes": [], "classes": [], "scores": []}
    return {"boxes": [[min(xs), min(ys), max(xs) + 1, max(ys) + 1]], "classes": [0], "scores": [0.9]}

def output_fn(pred, accept):
    return json.dumps(pred)
`

const meanEmbedder = `
def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return body

def predict_fn(data, model):
    return [len(data) % 7, 1.0, 2.0]

def output_fn(pred, accept):
    return {"embedding": pred}
`

func modelFolder(t *testing.T, files map[string]string) string {
	if testing.Short() {
		t.Skip("-short: starts Python (a model's venv and worker)")
	}
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func redSquarePNG(w, h, x, y, size int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for yy := y; yy < y+size; yy++ {
		for xx := x; xx < x+size; xx++ {
			img.Set(xx, yy, color.RGBA{255, 0, 0, 255})
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func TestAnalysisOverHTTP(t *testing.T) { onBothMedia(t, testAnalysisOverHTTP) }

func testAnalysisOverHTTP(t *testing.T, cfg appliance.Config) {
	e := start(t, cfg)
	ctx := context.Background()
	det := modelFolder(t, map[string]string{"code/inference.py": redDetector, "code/requirements.txt": "",
		"label_list.yaml": "- red_square\n", "model.pt": "weights"})

	if _, err := e.write.RegisterModel(ctx, det, "reds", "autotagging"); client.CodeOf(err) != "permission_denied" {
		t.Fatalf("write key registering: %v", err)
	}
	reg, err := e.admin.RegisterModel(ctx, det, "reds", "autotagging")
	if err != nil || !reg.Success || reg.Application != "auto_tagging" || reg.ModelName != "reds" {
		t.Fatalf("%+v %v", reg, err)
	}
	if _, err := e.admin.RegisterModel(ctx, det, "reds", "auto_tagging"); client.CodeOf(err) != "already_exists" {
		t.Fatalf("duplicate: %v", err)
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "squares"},
		memFile("sq.png", redSquarePNG(400, 300, 100, 60, 80)), memFile("blank.png", redSquarePNG(100, 100, 0, 0, 0)))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	coll, err := e.a.Lake.CollectionByName(ctx, "squares")
	if err != nil {
		t.Fatal(err)
	}
	started, err := e.write.AutoTagCollection(ctx, coll.ID, client.AnalysisOptions{ModelName: "reds"})
	if err != nil || started.JobID == "" || started.RunID == "" {
		t.Fatalf("%+v %v", started, err)
	}
	j, err := e.write.WaitJob(ctx, started.JobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("%+v %v", j, err)
	}
	d, err := e.read.GetFileDetails(ctx, res.Stored[0].UniqueName, map[string]bool{"Tags": true})
	if err != nil || !strings.Contains(toJSON(d["Tags"]), "red_square") {
		t.Errorf("details %v %v", d, err)
	}
	n, err := e.read.GetItemCountFromCollection(ctx, coll.ID, "annotation(label = red_square AND source = machine AND operation = "+started.RunID+")", nil)
	if err != nil || len(n) != 1 || n[0].Count != 1 {
		t.Errorf("count by run: %v %v", n, err)
	}
	runs, total, err := e.read.Runs(ctx, "reds", 0, 10)
	if err != nil || total != 1 || runs[0].Counts.Boxes != 1 || runs[0].Counts.Items != 2 || runs[0].Status != "completed" ||
		!strings.Contains(string(runs[0].Params), `"confidence_threshold":0.5`) {
		t.Errorf("runs %d %+v %v", total, runs, err)
	}

	// The remote path against our own server: the same package behind
	// InvocationHandler, as framelake model serve runs it.
	local, err := e.a.Analysis.LocalRunner(ctx, "reds")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(analysis.InvocationHandler(local, 64<<20))
	defer srv.Close()
	if _, err := e.admin.SetModelEndpoint(ctx, "reds", srv.URL); err != nil {
		t.Fatal(err)
	}
	remote, err := e.write.GenerateAutoTagsToLake(ctx, "image", client.AnalysisOptions{ModelName: "reds", InferencePlatform: "aws"})
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := e.write.WaitJob(ctx, remote.JobID); j.Status != "completed" {
		t.Fatalf("remote run: %+v", j)
	}
	if r, err := e.read.Run(ctx, remote.RunID); err != nil || r.Counts.Boxes != 1 || r.InferencePlatform != "aws" {
		t.Errorf("remote run %+v %v", r, err)
	}

	// Embeddings land in the vector store under the model's name.
	emb := modelFolder(t, map[string]string{"code/inference.py": meanEmbedder, "code/requirements.txt": ""})
	if _, err := e.admin.RegisterModel(ctx, emb, "lens", "embedding"); err != nil {
		t.Fatal(err)
	}
	es, err := e.write.GenerateEmbeddingsToLake(ctx, "image", client.AnalysisOptions{ModelName: "lens"})
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := e.write.WaitJob(ctx, es.JobID); j.Status != "completed" {
		t.Fatalf("embeddings: %+v", j)
	}
	vecs, missing, err := e.read.GetEmbeddingVector(ctx, []string{res.Stored[0].UniqueName}, "lens")
	if err != nil || len(missing) != 0 || len(vecs) != 1 || len(vecs[0].Embeddings) != 3 {
		t.Errorf("vectors %+v %v %v", vecs, missing, err)
	}
	ms, err := e.read.Models(ctx)
	if err != nil || len(ms) != 2 || ms[1].Name != "reds" || ms[1].Endpoint != srv.URL || ms[1].Labels[0] != "red_square" {
		t.Errorf("models %+v %v", ms, err)
	}
}

func TestAnalysisFunctionsBadInput(t *testing.T) {
	e := start(t, appliance.Config{})
	cases := []struct{ fn, body, field, msg string }{
		{"auto_tag_collection", `{"collection_id": "col_x", "content_type": "image"}`, "content_type", "unknown field"},
		{"generate_auto_tags_to_lake", `{"content_type": "image", "colour": 1}`, "colour", "unknown field"},
		{"generate_auto_tags_to_lake", `{"content_type": "image"}`, "model_name", "no default auto_tagging model is installed: run `make models`"},
		{"generate_auto_tags_to_lake", `{"content_type": "image", "model_id": "default", "confidence_threshold": 1.5}`, "confidence_threshold", "between 0 and 1"},
		{"generate_embeddings_to_lake", `{"content_type": "image", "input_resolution": [1, 2]}`, "input_resolution", "unknown field"},
		{"generate_embeddings_for_collection", `{}`, "collection_id", "required"},
		{"generate_auto_annotations_to_lake", `{"content_type": "image"}`, "prompts", "required"},
		{"auto_tag_collection", `{"collection_id": "c", "model_name": "a", "model_id": "b"}`, "model_name", "differ"},
	}
	for _, c := range cases {
		status, body := e.raw(t, "POST", "/api/v1/client/"+c.fn, "application/json", strings.NewReader(c.body))
		if status != 400 || body["field"] != c.field || !strings.Contains(body["message"], c.msg) {
			t.Errorf("%s %s: %d %v", c.fn, c.body, status, body)
		}
	}
	var buf bytes.Buffer
	status, body := e.raw(t, "POST", "/api/v1/client/register_model", "application/json", &buf)
	if status != 403 {
		t.Errorf("register_model with a write key: %d %v", status, body)
	}
}

// TestModelSurvivesRestart: a registered model is there after a reopen.
func TestModelSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	pkg := modelFolder(t, map[string]string{"code/inference.py": meanEmbedder, "code/requirements.txt": ""})
	var tgz bytes.Buffer
	if err := client.PackFolder(&tgz, pkg); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Analysis.Register(ctx, analysis.RegisterRequest{Name: "kept", Application: "embedding", Package: &tgz}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a, err = appliance.Open(ctx, appliance.Config{DataDir: dir, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	r, err := a.Analysis.LocalRunner(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := r.Invoke(cctx, analysis.Request{Body: []byte("abc"), ContentType: "image/jpeg"})
	if err != nil || !strings.Contains(string(resp.Body), `"embedding": [3, 1.0, 2.0]`) {
		t.Fatalf("%s %v", resp.Body, err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
