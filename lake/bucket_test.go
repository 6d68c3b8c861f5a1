package lake_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"image/jpeg"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/tests3"
	"github.com/framelake/framelake/lake"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tests3.StopShared()
	os.Exit(code)
}

// TestBucketMedia: with media in a bucket (a real versitygw on loopback),
// an Add stores its objects before the rows, reads seek with ranges, a
// thumbnail comes from a staged copy, failed Adds and deletes leave no
// object behind, the lake records the bucket and refuses another, and the
// check finds and removes an object no row names.
func TestBucketMedia(t *testing.T) {
	ctx := context.Background()
	srv := tests3.Shared(t)
	srv.SetEnv(t)
	url := srv.Bucket(t, "lake")
	dir := t.TempDir()
	l, _ := reopenLake(t, dir, func(o *lake.Options) { o.Media = url; o.MediaRedirect = true })

	a, b := jpegBytes(t, 320, 200, 1), jpegBytes(t, 64, 64, 2)
	res, err := l.Add(ctx, lake.AddOptions{Collection: "c"}, []lake.Upload{mem("a.jpg", a), mem("b.jpg", b), mem("a2.jpg", a)})
	if err != nil || len(res.Stored) != 3 {
		t.Fatalf("add: %+v %v", res, err)
	}
	if keys := srv.Objects(t, url); len(keys) != 2 || !strings.HasPrefix(keys[0], "lake/") {
		t.Fatalf("objects %v, want the two distinct blobs under lake/", keys)
	}
	if blobs := countFilesUnder(t, filepath.Join(dir, "media"), "tmp"); blobs != 0 {
		t.Errorf("%d files outside media/tmp: bucket media must not land on disk", blobs)
	}

	fa := res.Stored[0]
	rc, err := l.OpenMedia(ctx, fa)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Seek(100, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 50)
	if _, err := io.ReadFull(rc, part); err != nil || !bytes.Equal(part, a[100:150]) {
		t.Errorf("range read: %v", err)
	}
	rc.Close()

	th, err := l.Thumbnail(ctx, fa, 64)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(th)); err != nil || cfg.Width != 64 || cfg.Height != 40 {
		t.Errorf("thumbnail %+v %v, want 64x40", cfg, err)
	}

	to, err := l.MediaRedirect(ctx, fa)
	if err != nil || !strings.HasPrefix(to, srv.Endpoint+"/") {
		t.Fatalf("presigned %q %v", to, err)
	}
	resp, err := http.Get(to)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, a) {
		t.Errorf("presigned URL answered %d with %d bytes", resp.StatusCode, len(got))
	}

	// A failed Add leaves no object of its own behind.
	c := jpegBytes(t, 48, 48, 3)
	_, err = l.Add(ctx, lake.AddOptions{InTx: func(context.Context, *sql.Tx, []lake.File) error { return errRefused }},
		[]lake.Upload{mem("c.jpg", c), mem("b-again.jpg", b)})
	if err != errRefused {
		t.Fatalf("add refused in tx: %v", err)
	}
	if keys := srv.Objects(t, url); len(keys) != 2 {
		t.Fatalf("after a failed add: objects %v, want the two of committed rows", keys)
	}

	// Deleting one of two files sharing a blob keeps it; deleting both removes it.
	if err := l.Delete(ctx, fa.UniqueName); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Objects(t, url)); n != 2 {
		t.Fatalf("%d objects after deleting one of two sharers", n)
	}
	if err := l.Delete(ctx, res.Stored[2].UniqueName); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Objects(t, url)); n != 1 {
		t.Fatalf("%d objects after deleting both sharers, want 1", n)
	}

	// The lake records its bucket: an empty Media opens it, another is refused.
	l2, _ := reopenLake(t, dir)
	if rc, err := l2.OpenMedia(ctx, res.Stored[1]); err != nil {
		t.Fatalf("reopened without Media: %v", err)
	} else {
		rc.Close()
	}
	if _, err := openWith(t, dir, srv.Bucket(t, "")); errs.CodeOf(err) != errs.FailedPrecondition {
		t.Errorf("another bucket for a lake with files: %v", err)
	}

	// An object no row names (a crash between upload and commit) is an
	// orphan the check finds and the repair removes.
	orphan := strings.Repeat("ab", 32)
	bucket, _, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
	if _, err := srv.Client().PutObject(ctx, bucket, "lake/ab/ab/"+orphan+".jpg", bytes.NewReader(c), int64(len(c)),
		minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := lake.CheckMedia(ctx, l.DB(), filepath.Join(dir, "media"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Location == "" || r.Blobs != 2 || r.Named != 1 || !slices.Equal(r.Orphans, []string{orphan + ".jpg"}) || len(r.Missing) != 0 {
		t.Fatalf("check: %+v", r)
	}
	if n, err := lake.RepairMedia(ctx, filepath.Join(dir, "media"), r); err != nil || n != 1 {
		t.Fatalf("repair removed %d: %v", n, err)
	}
	if keys := srv.Objects(t, url); len(keys) != 1 || strings.Contains(keys[0], orphan) {
		t.Errorf("after repair: %v", keys)
	}
}

// openWith opens the lake in dir with Media set, returning Open's error.
func openWith(t *testing.T, dir, media string) (*lake.Lake, error) {
	l, _ := reopenLake(t, dir)
	return lake.Open(context.Background(), l.DB(), lake.Options{MediaDir: filepath.Join(dir, "media"),
		SigningKey: []byte("0123456789abcdef0123"), Media: media})
}

// countFilesUnder counts the files under root outside its folder skip.
func countFilesUnder(t *testing.T, root, skip string) int {
	n := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == skip {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// TestBucketAddKilledBeforeCommit: with a bucket, a process killed between
// uploading objects and committing their rows leaves objects no row names;
// its placing journal, synced on its own as nothing else is with a bucket,
// lets the next process remove them and keep the one a row names.
func TestBucketAddKilledBeforeCommit(t *testing.T) {
	ctx := context.Background()
	srv := tests3.Shared(t)
	srv.SetEnv(t)
	url := srv.Bucket(t, "killed")
	dir := t.TempDir()
	l, _ := reopenLake(t, dir, func(o *lake.Options) { o.Media = url })
	if _, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("kept.jpg", jpegBytes(t, 32, 24, 10))}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAddKilledBeforeCommit$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LAKE_KILL_DIR="+dir) // the lake records its bucket
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed: %v\n%s", err, out)
	}
	if n := len(srv.Objects(t, url)); n != 4 {
		t.Fatalf("%d objects after the kill, want 4 (1 kept, 3 orphaned)", n)
	}
	l2, _ := reopenLake(t, dir)
	if res, err := l2.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("new.jpg", jpegBytes(t, 32, 24, 170))}); err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if n := len(srv.Objects(t, url)); n != 2 {
		t.Errorf("%d objects after the sweep, want 2", n)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "media", "tmp", "placing")); len(ents) != 0 {
		t.Errorf("%d placing journals left", len(ents))
	}
}
