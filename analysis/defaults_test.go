package analysis

import (
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// packer writes a package folder as .tar.gz, as the appliance does for the
// folders `make models` builds.
func packer(t *testing.T, dir string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.Copy(w, tarGz(t, dir))
		return err
	}
}

// TestDefaultModelOneName: the shipped default embedding model is listed,
// run, and read back under one name, default-embedding, and "default" means
// it wherever a model name is taken.
func TestDefaultModelOneName(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	if installed, err := e.svc.InstallDefault(ctx, Embedding, "build-1", packer(t, histPkg(t))); err != nil || !installed {
		t.Fatalf("install: %v %v", installed, err)
	}
	ms, err := e.svc.Models(ctx)
	if err != nil || len(ms) != 1 || ms[0].Name != "default-embedding" || !ms[0].SystemDefault {
		t.Fatalf("models %+v %v", ms, err)
	}
	f := e.add(t, "pics", "red.png", rectPNG(64, 64, rect{red, 0, 0, 64, 64}))
	run, j := e.wait(t, RunRequest{Application: Embedding, ContentType: "image"})
	if j.Status != job.Completed || run.Model != "default-embedding" || run.VectorModel != "default-embedding" {
		t.Fatalf("run %+v job %+v", run, j)
	}
	for _, name := range []string{"default-embedding", "default", ""} {
		vec, err := e.svc.EmbeddingName(ctx, name)
		if err != nil || vec != "default-embedding" {
			t.Errorf("EmbeddingName(%q) = %q %v", name, vec, err)
			continue
		}
		found, _, err := e.vectors.Get(ctx, vec, []string{f.UniqueName})
		if err != nil || len(found) != 1 {
			t.Errorf("vectors of %q: %+v %v", name, found, err)
		}
	}
	for _, name := range []string{"default", "default-embedding"} {
		runs, n, err := e.svc.Runs(ctx, RunListOptions{Model: name})
		if err != nil || n != 1 || runs[0].ID != run.ID {
			t.Errorf("runs of %q: %d %+v %v", name, n, runs, err)
		}
	}
	if err := CheckName("default-embedding"); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("a user may register default-embedding: %v", err)
	}

	// The same build is not installed again; a rebuild replaces the package
	// under the same name, and the vectors stay readable.
	if installed, err := e.svc.InstallDefault(ctx, Embedding, "build-1", packer(t, histPkg(t))); err != nil || installed {
		t.Errorf("same build: %v %v", installed, err)
	}
	if installed, err := e.svc.InstallDefault(ctx, Embedding, "build-2", packer(t, histPkg(t))); err != nil || !installed {
		t.Errorf("rebuild: %v %v", installed, err)
	}
	if m, err := e.svc.Model(ctx, "default-embedding"); err != nil || !m.SystemDefault || m.source != "build-2" {
		t.Errorf("after rebuild %+v %v", m, err)
	}
	if found, _, err := e.vectors.Get(ctx, "default-embedding", []string{f.UniqueName}); err != nil || len(found) != 1 {
		t.Errorf("vectors after rebuild: %+v %v", found, err)
	}

	// A user's choice of default survives the next start, and "default" follows it.
	e.register(t, "mine", Embedding, histPkg(t))
	if _, err := e.svc.UpdateModel(ctx, "mine", ModelUpdate{SystemDefault: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.InstallDefault(ctx, Embedding, "build-3", packer(t, histPkg(t))); err != nil {
		t.Fatal(err)
	}
	if name, err := e.svc.EmbeddingName(ctx, "default"); err != nil || name != "mine" {
		t.Errorf("default after the user chose mine: %q %v", name, err)
	}
}

// TestRegisterReplace: a taken name is a 409 that says how to replace; with
// Replace the new package answers, under the same name, endpoint and default
// flag, and the old files are gone; a failed replacement changes nothing.
func TestRegisterReplace(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	answer := func(v string) string {
		return writePkg(t, map[string]string{"code/requirements.txt": "", "code/inference.py": `
def model_fn(d): return None
def input_fn(b, c): return b
def predict_fn(x, m): return [` + v + `, 1.0]
def output_fn(p, a): return {"embedding": p}
`})
	}
	invoke := func() string {
		r, err := e.svc.LocalRunner(ctx, "emb")
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		resp, err := r.Invoke(cctx, Request{Body: []byte("x"), ContentType: "image/jpeg"})
		if err != nil {
			t.Fatal(err)
		}
		return string(resp.Body)
	}
	e.register(t, "emb", Embedding, answer("1.0"))
	if _, err := e.svc.UpdateModel(ctx, "emb", ModelUpdate{Endpoint: ptr("http://gpu:8080"), SystemDefault: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	contains(t, invoke(), "[1.0, 1.0]")
	_, err := e.svc.Register(ctx, RegisterRequest{Name: "emb", Application: "embedding", Package: tarGz(t, answer("2.0"))})
	if !errs.Is(err, errs.AlreadyExists) || !strings.Contains(err.Error(), "replace=true") {
		t.Errorf("re-register without replace: %v", err)
	}
	_, err = e.svc.Register(ctx, RegisterRequest{Name: "emb", Application: "auto_tagging", Replace: true, Package: tarGz(t, brokenPkg(t, noopCode))})
	if !errs.Is(err, errs.InvalidArgument) || !strings.Contains(err.Error(), "is an embedding model") {
		t.Errorf("replace with another application: %v", err)
	}
	_, err = e.svc.Register(ctx, RegisterRequest{Name: "emb", Application: "embedding", Replace: true,
		Package: tarGz(t, writePkg(t, map[string]string{"code/requirements.txt": ""}))})
	if !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("replace with a broken package: %v", err)
	}
	contains(t, invoke(), "[1.0, 1.0]")

	m, err := e.svc.Register(ctx, RegisterRequest{Name: "emb", Application: "embedding", Replace: true, Package: tarGz(t, answer("2.0"))})
	if err != nil || m.Endpoint != "http://gpu:8080" || !m.SystemDefault {
		t.Fatalf("replace: %+v %v", m, err)
	}
	contains(t, invoke(), "[2.0, 1.0]")
	if ms, _ := e.svc.Models(ctx); len(ms) != 1 {
		t.Errorf("models after replace: %+v", ms)
	}
	dirs, _ := filepath.Glob(filepath.Join(e.dir, "models", "mod*"))
	if len(dirs) != 1 || filepath.Base(dirs[0]) != m.ID {
		t.Errorf("model folders after replace: %v, want only %s", dirs, m.ID)
	}
}

// TestPipFailsFastInOneLine: an uninstallable requirement with an index
// that cannot be reached fails at once (no retries), with one line naming it.
func TestPipFailsFastInOneLine(t *testing.T) {
	e := newEnv(t, Options{PipIndexURL: "http://127.0.0.1:9/simple"})
	start := time.Now()
	_, err := e.svc.Register(context.Background(), RegisterRequest{Name: "needs-it", Application: "embedding",
		Package: archive(t, entry{name: "code/inference.py", body: noopCode},
			entry{name: "code/requirements.txt", body: "# offline\nframelake-no-such-package==1.0\n"})})
	t.Logf("failed after %s: %v", time.Since(start), err)
	msg := errText(err)
	if !errs.Is(err, errs.InvalidArgument) || strings.Contains(msg, "\n") || strings.Contains(msg, "Retrying") ||
		!strings.Contains(msg, `requirement "framelake-no-such-package==1.0"`) {
		t.Errorf("got %q, want one line naming the requirement", msg)
	}
}

// TestMigrateDefaultNames: a data folder from before the rename keeps its
// default model, runs and vectors under the new names.
func TestMigrateDefaultNames(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	upTo := func(fsys fs.FS, n int) fs.FS {
		old := fstest.MapFS{}
		names, _ := fs.Glob(fsys, "*.sql")
		for _, name := range names[:n] {
			b, _ := fs.ReadFile(fsys, name)
			old[name] = &fstest.MapFile{Data: b}
		}
		return old
	}
	for _, m := range []struct {
		owner string
		fs    fs.FS
	}{{"lake", lake.Migrations}, {"job", job.Migrations()}, {"vector", upTo(vector.Migrations, 1)}, {"analysis", upTo(Migrations, 2)}} {
		if err := db.Migrate(ctx, m.owner, m.fs); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO model (id, name, application, dir, system_default, created_by, created_at, updated_at) VALUES
			('mod_1', 'system-embedding-0123456789ab', 'embedding', 'mod_1', 1, 'framelake', 0, 0),
			('mod_2', 'system-embedding-notahash', 'embedding', 'mod_2', 0, 'someone', 0, 0)`,
		`INSERT INTO run (id, job_id, model_name, vector_name, application, platform, params, created_at) VALUES
			('run_1', 'job_1', 'system-embedding-0123456789ab', 'default', 'embedding', 'local', '{}', 0),
			('run_2', 'job_2', 'system-auto-tagging-ba9876543210', '', 'auto_tagging', 'local', '{}', 0)`,
		`INSERT INTO embedding_model (name, dim, metric, table_name, created_at) VALUES ('default', 3, 'cosine', 'vec_1', 0)`,
	} {
		if _, err := db.W.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx, "vector", vector.Migrations); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "analysis", Migrations); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		`SELECT group_concat(name || ':' || source, ' ') FROM (SELECT name, source FROM model ORDER BY id)`: "default-embedding:0123456789ab system-embedding-notahash:",
		`SELECT group_concat(model_name || ':' || vector_name, ' ') FROM (SELECT * FROM run ORDER BY id)`:   "default-embedding:default-embedding default-auto-tagging:",
		`SELECT group_concat(name) FROM embedding_model`:                                                    "default-embedding",
	} {
		var got string
		if err := db.R.QueryRowContext(ctx, q).Scan(&got); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", q, got, err, want)
		}
	}
}
