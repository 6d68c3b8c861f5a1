package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRotateSigningKey: keys rotate-signing replaces url-signing.key with a
// new key of the same size and mode, leaves no temp file, and refuses a
// folder that is not a framelake data folder. (That old links stop working
// after a restart is TestSignedLinksCannotBeBent in appliance.)
func TestRotateSigningKey(t *testing.T) {
	data := filepath.Join(t.TempDir(), "lake")
	if out, err := run(t, "keys", "create", "--data", data, "--name", "x", "--role", "read"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	path := filepath.Join(data, "url-signing.key")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "keys", "rotate-signing", "--data", data)
	if err != nil || !strings.Contains(out, "until it restarts") {
		t.Fatalf("rotate-signing: %v %s", err, out)
	}
	after, err := os.ReadFile(path)
	if err != nil || len(after) != len(before) || bytes.Equal(after, before) {
		t.Errorf("key not replaced: %d bytes, same %v, %v", len(after), bytes.Equal(after, before), err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(data)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left %s", e.Name())
		}
	}
	empty := t.TempDir()
	if out, err := run(t, "keys", "rotate-signing", "--data", empty); err == nil || !strings.Contains(out, "not a framelake data folder") {
		t.Errorf("rotating in an empty folder: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(empty, "url-signing.key")); err == nil {
		t.Error("a key was written into a folder that is not a data folder")
	}
}
