package appliance_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
)

// TestDefaultModelNameOverHTTP: the default embedding model is listed as
// default-embedding, and that name (or "default", or none for find_similar)
// works in runs, get_embedding_vector, find_similar and inserts.
func TestDefaultModelNameOverHTTP(t *testing.T) {
	models := t.TempDir() // what `make models` builds, with only an embedding package
	if err := os.CopyFS(filepath.Join(models, "embedding"), os.DirFS(modelFolder(t, map[string]string{
		"code/inference.py": meanEmbedder, "code/requirements.txt": ""}))); err != nil {
		t.Fatal(err)
	}
	e := start(t, appliance.Config{ModelsDir: models})
	ctx := context.Background()
	ms, err := e.read.Models(ctx)
	if err != nil || len(ms) != 1 || ms[0].Name != "default-embedding" || !ms[0].SystemDefault {
		t.Fatalf("models %+v %v", ms, err)
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "pics"},
		memFile("a.png", redSquarePNG(60, 40, 0, 0, 10)), memFile("b.png", redSquarePNG(50, 50, 0, 0, 20)))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	names := []string{res.Stored[0].UniqueName, res.Stored[1].UniqueName}
	coll, err := e.a.Lake.CollectionByName(ctx, "pics")
	if err != nil {
		t.Fatal(err)
	}
	started, err := e.write.GenerateEmbeddingsForCollection(ctx, coll.ID, client.AnalysisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := e.write.WaitJob(ctx, started.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("%+v %v", j, err)
	}
	for _, name := range []string{"default", "default-embedding"} {
		runs, total, err := e.read.Runs(ctx, name, 0, 10)
		if err != nil || total != 1 || runs[0].ModelName != "default-embedding" || runs[0].VectorModel != "default-embedding" {
			t.Errorf("runs of %q: %d %+v %v", name, total, runs, err)
		}
		vecs, missing, err := e.read.GetEmbeddingVector(ctx, names, name)
		if err != nil || len(vecs) != 2 || len(missing) != 0 {
			t.Errorf("get_embedding_vector %q: %+v %v %v", name, vecs, missing, err)
		}
	}
	near, err := e.read.FindSimilar(ctx, client.SimilarQuery{UniqueName: names[0], K: 1})
	if err != nil || len(near) != 1 || near[0].UniqueName != names[1] {
		t.Errorf("find_similar without model_name: %+v %v", near, err)
	}
	if _, err := e.write.InsertImageEmbeddings(ctx, []client.Embedding{{UniqueName: names[0], Embeddings: []float32{9, 9, 9}}}, "default", 3); err != nil {
		t.Fatal(err)
	}
	if vecs, _, err := e.read.GetEmbeddingVector(ctx, names[:1], "default-embedding"); err != nil || len(vecs) != 1 || vecs[0].Embeddings[0] != 9 {
		t.Errorf("an insert under default reads back under default-embedding: %+v %v", vecs, err)
	}
	_, _, err = e.read.GetEmbeddingVector(ctx, names, "system-embedding-0123456789ab")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 404 || strings.Contains(ce.Message, "vector:") ||
		!strings.Contains(ce.Message, "models with embeddings: default-embedding") {
		t.Errorf("unknown model: %v", err)
	}
}

// TestExampleColourTagger registers the README's example package through the
// server, as the README's curl does, and tags a collection with it; then
// replaces it, which needs replace=true.
func TestExampleColourTagger(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Python (a model's venv and worker)")
	}
	e := start(t, appliance.Config{})
	ctx := context.Background()
	pkg := filepath.Join("..", "examples", "models", "colour-tagger")
	reg, err := e.admin.RegisterModel(ctx, pkg, "colour-tagger", "auto_tagging")
	if err != nil || reg.ModelName != "colour-tagger" {
		t.Fatalf("%+v %v", reg, err)
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "colours"},
		memFile("red.png", halves(color.RGBA{220, 20, 20, 255}, color.RGBA{220, 20, 20, 255})),
		memFile("sea-and-sand.png", halves(color.RGBA{20, 60, 220, 255}, color.RGBA{240, 220, 40, 255})))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	coll, err := e.a.Lake.CollectionByName(ctx, "colours")
	if err != nil {
		t.Fatal(err)
	}
	conf := 0.3
	started, err := e.write.AutoTagCollection(ctx, coll.ID, client.AnalysisOptions{ModelName: "colour-tagger", ConfidenceThreshold: &conf})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := e.write.WaitJob(ctx, started.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("%+v %v", j, err)
	}
	for i, want := range [][]string{{"red"}, {"blue", "yellow"}} {
		d, err := e.read.GetFileDetails(ctx, res.Stored[i].UniqueName, map[string]bool{"Tags": true})
		for _, tag := range want {
			if err != nil || !strings.Contains(toJSON(d["Tags"]), `"`+tag+`"`) {
				t.Errorf("%s: tags %v %v, want %s", res.Stored[i].Name, d["Tags"], err, tag)
			}
		}
	}
	if runs, total, err := e.read.Runs(ctx, "colour-tagger", 0, 10); err != nil || total != 1 || runs[0].Counts.Tags != 3 {
		t.Errorf("runs %d %+v %v", total, runs, err)
	}

	if _, err := e.admin.RegisterModel(ctx, pkg, "colour-tagger", "auto_tagging"); client.CodeOf(err) != "already_exists" ||
		!strings.Contains(err.Error(), "replace=true") {
		t.Errorf("registering again: %v", err)
	}
	var tgz bytes.Buffer
	if err := client.PackFolder(&tgz, pkg); err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("model_name", "colour-tagger")
	mw.WriteField("application", "auto_tagging")
	mw.WriteField("replace", "true")
	w, _ := mw.CreateFormFile("package", "colour-tagger.tar.gz")
	w.Write(tgz.Bytes())
	mw.Close()
	k, secret, err := e.a.Keys.Create(ctx, "admin2", auth.Admin, 0)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", e.base+"/api/v1/client/register_model", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth(k.Key, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("replace=true: %d", resp.StatusCode)
	}
}

// halves is a 120x80 PNG whose left half is a and right half b.
func halves(a, b color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 120, 80))
	for y := range 80 {
		for x := range 120 {
			c := a
			if x >= 60 {
				c = b
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}
