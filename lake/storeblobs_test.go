package lake_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestStoreBlobs: blobs that belong to no lake file (augmented dataset
// frames) get an Add's guarantees, and a BlobUser keeps them on disk.
func TestStoreBlobs(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t)
	named := map[string]bool{} // the caller's own rows, as its BlobUser sees them
	l.OnBlobCheck(func(_ context.Context, hash, _ string) (bool, error) { return named[hash], nil })
	put := func(b []byte, commit func(hash string) error) (string, error) {
		p, err := l.Store().Write(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		return p.Hash, l.StoreBlobs(ctx, []lake.Placed{{Pending: p, Ext: "jpg"}}, func() error { return commit(p.Hash) })
	}
	exists := func(hash string) bool {
		_, ok, err := l.Store().Stat(ctx, hash, "jpg")
		return ok && err == nil
	}

	failed, err := put(jpegBytes(t, 16, 16, 1), func(string) error { return errRefused })
	if err != errRefused || exists(failed) {
		t.Fatalf("failed commit: err %v, blob left %v", err, exists(failed))
	}

	img := jpegBytes(t, 16, 16, 2)
	kept, err := put(img, func(hash string) error { named[hash] = true; return nil })
	if err != nil || !exists(kept) {
		t.Fatalf("commit: %v, blob there %v", err, exists(kept))
	}
	// A lake file with the same bytes shares the blob; deleting it must
	// leave the blob to the rows that still name it.
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("same.jpg", img)})
	if err != nil || len(res.Stored) != 1 || res.Stored[0].Blob != kept {
		t.Fatalf("add same bytes: %+v %v", res, err)
	}
	if err := l.Delete(ctx, res.Stored[0].UniqueName); err != nil {
		t.Fatal(err)
	}
	if !exists(kept) {
		t.Error("deleting a lake file removed a blob a BlobUser names")
	}
	delete(named, kept)
	res, _ = l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("again.jpg", img)})
	if err := l.Delete(ctx, res.Stored[0].UniqueName); err != nil || exists(kept) {
		t.Errorf("with no user naming it, delete kept the blob (%v)", err)
	}
}
