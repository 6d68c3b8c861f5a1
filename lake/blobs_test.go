package lake_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// mediaBlobs lists the blobs in place in the lake's media store (temp files
// and journals, under tmp, are not blobs), as "hash.ext".
func mediaBlobs(t testing.TB, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(dir, "media"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "tmp" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			out[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fileBlobs lists the blobs file rows name, as "hash.ext".
func fileBlobs(t testing.TB, l *lake.Lake) map[string]bool {
	t.Helper()
	rows, err := l.DB().R.Query("SELECT blob, ext FROM file")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var blob, ext string
		if err := rows.Scan(&blob, &ext); err != nil {
			t.Fatal(err)
		}
		out[blob+"."+ext] = true
	}
	return out
}

// sameBlobs fails unless the store holds exactly the blobs rows name.
func sameBlobs(t testing.TB, l *lake.Lake, dir string) {
	t.Helper()
	onDisk, named := mediaBlobs(t, dir), fileBlobs(t, l)
	for b := range named {
		if !onDisk[b] {
			t.Errorf("file row without its blob %s", b)
		}
	}
	for b := range onDisk {
		if !named[b] {
			t.Errorf("blob %s that no file row names", b)
		}
	}
}

var errRefused = errs.Invalid("files", "refused by the caller")

func refuse(context.Context, *sql.Tx, []lake.File) error { return errRefused }

// TestAddFailedTxLeavesNoBlob: an Add whose caller's transaction fails
// stores nothing, not even the blobs it placed, and a later Add of the same
// bytes works and has its blob.
func TestAddFailedTxLeavesNoBlob(t *testing.T) {
	l, dir := openLake(t)
	ctx := context.Background()
	kept, a, b := jpegBytes(t, 32, 24, 1), jpegBytes(t, 32, 24, 2), jpegBytes(t, 40, 30, 3)
	if _, err := l.Add(ctx, lake.AddOptions{Collection: "c"}, []lake.Upload{mem("kept.jpg", kept)}); err != nil {
		t.Fatal(err)
	}
	// kept's blob was there before: a failed Add of the same bytes keeps it.
	ups := []lake.Upload{mem("a.jpg", a), mem("b.jpg", b), mem("a-again.jpg", a), mem("kept-copy.jpg", kept)}
	if _, err := l.Add(ctx, lake.AddOptions{Collection: "c", InTx: refuse}, ups); !errors.Is(err, errRefused) {
		t.Fatalf("add with a failing InTx: %v", err)
	}
	if n := len(fileBlobs(t, l)); n != 1 {
		t.Errorf("%d blobs named by rows after the failed add, want 1", n)
	}
	if n := len(mediaBlobs(t, dir)); n != 1 {
		t.Errorf("%d blobs in the store after the failed add, want 1 (kept.jpg's)", n)
	}
	sameBlobs(t, l, dir)
	res, err := l.Add(ctx, lake.AddOptions{Collection: "c"}, ups[:2])
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("add after the failed one: %+v %v", res, err)
	}
	for _, f := range res.Stored {
		rc, err := l.OpenMedia(ctx, f)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if want := map[string][]byte{"a.jpg": a, "b.jpg": b}[f.Name]; string(got) != string(want) {
			t.Errorf("%s: blob holds %d bytes, want %d", f.Name, len(got), len(want))
		}
	}
	sameBlobs(t, l, dir)
}

// TestAddRacesDelete: Adds of the same bytes, some committing and some
// refused by their transaction, race a Delete of the last file with those
// bytes. However they interleave, every row keeps its blob and no blob
// outlives its rows.
func TestAddRacesDelete(t *testing.T) {
	l, dir := openLake(t)
	ctx := context.Background()
	for i := range 60 {
		img := jpegBytes(t, 24, 16, uint8(i*4))
		first, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("first.jpg", img)})
		if err != nil || len(first.Stored) != 1 {
			t.Fatalf("round %d: %+v %v", i, first, err)
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := l.Delete(ctx, first.Stored[0].UniqueName); err != nil {
				t.Errorf("round %d: delete: %v", i, err)
			}
		})
		for w := range 3 {
			wg.Go(func() {
				opt := lake.AddOptions{}
				if (i+w)%2 == 1 {
					opt.InTx = refuse
				}
				if _, err := l.Add(ctx, opt, []lake.Upload{mem(fmt.Sprintf("again-%d.jpg", w), img)}); err != nil &&
					!errors.Is(err, errRefused) {
					t.Errorf("round %d: add: %v", i, err)
				}
			})
		}
		wg.Wait()
		// Every other round deletes what is left, so rounds end with no rows too.
		if i%2 == 0 {
			rows, _ := l.DB().R.Query("SELECT unique_name FROM file")
			var names []string
			for rows.Next() {
				var n string
				rows.Scan(&n)
				names = append(names, n)
			}
			rows.Close()
			for _, n := range names {
				if err := l.Delete(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
		}
		sameBlobs(t, l, dir)
		if t.Failed() {
			t.Fatalf("round %d", i)
		}
	}
}

// TestAddPanickingUpload: an upload whose Open panics is rejected with an
// internal error naming it; the others in the call are stored; nothing of
// it is stored and the process carries on.
func TestAddPanickingUpload(t *testing.T) {
	l, dir := openLake(t)
	ctx := context.Background()
	boom := lake.Upload{Name: "boom.jpg", Open: func() (io.ReadCloser, error) { panic("reader exploded") }}
	midway := lake.Upload{Name: "midway.jpg", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(strings.NewReader("some bytes"), panicReader{})), nil
	}}
	res, err := l.Add(ctx, lake.AddOptions{Collection: "c"}, []lake.Upload{boom, mem("ok.jpg", jpegBytes(t, 8, 8, 1)), midway})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stored) != 1 || res.Stored[0].Name != "ok.jpg" || len(res.Rejected) != 2 {
		t.Fatalf("stored %+v, rejected %+v", res.Stored, res.Rejected)
	}
	for i, name := range []string{"boom.jpg", "midway.jpg"} {
		r := res.Rejected[i]
		if r.Name != name || r.Code != errs.Internal || !strings.Contains(r.Reason, name) {
			t.Errorf("rejection %+v, want internal naming %s", r, name)
		}
	}
	// Only the panicking uploads: nothing at all is stored.
	res, err = l.Add(ctx, lake.AddOptions{Collection: "d"}, []lake.Upload{boom})
	if err != nil || len(res.Stored) != 0 || len(res.Rejected) != 1 {
		t.Fatalf("only a panicking upload: %+v %v", res, err)
	}
	if _, err := l.CollectionByName(ctx, "d"); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("collection of a rejected upload created: %v", err)
	}
	sameBlobs(t, l, dir)
	tmp := 0
	filepath.WalkDir(filepath.Join(dir, "media", "tmp"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			tmp++
		}
		return nil
	})
	if tmp != 0 {
		t.Errorf("%d temp files left", tmp)
	}
}

type panicReader struct{}

func (panicReader) Read([]byte) (int, error) { panic("disk on fire") }

// TestAddKilledBeforeCommit: a process killed between placing blobs and
// committing their rows leaves blobs no row names; the next process to use
// the lake removes them and keeps the blobs rows name.
func TestAddKilledBeforeCommit(t *testing.T) {
	if dir := os.Getenv("LAKE_KILL_DIR"); dir != "" {
		addThenDie(t, dir)
		return
	}
	l, dir := openLake(t)
	ctx := context.Background()
	if _, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("kept.jpg", jpegBytes(t, 32, 24, 10))}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAddKilledBeforeCommit$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LAKE_KILL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed: %v\n%s", err, out)
	}
	if n := len(mediaBlobs(t, dir)); n != 4 {
		t.Fatalf("%d blobs after the kill, want 4 (1 kept, 3 orphaned)", n)
	}
	// A new process opens the lake; its first write sweeps.
	l2, _ := reopenLake(t, dir)
	res, err := l2.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("new.jpg", jpegBytes(t, 32, 24, 170))})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if n := len(mediaBlobs(t, dir)); n != 2 {
		t.Errorf("%d blobs after the sweep, want 2", n)
	}
	sameBlobs(t, l2, dir)
	if ents, _ := os.ReadDir(filepath.Join(dir, "media", "tmp", "placing")); len(ents) != 0 {
		t.Errorf("%d placing journals left", len(ents))
	}
}

// addThenDie runs in the child: its Add is killed inside the transaction.
func addThenDie(t *testing.T, dir string) {
	l, _ := reopenLake(t, dir)
	die := func(context.Context, *sql.Tx, []lake.File) error {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	ups := []lake.Upload{mem("a.jpg", jpegBytes(t, 32, 24, 50)), mem("b.jpg", jpegBytes(t, 32, 24, 90)),
		mem("c.jpg", jpegBytes(t, 32, 24, 130)), mem("kept-copy.jpg", jpegBytes(t, 32, 24, 10))}
	l.Add(context.Background(), lake.AddOptions{InTx: die}, ups)
	t.Fatal("not killed")
}
