package appliance_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

// envEmbedder returns its whole environment as the embedding: one float per
// character of "NAME=value\n" lines, padded to a fixed dimension.
const envEmbedder = `
import os

def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return body

def predict_fn(data, model):
    text = "".join(k + "=" + v + "\n" for k, v in sorted(os.environ.items()))[:4000]
    return [float(ord(c)) for c in text.ljust(4000)]

def output_fn(pred, accept):
    return {"embedding": pred}
`

// TestModelProcessGetsCleanEnvironment: secrets in the server's environment
// (framelake's own, cloud keys, API tokens) and the URL-signing key never
// reach a model's Python process; the model itself reports what it sees.
func TestModelProcessGetsCleanEnvironment(t *testing.T) {
	secrets := map[string]string{
		"FRAMELAKE_ADMIN_SECRET": "s3cret-framelake", "AWS_ACCESS_KEY_ID": "AKIAHOSTILE",
		"AWS_SECRET_ACCESS_KEY": "aws-hostile-secret", "OPENAI_API_KEY": "sk-hostile", "GITHUB_TOKEN": "ghp_hostile",
		"DATABASE_URL": "postgres://u:p@h/db",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	e := start(t, appliance.Config{})
	ctx := context.Background()
	dir := modelFolder(t, map[string]string{"code/inference.py": envEmbedder, "code/requirements.txt": ""})
	if _, err := e.admin.RegisterModel(ctx, dir, "envdump", "embedding"); err != nil {
		t.Fatal(err)
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{}, memFile("a.png", redSquarePNG(32, 32, 0, 0, 4)))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	run, err := e.write.GenerateEmbeddingsToLake(ctx, "image", client.AnalysisOptions{ModelName: "envdump"})
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := e.write.WaitJob(ctx, run.JobID); j.Status != "completed" {
		t.Fatalf("run: %+v", j)
	}
	vecs, _, err := e.read.GetEmbeddingVector(ctx, []string{res.Stored[0].UniqueName}, "envdump")
	if err != nil || len(vecs) != 1 {
		t.Fatalf("%+v %v", vecs, err)
	}
	var sb strings.Builder
	for _, f := range vecs[0].Embeddings {
		sb.WriteRune(rune(f))
	}
	seen := strings.TrimSpace(sb.String())
	if !strings.Contains(seen, "PATH=") {
		t.Fatalf("the model reported no environment: %q", seen)
	}
	signing, err := os.ReadFile(filepath.Join(e.dir, "url-signing.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(seen, "\n") {
		name, value, _ := strings.Cut(line, "=")
		if strings.HasPrefix(name, "FRAMELAKE_") || strings.HasPrefix(name, "AWS_") ||
			strings.Contains(name, "KEY") || strings.Contains(name, "TOKEN") || strings.Contains(name, "SECRET") {
			t.Errorf("the model sees %s", name)
		}
		for k, v := range secrets {
			if strings.Contains(value, v) {
				t.Errorf("the model sees %s's value in %s", k, name)
			}
		}
		if strings.Contains(value, hex.EncodeToString(signing)) || strings.Contains(value, string(signing)) {
			t.Errorf("the model sees the signing key in %s", name)
		}
		if strings.Contains(value, "framelake.db") {
			t.Errorf("the model is pointed at the database in %s", name)
		}
	}
}

// TestHostilePackageOverHTTP: a package that escapes is refused to the admin
// with a 400 naming the entry, and the models folder is as before.
func TestHostilePackageOverHTTP(t *testing.T) {
	e := start(t, appliance.Config{})
	c := e.creds(t)
	before := treeOf(t, filepath.Join(e.dir, "models"))
	tmpBefore := treeOf(t, filepath.Join(e.dir, "media", "tmp"))
	for _, bad := range []struct{ name, link string }{{"../../escape.txt", ""}, {"/etc/cron.d/x", ""}, {"k", "../../url-signing.key"}} {
		var tgz bytes.Buffer
		zw := gzip.NewWriter(&tgz)
		tw := tar.NewWriter(zw)
		tw.WriteHeader(&tar.Header{Name: "code/inference.py", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
		tw.Write([]byte("\n"))
		h := &tar.Header{Name: bad.name, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}
		if bad.link != "" {
			h = &tar.Header{Name: bad.name, Typeflag: tar.TypeLink, Linkname: bad.link}
		}
		tw.WriteHeader(h)
		if bad.link == "" {
			tw.Write([]byte("x"))
		}
		tw.Close()
		zw.Close()
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("model_name", "evil")
		mw.WriteField("application", "embedding")
		part, _ := mw.CreateFormFile("package", "evil.tar.gz")
		part.Write(tgz.Bytes())
		part.Write(bytes.Repeat([]byte{0}, 5<<20)) // past the form's memory: spooled to a temp file
		mw.Close()
		status, b := e.hostile(t, c.admin, "POST", "/api/v1/client/register_model", mw.FormDataContentType(), &body)
		if status != 400 || !strings.Contains(string(b), "archive entry") {
			t.Errorf("%s: %d %s", bad.name, status, b)
		}
	}
	if after := treeOf(t, filepath.Join(e.dir, "models")); after != before {
		t.Errorf("models folder changed:\n%s\nnow\n%s", before, after)
	}
	if after := treeOf(t, filepath.Join(e.dir, "media", "tmp")); after != tmpBefore {
		t.Errorf("upload temp folder changed:\n%s\nnow\n%s", tmpBefore, after)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.dir), "escape.txt")); err == nil {
		t.Error("an entry escaped the data folder")
	}
}

// treeOf lists the files under dir, one path a line.
func treeOf(t *testing.T, dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	return strings.Join(out, "\n")
}
