package main_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// lenEmbedder is an embedding package that needs framelake_tinydep from
// requirements.txt: its vector is [request body length, tinydep.SCALE].
var lenEmbedder = map[string]string{
	"code/requirements.txt": "framelake_tinydep==1.0\n",
	"code/inference.py": `import framelake_tinydep

def model_fn(model_dir):
    return framelake_tinydep.SCALE

def input_fn(body, content_type):
    return body

def predict_fn(data, scale):
    return [float(len(data)), float(scale)]

def output_fn(pred, accept):
    return {"embedding": pred}
`,
}

// tinydepScale is framelake_tinydep.SCALE.
const tinydepScale = 41

// writeWheel writes a pure-Python wheel of framelake_tinydep into dir, made
// here by hand (a wheel is a zip with a dist-info folder), so pip can install
// it with --no-index and no build tools or network.
func writeWheel(t *testing.T, dir string) {
	t.Helper()
	const dist = "framelake_tinydep-1.0.dist-info/"
	files := []struct{ name, body string }{
		{"framelake_tinydep/__init__.py", fmt.Sprintf("SCALE = %d\n", tinydepScale)},
		{dist + "METADATA", "Metadata-Version: 2.1\nName: framelake_tinydep\nVersion: 1.0\n"},
		{dist + "WHEEL", "Wheel-Version: 1.0\nGenerator: framelake-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.body)
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString(dist + "RECORD,,\n")
	w, err := zw.Create(dist + "RECORD")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, record.String())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "framelake_tinydep-1.0-py3-none-any.whl"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startCmd starts the binary with extra environment and stops it (SIGTERM,
// which must exit cleanly) when the test ends.
func startCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState != nil {
			return
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v did not exit cleanly on SIGTERM: %v\n%s", args, err, log.String())
		}
	})
	return cmd
}

// TestModelServe registers a model whose requirement comes from an offline
// wheel folder, serves it with `framelake model serve` over the SageMaker
// protocol, and has the server use it through FRAMELAKE_INFERENCE_ENDPOINT
// with inference_platform aws.
func TestModelServe(t *testing.T) {
	ctx := context.Background()
	data, wheels, pkg := t.TempDir(), t.TempDir(), t.TempDir()
	writeWheel(t, wheels)
	for name, body := range lenEmbedder {
		os.MkdirAll(filepath.Join(pkg, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr, modelAddr := freeAddr(t), freeAddr(t)
	startCmd(t, []string{"FRAMELAKE_MODELS_DIR=", "FRAMELAKE_INFERENCE_PLATFORM=", "FRAMELAKE_PIP_INDEX_URL=",
		"FRAMELAKE_PIP_FIND_LINKS=" + wheels, "FRAMELAKE_INFERENCE_ENDPOINT=http://" + modelAddr},
		"serve", "--data", data, "--addr", addr)
	base := "http://" + addr
	waitHealthy(t, base)
	var key map[string]string
	b, _ := os.ReadFile(filepath.Join(data, "admin-key.json"))
	if err := json.Unmarshal(b, &key); err != nil {
		t.Fatal(err)
	}
	c := client.New(base, key["key"], key["secret"])
	if _, err := c.RegisterModel(ctx, pkg, "lengths", "embedding"); err != nil {
		t.Fatalf("register with the requirement from the wheel folder: %v", err)
	}

	serve := startCmd(t, nil, "model", "serve", "lengths", "--data", data, "--addr", modelAddr)
	mbase := "http://" + modelAddr
	waitPing(t, mbase)
	resp, err := http.Post(mbase+"/invocations", "image/jpeg", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Embedding []float64 }
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(out.Embedding) != 2 || out.Embedding[0] != 5 || out.Embedding[1] != tinydepScale {
		t.Fatalf("POST /invocations: %d %+v %v; want embedding [5 %d]", resp.StatusCode, out, err, tinydepScale)
	}

	// inference_platform aws with no endpoint on the model: the global one.
	res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "c"},
		client.UploadFile{Name: "a.jpg", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(testmedia.JPEG(64, 48, 1))), nil
		}})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	embed := func() client.Job {
		t.Helper()
		started, err := c.GenerateEmbeddingsToLake(ctx, "image", client.AnalysisOptions{ModelName: "lengths", InferencePlatform: "aws"})
		if err != nil {
			t.Fatalf("embeddings with inference_platform aws: %v", err)
		}
		j, err := c.WaitJob(ctx, started.JobID)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	if j := embed(); j.Status != "completed" {
		t.Fatalf("aws run through FRAMELAKE_INFERENCE_ENDPOINT: %+v", j)
	}
	got, _, err := c.GetEmbeddingVector(ctx, []string{res.Stored[0].UniqueName}, "lengths")
	if err != nil || len(got) != 1 || got[0].Embeddings[0] <= 0 || got[0].Embeddings[1] != tinydepScale {
		t.Fatalf("vector written by the served model: %+v %v", got, err)
	}
	// With the served model stopped, the same run fails: it went to the endpoint.
	serve.Process.Signal(syscall.SIGTERM)
	if err := serve.Wait(); err != nil {
		t.Fatalf("model serve exit on SIGTERM: %v", err)
	}
	if j := embed(); j.Status != "failed" || !strings.Contains(j.Error, modelAddr) {
		t.Errorf("aws run with the endpoint down: %s %q; want a failure naming %s", j.Status, j.Error, modelAddr)
	}
}

// waitPing waits for GET /ping of a SageMaker-compatible endpoint to answer
// {"status":"ok"}.
func waitPing(t *testing.T, base string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/ping")
		if err != nil {
			continue
		}
		var st struct{ Status string }
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err == nil && resp.StatusCode == 200 && st.Status == "ok" {
			return
		}
		t.Fatalf("GET /ping: %d %+v %v", resp.StatusCode, st, err)
	}
	t.Fatal("model serve did not answer GET /ping")
}
