package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/tests3"
	"github.com/framelake/framelake/lake"
)

// TestMediaMigrate moves a lake's media into a bucket of a real versitygw
// and back with the binary: a migrate killed part-way leaves the lake on
// its old location and the next run resumes; the database names the bucket
// only once every blob is there; check finds an object no row names and
// --repair removes it.
func TestMediaMigrate(t *testing.T) {
	srv := tests3.Shared(t)
	env := append(os.Environ(), srv.Env()...)
	data, media := t.TempDir(), t.TempDir()
	const n = 800
	if err := testmedia.WriteJPEGs(media, n, 64, 48); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "import", media, "--data", data, "--collection", "m"); err != nil {
		t.Fatalf("import: %v %s", err, out)
	}
	url := srv.Bucket(t, "lake")

	mig := exec.Command(bin, "media", "migrate", "--data", data, "--to", url, "--workers", "2")
	mig.Env = env
	var migOut bytes.Buffer
	mig.Stdout, mig.Stderr = &migOut, &migOut
	if err := mig.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { mig.Wait(); close(exited) }()
	progress := filepath.Join(data, "media", "migrate-*.progress")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m, _ := filepath.Glob(progress); len(m) == 1 {
			if b, _ := os.ReadFile(m[0]); bytes.Count(b, []byte("\n")) >= 256 {
				break
			}
		}
	}
	mig.Process.Kill()
	<-exited
	if strings.Contains(migOut.String(), "media migrated") {
		t.Fatalf("migrate finished before the kill: %s", migOut.String())
	}
	if loc := location(t, data); loc != "" {
		t.Fatalf("killed migrate switched the lake to %q", loc)
	}

	out, err := runEnv(t, env, "media", "migrate", "--data", data, "--to", url, "--json")
	var r lake.MigrateReport
	if err != nil || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("resumed migrate: %v %s", err, out)
	}
	if r.Blobs != n || r.Resumed < 256 || r.Copied+r.Resumed != n {
		t.Fatalf("resume: %+v", r)
	}
	if loc := location(t, data); loc != r.To || !strings.HasPrefix(url, strings.Split(loc, "?")[0]) {
		t.Fatalf("after migrate the lake records %q", loc)
	}
	if keys := srv.Objects(t, url); len(keys) != n {
		t.Fatalf("%d objects in the bucket, want %d", len(keys), n)
	}

	// An object no row names: check reports it, --repair removes it.
	bucket, _, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
	stray := strings.Repeat("cd", 32) + ".jpg"
	if _, err := srv.Client().PutObject(context.Background(), bucket, "lake/cd/cd/"+stray, strings.NewReader("x"), 1,
		minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := runEnv(t, env, "check", "--data", data); err == nil || !strings.Contains(out, stray) ||
		!strings.Contains(out, fmt.Sprintf("%d blobs in s3://%s/", n+1, bucket)) {
		t.Fatalf("check did not report the orphan object: %v %s", err, out)
	}
	if out, err := runEnv(t, env, "check", "--data", data, "--repair"); err != nil {
		t.Fatalf("check --repair: %v %s", err, out)
	}
	if keys := srv.Objects(t, url); len(keys) != n {
		t.Fatalf("after repair %d objects, want %d", len(keys), n)
	}

	// A backup of a bucket lake copies the database, which names the
	// bucket, and leaves the objects where they are.
	bk := filepath.Join(t.TempDir(), "bk")
	if out, err := runEnv(t, env, "backup", "--data", data, "--out", bk); err != nil || !strings.Contains(out, "was not copied") {
		t.Fatalf("backup of a bucket lake: %v %s", err, out)
	}
	if loc := location(t, bk); loc != r.To {
		t.Fatalf("the backup's database records %q, want %q", loc, r.To)
	}

	// And back to the local folder, where every blob lands whole.
	if out, err := runEnv(t, env, "media", "migrate", "--data", data, "--to", "local"); err != nil {
		t.Fatalf("migrate back: %v %s", err, out)
	}
	if loc := location(t, data); loc != "" {
		t.Fatalf("after migrating back the lake records %q", loc)
	}
	checkConsistent(t, data)
	if out, err := run(t, "check", "--data", data, "--json"); err != nil {
		t.Fatalf("check after migrating back: %v %s", err, out)
	}
}

func runEnv(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// location is the media location the data folder's database records.
func location(t *testing.T, data string) string {
	t.Helper()
	db, err := sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	loc, err := lake.MediaLocation(context.Background(), db.R)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
