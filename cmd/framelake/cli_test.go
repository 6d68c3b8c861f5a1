package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	if err != nil || !strings.Contains(out, "1/1 boxes") {
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
	for _, c := range []struct{ boxes, want string }{
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
