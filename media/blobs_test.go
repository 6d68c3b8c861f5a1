package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/tests3"
	"github.com/framelake/framelake/media"
)

// onBoth runs f on a new store in a local folder, then on one in a bucket
// of a versitygw on loopback: the one contract both homes keep.
func onBoth(t *testing.T, f func(t *testing.T, dir string, s media.Blobs)) {
	for _, where := range []string{"local", "bucket"} {
		t.Run(where, func(t *testing.T) {
			url := ""
			if where == "bucket" {
				srv := tests3.Shared(t)
				srv.SetEnv(t)
				url = srv.Bucket(t, "blobs")
			}
			dir := t.TempDir()
			s, err := media.OpenStore(context.Background(), dir, url, 0)
			if err != nil {
				t.Fatal(err)
			}
			if canon, _ := media.CanonicalURL(url); s.URL() != canon {
				t.Errorf("URL %q, want %q", s.URL(), canon)
			}
			f(t, dir, s)
		})
	}
}

func write(t *testing.T, s media.Blobs, body []byte) *media.Pending {
	t.Helper()
	p, err := s.Write(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestBlobsContract: a blob written and placed reads back whole, seeks,
// has a path for tools, a size, shows in the walk, and goes on Remove;
// placing the same bytes twice in one batch stores them once and journals
// them once; a missing blob is NotFound.
func TestBlobsContract(t *testing.T) {
	onBoth(t, func(t *testing.T, dir string, s media.Blobs) {
		ctx := context.Background()
		a, b := []byte("first blob's bytes"), []byte("second blob, longer than the first")
		pa, pa2, pb := write(t, s, a), write(t, s, a), write(t, s, b)
		if pa.Hash != hashOf(a) || pa.Size != int64(len(a)) || !bytes.Equal(pa.Data, a) {
			t.Fatalf("pending %+v", pa)
		}
		batch := []media.Placing{{Pending: pa, Ext: "jpg"}, {Pending: pa2, Ext: "jpg"}, {Pending: pb, Ext: "png"}}
		created, j, err := s.Place(ctx, batch, func(n int, fn func(int)) {
			for i := range n {
				fn(i)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(created) != 2 || !created[media.Key{Hash: pa.Hash, Ext: "jpg"}] {
			t.Errorf("created %v, want the two distinct blobs", created)
		}
		keys, err := j.Keys()
		if err != nil || len(keys) != 2 {
			t.Errorf("journal lists %v (%v), want 2 blobs", keys, err)
		}
		j.Done(true)

		got, err := s.ReadAll(ctx, pa.Hash, "jpg")
		if err != nil || !bytes.Equal(got, a) {
			t.Fatalf("ReadAll %q %v", got, err)
		}
		rc, err := s.Open(ctx, pb.Hash, "png")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rc.Seek(7, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(rest, b[7:]) {
			t.Errorf("read after seek %q", rest)
		}
		path, release, err := s.Local(ctx, pa.Hash, "jpg")
		if err != nil {
			t.Fatal(err)
		}
		if onDisk, _ := os.ReadFile(path); !bytes.Equal(onDisk, a) {
			t.Errorf("Local path holds %q", onDisk)
		}
		release()
		if n, ok, err := s.Stat(ctx, pb.Hash, "png"); !ok || err != nil || n != int64(len(b)) {
			t.Errorf("Stat %d %v %v", n, ok, err)
		}
		var names []string
		if err := s.Walk(ctx, func(name string, size int64, blob bool) {
			if blob {
				names = append(names, name)
			}
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(names)
		want := []string{pa.Hash + ".jpg", pb.Hash + ".png"}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("walk found %v, want %v", names, want)
		}

		if err := s.Remove(ctx, pa.Hash, "jpg"); err != nil {
			t.Fatal(err)
		}
		if err := s.Remove(ctx, pa.Hash, "jpg"); err != nil {
			t.Errorf("removing a missing blob: %v", err)
		}
		if _, ok, err := s.Stat(ctx, pa.Hash, "jpg"); ok || err != nil {
			t.Errorf("removed blob: Stat ok %v, %v", ok, err)
		}
		if _, err := s.Open(ctx, pa.Hash, "jpg"); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("Open of a removed blob: %v, want not found", err)
		}
		if _, err := s.ReadAll(ctx, pa.Hash, "jpg"); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("ReadAll of a removed blob: %v, want not found", err)
		}
		if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp", "placing")); len(tmp) != 0 {
			t.Errorf("%d journals left after Done", len(tmp))
		}
	})
}

// TestBlobsPut: Put stores bytes that hash to the name, and refuses others,
// leaving no blob behind.
func TestBlobsPut(t *testing.T) {
	onBoth(t, func(t *testing.T, dir string, s media.Blobs) {
		ctx := context.Background()
		body := []byte("bytes a migration copies")
		if err := s.Put(ctx, hashOf(body), "jpg", bytes.NewReader(body)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ReadAll(ctx, hashOf(body), "jpg"); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("read back %q %v", got, err)
		}
		wrong := hashOf([]byte("other bytes"))
		if err := s.Put(ctx, wrong, "jpg", bytes.NewReader(body)); !errors.Is(err, media.ErrWrongHash) {
			t.Errorf("Put under a wrong hash: %v, want ErrWrongHash", err)
		}
		if _, ok, _ := s.Stat(ctx, wrong, "jpg"); ok {
			t.Error("a refused Put left a blob")
		}
	})
}

// TestBlobsLeftovers: a journal its process never closed is handed, once,
// to the next store opened on the folder, and lists its blobs.
func TestBlobsLeftovers(t *testing.T) {
	onBoth(t, func(t *testing.T, dir string, s media.Blobs) {
		ctx := context.Background()
		p := write(t, s, []byte("placed, never committed"))
		_, j, err := s.Place(ctx, []media.Placing{{Pending: p, Ext: "bin"}}, func(n int, fn func(int)) {
			for i := range n {
				fn(i)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		j.Done(false) // as a crash leaves it: kept, and no longer locked
		again, err := media.OpenStore(ctx, dir, s.URL(), 0)
		if err != nil {
			t.Fatal(err)
		}
		left := again.Leftovers()
		if len(left) != 1 {
			t.Fatalf("%d leftover journals, want 1", len(left))
		}
		if keys, err := left[0].Keys(); err != nil || len(keys) != 1 || keys[0].Hash != p.Hash {
			t.Errorf("leftover lists %v (%v)", keys, err)
		}
		if again.Leftovers() != nil {
			t.Error("leftovers handed over twice")
		}
		left[0].Done(true)
		if !strings.HasPrefix(filepath.Base(left[0].Name()), "add-") {
			t.Errorf("journal named %s", left[0].Name())
		}
	})
}
