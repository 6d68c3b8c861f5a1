// Package models_test runs the Python tests of the system default models (models/tests) so that
// `go test ./...` covers them. It fails, never skips, when the models or Python are missing:
// CI must not pass without having tested the defaults.
package models_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd() // go test runs in the package folder, models/
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

func modelsDir(root string) string {
	if d := os.Getenv("FRAMELAKE_MODELS_DIR"); d != "" {
		return d
	}
	return filepath.Join(root, "build", "models")
}

// python is the interpreter that sees Debian's python3-torch (FRAMELAKE_PYTHON overrides it, as
// for the server); a python3 earlier on PATH (pyenv) usually does not.
func python() string {
	if p := os.Getenv("FRAMELAKE_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

func TestDefaultModels(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts Python (a model's venv and worker)")
	}
	root := repoRoot(t)
	dir := modelsDir(root)
	if _, err := os.Stat(filepath.Join(dir, "STAMP.json")); err != nil {
		t.Fatalf("no default models in %s: run `make models` (%v)", dir, err)
	}
	py := python()
	if out, err := exec.Command(py, "-c", "import torch, cv2, numpy").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import torch, cv2 and numpy: run `make models`, which installs "+
			"python3-torch, python3-opencv and python3-numpy (%v)\n%s", py, err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-v",
		"-s", filepath.Join(root, "models", "tests"), "-t", filepath.Join(root, "models", "tests"))
	cmd.Env = append(os.Environ(), "FRAMELAKE_MODELS_DIR="+dir, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("models/tests failed (%v); if the models are stale or missing, run `make models`:\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Log(strings.Join(lines[max(0, len(lines)-4):], "\n"))
}
