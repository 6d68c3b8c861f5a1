package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/tests3"
)

// bin is the framelake binary built once for these tests.
var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() { // go test -short ./...: the quick unit tests only (docs/operations.md, "Checks")
		fmt.Println("cmd/framelake: the end-to-end suite (the real binary on loopback) is left out under -short")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "framelake-bin-")
	if err != nil {
		panic(err)
	}
	// make test builds the binary once for the shares of this suite it runs
	// at once (Makefile, E2E_*); alone, the suite builds its own.
	bin = os.Getenv("FRAMELAKE_TEST_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "framelake")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	tests3.StopShared()
	os.RemoveAll(dir)
	for _, d := range atExit {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// atExit lists folders TestMain removes once every test and benchmark has run.
var atExit []string

func removeAtExit(dir string) { atExit = append(atExit, dir) }

func run(t testing.TB, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitHealthy(t testing.TB, base string) {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
	}
	t.Fatal("server did not become healthy")
}

func TestServeKeysImport(t *testing.T) {
	data, media := t.TempDir(), t.TempDir()
	if err := testmedia.WriteJPEGs(media, 20, 64, 48); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	log := &logBuffer{}
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr)
	srv.Stdout, srv.Stderr = log, log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	base := "http://" + addr
	waitHealthy(t, base)

	// The first start made an admin key, readable only by its owner, and did not log its secret.
	adminFile := filepath.Join(data, "admin-key.json")
	st, err := os.Stat(adminFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("admin key file: %v %v", st, err)
	}
	if !log.waitFor("cat " + adminFile) {
		t.Errorf("log does not say how to read the admin key:\n%s", log.String())
	}
	var admin map[string]string
	b, _ := os.ReadFile(adminFile)
	json.Unmarshal(b, &admin)
	if admin["secret"] == "" || strings.Contains(log.String(), admin["secret"]) {
		t.Fatal("admin secret missing, or printed in the log")
	}

	out, err := run(t, "keys", "create", "--data", data, "--name", "importer", "--role", "write", "--json")
	if err != nil {
		t.Fatalf("keys create: %v %s", err, out)
	}
	var key map[string]string
	if err := json.Unmarshal([]byte(out), &key); err != nil || key["key"] == "" || key["secret"] == "" {
		t.Fatalf("keys create --json printed %q", out)
	}
	out, err = run(t, "import", media, "--url", base, "--key", key["key"], "--secret", key["secret"],
		"--collection", "street", "--json")
	if err != nil || !strings.Contains(out, `"stored":20`) {
		t.Fatalf("import over HTTP: %v %s", err, out)
	}
	out, err = run(t, "import", media, "--url", base, "--key", key["key"], "--secret", key["secret"],
		"--collection", "street", "--json")
	if err != nil || !strings.Contains(out, `"skipped":20`) {
		t.Fatalf("re-import over HTTP: %v %s", err, out)
	}
	if out, err := run(t, "keys", "revoke", "--data", data, key["key"]); err != nil {
		t.Fatalf("revoke: %v %s", err, out)
	}
	out, err = run(t, "import", media, "--url", base, "--key", key["key"], "--secret", key["secret"])
	if err == nil || !strings.Contains(out, "revoked") {
		t.Fatalf("revoked key imported: %v %s", err, out)
	}

	srv.Process.Signal(syscall.SIGTERM)
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve did not exit cleanly on SIGTERM: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "msg=\"stopped;") {
		t.Errorf("the log does not say the server stopped:\n%s", log.String())
	}
}

// TestImportSurvivesKill9 kills an import mid-way and checks that the lake has
// no file row without its blob and no visible half-written blob, and that
// re-running the import completes it with every file exactly once.
func TestImportSurvivesKill9(t *testing.T) {
	data, media := t.TempDir(), t.TempDir()
	const n = 1500
	if err := testmedia.WriteJPEGs(media, n, 320, 240); err != nil {
		t.Fatal(err)
	}
	imp := exec.Command(bin, "import", media, "--data", data, "--collection", "crash", "--batch", "32")
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once some files have landed, well before the end.
	db := filepath.Join(data, "framelake.db")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c := countFiles(t, db, true); c >= 100 {
			break
		}
	}
	imp.Process.Kill()
	imp.Wait()
	t.Logf("killed after %d of %d files", countFiles(t, db, false), n)
	checkConsistent(t, data)

	out, err := run(t, "import", media, "--data", data, "--collection", "crash", "--json")
	if err != nil {
		t.Fatalf("re-run: %v %s", err, out)
	}
	var sum struct{ Stored, Skipped int }
	json.Unmarshal([]byte(out), &sum)
	if sum.Stored+sum.Skipped != n || countFiles(t, db, false) != n {
		t.Fatalf("after re-run: %s; %d rows, want %d", out, countFiles(t, db, false), n)
	}
	checkConsistent(t, data)
}

// countFiles counts file rows; quiet tolerates a database not created yet.
func countFiles(t *testing.T, path string, quiet bool) int {
	if _, err := os.Stat(path); err != nil && quiet {
		return 0
	}
	db, err := sqlitedb.Open(context.Background(), path, sqlitedb.Options{})
	if err != nil {
		if quiet {
			return 0
		}
		t.Fatal(err)
	}
	defer db.Close()
	var c int
	if err := db.R.QueryRow("SELECT count(*) FROM file").Scan(&c); err != nil && !quiet {
		t.Fatal(err)
	}
	return c
}

func checkConsistent(t *testing.T, data string) {
	t.Helper()
	db, err := sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.R.Query("SELECT blob, ext, size FROM file")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var blob, ext string
		var size int64
		rows.Scan(&blob, &ext, &size)
		st, err := os.Stat(filepath.Join(data, "media", blob[:2], blob[2:4], blob+"."+ext))
		if err != nil || st.Size() != size {
			t.Fatalf("file row without its whole blob %s: %v", blob, err)
		}
	}
	// Every blob in place is whole: its name is the SHA-256 of its bytes.
	// Half-written bytes only ever live under media/tmp, cleared at open.
	filepath.WalkDir(filepath.Join(data, "media"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && d.Name() == "tmp" {
				return filepath.SkipDir
			}
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if want := hex.EncodeToString(sum[:]); !strings.HasPrefix(d.Name(), want+".") {
			t.Errorf("blob %s does not hold the bytes its name promises", p)
		}
		return nil
	})
}

// TestPythonClient installs the Python client with pip into a fresh virtual
// environment, offline, and runs its tests with that interpreter against the
// real server with the system default models, so every client function runs
// through the package a user installs.
func TestPythonClient(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required for the Python client tests")
	}
	models := builtModelsDir(t)
	data, images, photos, work := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	if err := testmedia.WriteJPEGs(images, 4, 32, 24); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"dog.jpg", "person.jpg"} {
		b, err := os.ReadFile(filepath.Join("/usr/share/darknet/data", name))
		if err != nil {
			t.Fatalf("%v: install Debian's darknet package (make test does)", err)
		}
		os.WriteFile(filepath.Join(photos, name), b, 0o644)
	}
	venvPython := installPythonClient(t, python, work)

	addr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), "serve.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr, "--models", models)
	srv.Stdout, srv.Stderr = logFile, logFile
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	waitHealthy(t, "http://"+addr)
	keyOut, err := run(t, "keys", "create", "--data", data, "--name", "py", "--role", "write", "--json")
	if err != nil {
		t.Fatalf("keys create: %v %s", err, keyOut)
	}
	var key, admin map[string]string
	json.Unmarshal([]byte(keyOut), &key)
	b, _ := os.ReadFile(filepath.Join(data, "admin-key.json"))
	if err := json.Unmarshal(b, &admin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(venvPython, "-m", "unittest", "-v", "test_framelake")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "FRAMELAKE_URL=http://"+addr, "FRAMELAKE_KEY="+key["key"],
		"FRAMELAKE_SECRET="+key["secret"], "FRAMELAKE_ADMIN_KEY="+admin["key"], "FRAMELAKE_ADMIN_SECRET="+admin["secret"],
		"FRAMELAKE_TEST_IMAGES="+images, "FRAMELAKE_TEST_PHOTOS="+photos)
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("python client tests: %v\n%s\nserver log:\n%s", err, out, log)
	}
	t.Logf("python client tests:\n%s", out)
}

// installPythonClient makes a virtual environment under work, installs
// client/python into it as a user would (pip, no index: nothing may be
// fetched) and copies the tests into work, away from the sources, so they
// import the installed package. It returns the environment's python.
func installPythonClient(t *testing.T, python, work string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "client", "python"))
	if err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(python, "-m", "venv", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv (on Debian: apt-get install python3-venv): %v\n%s", err, out)
	}
	py := filepath.Join(venv, "bin", "python")
	pip := exec.Command(py, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", src)
	pip.Dir = work
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install %s: %v\n%s", src, err, out)
	}
	tests, err := os.ReadFile(filepath.Join(src, "test_framelake.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "test_framelake.py"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	where := exec.Command(py, "-c", "import framelake; print(framelake.__file__)")
	where.Dir = work
	out, err := where.Output()
	if err != nil || !strings.HasPrefix(string(out), venv+string(filepath.Separator)) {
		t.Fatalf("framelake imported from %q (%v), not from the virtual environment %s", out, err, venv)
	}
	return py
}

// builtModelsDir is where `make models` put the system default model packages.
func builtModelsDir(t *testing.T) string {
	dir := os.Getenv("FRAMELAKE_MODELS_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "build", "models"))
	}
	if _, err := os.Stat(filepath.Join(dir, "auto_tagging")); err != nil {
		t.Fatalf("the system default models are not built in %s: run make models", dir)
	}
	return dir
}

// TestServerKill9DuringImport kills the server while `import --url` sends it
// files, restarts it, and checks that nothing half-done is visible and that
// the import, run again, completes.
func TestServerKill9DuringImport(t *testing.T) {
	data, media := t.TempDir(), t.TempDir()
	const n = 1200
	if err := testmedia.WriteJPEGs(media, n, 320, 240); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	serve := func() *exec.Cmd {
		srv := exec.Command(bin, "serve", "--data", data, "--addr", addr)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		waitHealthy(t, "http://"+addr)
		return srv
	}
	srv := serve()
	out, err := run(t, "keys", "create", "--data", data, "--name", "imp", "--role", "write", "--json")
	if err != nil {
		t.Fatal(err, out)
	}
	var key map[string]string
	json.Unmarshal([]byte(out), &key)
	args := []string{"import", media, "--url", "http://" + addr, "--key", key["key"], "--secret", key["secret"],
		"--collection", "crash", "--batch", "16", "--json"}
	imp := exec.Command(bin, args...)
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(data, "framelake.db")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if countFiles(t, db, true) >= 100 {
			break
		}
	}
	srv.Process.Kill()
	srv.Wait()
	if err := imp.Wait(); err == nil {
		t.Log("import finished before the kill")
	}
	t.Logf("server killed after %d of %d files", countFiles(t, db, false), n)
	srv = serve() // a restart clears temp files and resumes service
	defer func() { srv.Process.Kill(); srv.Wait() }()
	checkConsistent(t, data)
	if out, err := run(t, args...); err != nil {
		t.Fatalf("re-run: %v %s", err, out)
	}
	if c := countFiles(t, db, false); c != n {
		t.Fatalf("%d rows after the re-run, want %d", c, n)
	}
	checkConsistent(t, data)
}
