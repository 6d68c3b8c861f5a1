package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/testmedia"
)

func TestVersion(t *testing.T) {
	out, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "framelake ") || !strings.Contains(out, "libvips 8.") ||
		!strings.Contains(out, "go1.") {
		t.Fatalf("version: %v %q", err, out)
	}
	if out, err := run(t, "version", "extra"); err == nil {
		t.Errorf("version with an argument succeeded: %q", out)
	}
}

// TestKeysLifecycle creates keys with and without a lifetime, revokes one and
// reads them back as JSON and as the table an operator sees.
func TestKeysLifecycle(t *testing.T) {
	data := t.TempDir()
	for _, args := range [][]string{
		{"--name", "labeller", "--role", "read", "--expires", "12h"},
		{"--name", "trainer", "--role", "write", "--expires", "30d"},
		{"--name", "old", "--role", "admin"},
	} {
		if out, err := run(t, append([]string{"keys", "create", "--data", data}, args...)...); err != nil {
			t.Fatalf("keys create %v: %v %s", args, err, out)
		}
	}
	keys := keyList(t, data)
	if len(keys) != 3 {
		t.Fatalf("keys list: %d keys, want 3: %+v", len(keys), keys)
	}
	byName := map[string]auth.Key{}
	for _, k := range keys {
		byName[k.Name] = k
	}
	for name, want := range map[string]time.Duration{"labeller": 12 * time.Hour, "trainer": 30 * 24 * time.Hour} {
		k := byName[name]
		if k.ExpiresAt == nil || k.ExpiresAt.Sub(k.CreatedAt).Round(time.Minute) != want {
			t.Errorf("%s expires %v after creation, want %v", name, k.ExpiresAt, want)
		}
	}
	if byName["labeller"].Role != auth.Read || byName["old"].ExpiresAt != nil {
		t.Errorf("roles or expiry wrong: %+v", keys)
	}

	if out, err := run(t, "keys", "revoke", "--data", data, byName["old"].Key); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if k := findKey(keyList(t, data), "old"); k.RevokedAt == nil {
		t.Errorf("revoked key has no revokedAt: %+v", k)
	}
	table, err := run(t, "keys", "list", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KEY", "labeller", "read", "expires " + time.Now().Add(30*24*time.Hour).UTC().Format(time.DateOnly), "revoked "} {
		if !strings.Contains(table, want) {
			t.Errorf("keys list table lacks %q:\n%s", want, table)
		}
	}
}

func TestKeysBadInput(t *testing.T) {
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--role", "owner"}, "owner"},
		{[]string{"create", "--expires", "soon"}, "--expires"},
		{[]string{"create", "--expires", "-3h"}, "--expires"},
		{[]string{"revoke"}, "usage"},
		{[]string{"revoke", "fk_nosuchkey"}, "fk_nosuchkey"},
		{[]string{"rotate"}, "unknown keys command"},
	} {
		args := append([]string{"keys", c.args[0], "--data", data}, c.args[1:]...)
		out, err := run(t, args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("keys %v: err %v, output %q, want an error naming %q", c.args, err, out, c.want)
		}
	}
	if keys := keyList(t, data); len(keys) != 0 {
		t.Errorf("bad input made keys: %+v", keys)
	}
}

// TestServeFromEnvironment starts the server with FRAMELAKE_DATA and
// FRAMELAKE_ADDR instead of flags, and a key made with the same environment
// works against it.
func TestServeFromEnvironment(t *testing.T) {
	data := filepath.Join(t.TempDir(), "lake")
	addr := freeAddr(t)
	env := append(os.Environ(), "FRAMELAKE_DATA="+data, "FRAMELAKE_ADDR="+addr)
	srv := exec.Command(bin, "serve")
	srv.Env = env
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	waitHealthy(t, "http://"+addr)
	if _, err := os.Stat(filepath.Join(data, "admin-key.json")); err != nil {
		t.Fatalf("FRAMELAKE_DATA was not used: %v", err)
	}

	create := exec.Command(bin, "keys", "create", "--name", "env", "--role", "read", "--json")
	create.Env = env
	out, err := create.Output()
	var key map[string]string
	if err != nil || json.Unmarshal(out, &key) != nil {
		t.Fatalf("keys create with FRAMELAKE_DATA: %v %s", err, out)
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/jobs", nil)
	req.SetBasicAuth(key["key"], key["secret"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /api/v1/jobs with the env-made key: %d", resp.StatusCode)
	}
	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Errorf("serve exit: %v", err)
	}
}

func keyList(t *testing.T, data string) []auth.Key {
	t.Helper()
	out, err := exec.Command(bin, "keys", "list", "--data", data, "--json").Output()
	var keys []auth.Key
	if err != nil || json.Unmarshal(out, &keys) != nil {
		t.Fatalf("keys list --json: %v %s", err, out)
	}
	return keys
}

func findKey(keys []auth.Key, name string) auth.Key {
	for _, k := range keys {
		if k.Name == name {
			return k
		}
	}
	return auth.Key{}
}

// TestAugmentBoxesShape: augment --boxes takes the REST API's box shape
// (label, x, y, width, height) and refuses any other field by name, rather
// than previewing without boxes.
func TestAugmentBoxesShape(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	img := filepath.Join(dir, "in.jpg")
	if err := os.WriteFile(img, testmedia.JPEG(64, 48, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := write("aug.json", `{"IMAGE_LEVEL": [{"id": "FLIP_IMAGE", "properties": [{"id": "FLIP_HORIZONTAL", "values": [true]}]}]}`)
	rest := write("rest.json", `[{"label": "car", "x": 2, "y": 3, "width": 10, "height": 8, "attributes": {"occluded": "no"}}]`)
	out, err := run(t, "augment", "--config", cfg, "--boxes", rest, "--out", filepath.Join(dir, "out"), img)
	if err != nil || !strings.Contains(out, "1/1 shapes") {
		t.Fatalf("REST-shaped boxes: %v %s", err, out)
	}
	var meta struct {
		Boxes []map[string]any `json:"boxes"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out", "in_aug0.json"))
	if err := json.Unmarshal(b, &meta); err != nil || len(meta.Boxes) != 1 || meta.Boxes[0]["width"] != 10.0 ||
		meta.Boxes[0]["x"] != 64-2-10.0 {
		t.Errorf("output boxes %s: %v", b, err)
	}
	// Other shapes move with the flip too: a polygon's x mirrored, a polyline's, and the preview's JSON keeps them.
	shapes := write("shapes.json", `[{"label": "road", "type": "polygon", "polygon": [[10, 10, 30, 10, 30, 20]]},
		{"label": "lane", "type": "polyline", "points": [4, 40, 20, 44]}, {"label": "night", "type": "class"}]`)
	out, err = run(t, "augment", "--config", cfg, "--boxes", shapes, "--out", filepath.Join(dir, "shapes"), img)
	if err != nil || !strings.Contains(out, "3/3 shapes") {
		t.Fatalf("shapes: %v %s", err, out)
	}
	var shaped struct {
		Boxes []struct {
			Type    string      `json:"type"`
			Polygon [][]float64 `json:"polygon"`
			Points  []float64   `json:"points"`
			X       float64     `json:"x"`
		} `json:"boxes"`
	}
	b, _ = os.ReadFile(filepath.Join(dir, "shapes", "in_aug0.json"))
	if err := json.Unmarshal(b, &shaped); err != nil || len(shaped.Boxes) != 3 || shaped.Boxes[0].Type != "polygon" ||
		fmt.Sprint(shaped.Boxes[0].Polygon) != "[[54 10 34 10 34 20]]" || shaped.Boxes[0].X != 34 ||
		fmt.Sprint(shaped.Boxes[1].Points) != "[60 40 44 44]" || shaped.Boxes[2].Type != "class" {
		t.Errorf("output shapes %s: %v", b, err)
	}
	for _, c := range []struct{ boxes, want string }{
		{`[{"label": "car", "type": "polygon", "polygon": [[1, 2, 3, 4]]}]`, `box 0`},
		{`[{"label": "car", "type": "polyline"}]`, `box 0: a polyline needs its points field`},
		{`[{"label": "car", "x": 2, "y": 3, "w": 10, "h": 8}]`, `box 0: unknown field "w"`},
		{`[{"label": "car", "x": 2, "y": 3, "width": 10}]`, `box 0: "height" is missing`},
		{`[{"label": "car", "x": 2, "y": 3, "width": 0, "height": 8}]`, `box 0: width and height must be positive`},
		{`{"label": "car"}`, `JSON array of boxes`},
	} {
		out, err := run(t, "augment", "--config", cfg, "--boxes", write("bad.json", c.boxes), "--out", filepath.Join(dir, "bad"), img)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("boxes %s: %v %q; want an error with %q", c.boxes, err, out, c.want)
		}
	}
}

// logBuffer holds a process's output. exec copies into it from its own
// goroutine until Wait, so reads lock, and waitFor waits for a line the
// process may have written but exec not yet copied.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor reports whether s appears in the log within 30 s.
func (l *logBuffer) waitFor(s string) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(l.String(), s) {
			return true
		}
	}
	return false
}

// builtModels is where `make models` put the system default packages.
func builtModels(t *testing.T) string {
	dir := os.Getenv("FRAMELAKE_MODELS_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "build", "models"))
	}
	if _, err := os.Stat(filepath.Join(dir, "auto_tagging")); err != nil {
		t.Fatalf("the system default models are not built in %s: run make models", dir)
	}
	return dir
}

// placeBinary puts a copy of the test binary at path (a hard link when it can).
func placeBinary(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(bin, path) == nil {
		return
	}
	b, err := os.ReadFile(bin)
	if err == nil {
		err = os.WriteFile(path, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestServeFindsDefaultModels starts `serve` without --models and without
// FRAMELAKE_MODELS_DIR, as a user does by hand after `make models`: it finds
// the models along the search path, says where, and analysis without a
// model_name runs; with none anywhere it says where it looked.
func TestServeFindsDefaultModels(t *testing.T) {
	models, root := builtModels(t), t.TempDir()
	link := func(dir, target string) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, dir); err != nil {
			t.Fatal(err)
		}
	}
	// A source tree as `make build` and `make models` leave it.
	repo := filepath.Join(root, "src")
	placeBinary(t, filepath.Join(repo, "bin", "framelake"))
	link(filepath.Join(repo, "build", "models"), models)
	gomod, _ := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), gomod, 0o644); err != nil {
		t.Fatal(err)
	}
	// An unpacked release: the binary with its models beside it; and a binary with none.
	placeBinary(t, filepath.Join(root, "release", "framelake"))
	link(filepath.Join(root, "release", "models"), models)
	placeBinary(t, filepath.Join(root, "bare", "framelake"))

	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FRAMELAKE_MODELS_DIR=") {
			env = append(env, kv)
		}
	}
	for _, c := range []struct {
		name, bin  string
		dataModels bool   // models in DATA/models as well, each folder a link as the README suggests
		want       string // the folder the log names; "" none
	}{
		{"repository", filepath.Join(repo, "bin", "framelake"), false, filepath.Join(repo, "build", "models")},
		{"data folder first", filepath.Join(repo, "bin", "framelake"), true, "DATA/models"},
		{"beside the binary", filepath.Join(root, "release", "framelake"), false, filepath.Join(root, "release", "models")},
		{"none", filepath.Join(root, "bare", "framelake"), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			want := strings.Replace(c.want, "DATA", data, 1)
			if c.dataModels {
				for _, app := range []string{"auto_tagging", "embedding", "auto_annotation"} {
					link(filepath.Join(data, "models", app), filepath.Join(models, app))
				}
			}
			addr := freeAddr(t)
			log := &logBuffer{}
			srv := exec.Command(c.bin, "serve", "--data", data, "--addr", addr)
			srv.Env, srv.Stdout, srv.Stderr = env, log, log
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { srv.Process.Kill(); srv.Wait() }()
			base := "http://" + addr
			waitHealthy(t, base)
			line := "no system default models found"
			if want != "" {
				line = "folder=" + want + " "
			}
			if !log.waitFor(line) {
				t.Fatalf("log does not say %q:\n%s", line, log.String())
			}
			if want == "" && !strings.Contains(log.String(), filepath.Join(data, "models")) {
				t.Errorf("log does not list the places searched:\n%s", log.String())
			}
			var key map[string]string
			b, _ := os.ReadFile(filepath.Join(data, "admin-key.json"))
			if err := json.Unmarshal(b, &key); err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest("POST", base+"/api/v1/client/generate_embeddings_to_lake",
				strings.NewReader(`{"content_type": "image"}`))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth(key["key"], key["secret"])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if wantStatus := map[bool]int{true: 200, false: 400}[want != ""]; resp.StatusCode != wantStatus {
				t.Errorf("embeddings with the default model: %d %s, want %d", resp.StatusCode, body, wantStatus)
			}
		})
	}
}

// TestServeProbeTimeout: --probe-timeout bounds ffprobe on an uploaded
// video, so a file that makes it hang (here an ffprobe that never answers,
// first on PATH) is refused quickly instead of holding the upload.
func TestServeProbeTimeout(t *testing.T) {
	data := filepath.Join(t.TempDir(), "lake")
	out, err := exec.Command(bin, "serve", "--data", data, "--addr", freeAddr(t), "--probe-timeout", "0s").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `--probe-timeout: bad duration "0s"`) {
		t.Errorf("--probe-timeout 0s: %v %s", err, out)
	}
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "ffprobe"), []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr, "--probe-timeout", "700ms")
	srv.Env = append(os.Environ(), "PATH="+tools+":"+os.Getenv("PATH"))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	waitHealthy(t, "http://"+addr)
	var k map[string]string
	b, err := os.ReadFile(filepath.Join(data, "admin-key.json"))
	if err != nil || json.Unmarshal(b, &k) != nil {
		t.Fatalf("admin key: %v", err)
	}
	c := client.New("http://"+addr, k["key"], k["secret"])
	mp4 := append([]byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41"), bytes.Repeat([]byte{1}, 4000)...)
	start := time.Now()
	res, err := c.UploadFiles(context.Background(), client.UploadOptions{Collection: "clips"}, client.UploadFile{
		Name: "hang.mp4", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(mp4)), nil }})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "ffprobe took longer than 700ms") || took > 10*time.Second {
		t.Errorf("upload of a video that hangs ffprobe: %+v %v after %s", res, err, took)
	}
}

// TestServeLimitFlags: serve takes what a client may hold of it from flags
// and the environment, and refuses a bad value naming the flag.
func TestServeLimitFlags(t *testing.T) {
	data := filepath.Join(t.TempDir(), "lake")
	out, err := exec.Command(bin, "serve", "--data", data, "--addr", freeAddr(t), "--body-min-rate", "64KiB").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--body-min-rate: bad rate") {
		t.Errorf("a rate without a window: %v %s", err, out)
	}
	out, err = exec.Command(bin, "serve", "--data", data, "--addr", freeAddr(t), "--max-inflight", "-3").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--max-inflight: want a positive number, auto or off") {
		t.Errorf("--max-inflight -3: %v %s", err, out)
	}
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr, "--idle-timeout", "1s")
	srv.Env = append(os.Environ(), "FRAMELAKE_MAX_CONNS=7", "FRAMELAKE_MAX_INFLIGHT=3")
	srv.Stderr = logFile
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	waitHealthy(t, "http://"+addr)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = io.Copy(io.Discard, c) // the answer, then the close at the idle timeout
	if err != nil || time.Since(start) > 4*time.Second {
		t.Errorf("keep-alive connection with --idle-timeout 1s: %v after %s", err, time.Since(start))
	}
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "max_conns=7 max_inflight=3") {
		t.Errorf("FRAMELAKE_MAX_CONNS=7 and FRAMELAKE_MAX_INFLIGHT=3 not in the serving line:\n%s", log)
	}
}
