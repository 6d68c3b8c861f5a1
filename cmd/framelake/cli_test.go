package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/auth"
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

// TestServeLimitFlags: serve takes what a client may hold of it from flags
// and the environment, and refuses a bad value naming the flag.
func TestServeLimitFlags(t *testing.T) {
	data := filepath.Join(t.TempDir(), "lake")
	out, err := exec.Command(bin, "serve", "--data", data, "--addr", freeAddr(t), "--body-min-rate", "64KiB").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--body-min-rate: bad rate") {
		t.Errorf("a rate without a window: %v %s", err, out)
	}
	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr, "--idle-timeout", "1s")
	srv.Env = append(os.Environ(), "FRAMELAKE_MAX_CONNS=7")
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
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "max_conns=7") {
		t.Errorf("FRAMELAKE_MAX_CONNS=7 not in the serving line:\n%s", log)
	}
}
