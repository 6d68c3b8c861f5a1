package lake_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestReleaseBlobsRacesAdd: a blob only a dataset version names (a
// BlobUser) is released when the version goes, while Adds of the same bytes
// run, some committing and some refused. However they interleave, every file
// row keeps its blob and no blob outlives the last thing naming it.
func TestReleaseBlobsRacesAdd(t *testing.T) {
	l, dir := openLake(t)
	ctx := context.Background()
	var mu sync.Mutex
	named := map[string]bool{} // the version's frames
	l.OnBlobCheck(func(_ context.Context, hash, _ string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return named[hash], nil
	})
	for i := range 40 {
		img := jpegBytes(t, 24, 16, uint8(i*5))
		res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("frame.jpg", img)})
		if err != nil || len(res.Stored) != 1 {
			t.Fatalf("round %d: %+v %v", i, res, err)
		}
		f := res.Stored[0]
		mu.Lock()
		named[f.Blob] = true
		mu.Unlock()
		// The file goes; the version keeps the blob.
		d, err := l.DeleteFile(ctx, f.UniqueName)
		if err != nil || d.Removed.Files != 1 || d.Kept.Blobs != 1 {
			t.Fatalf("round %d: delete file: %+v %v", i, d, err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { // the version goes
			mu.Lock()
			delete(named, f.Blob)
			mu.Unlock()
			var d lake.Deleted
			l.ReleaseBlobs(ctx, []lake.BlobRef{{Hash: f.Blob, Ext: f.Ext}}, &d)
			if d.Removed.Blobs+d.Kept.Blobs != 1 {
				t.Errorf("round %d: release counted %+v", i, d)
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
		sameBlobs(t, l, dir)
		if t.Failed() {
			t.Fatalf("round %d", i)
		}
	}
}

// TestDeleteDropsThumbnails: when a file's blob leaves the store, its cached
// thumbnails of every size go with it; a blob another file still names
// keeps them.
func TestDeleteDropsThumbnails(t *testing.T) {
	dir := t.TempDir()
	thumbs := filepath.Join(dir, "thumbs")
	l, _ := reopenLake(t, dir, func(o *lake.Options) { o.ThumbDir = thumbs })
	ctx := context.Background()
	img := jpegBytes(t, 64, 48, 7)
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("a.jpg", img), mem("b.jpg", img)})
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	a, b := res.Stored[0], res.Stored[1]
	for _, size := range []int{128, 256} {
		if _, err := l.Thumbnail(ctx, a, size); err != nil {
			t.Fatal(err)
		}
	}
	cached := func() int {
		m, _ := filepath.Glob(filepath.Join(thumbs, "*", a.Blob[:2], a.Blob+".jpg"))
		return len(m)
	}
	if cached() != 2 {
		t.Fatalf("%d thumbnails cached, want 2", cached())
	}
	if _, err := l.DeleteFile(ctx, a.UniqueName); err != nil || cached() != 2 {
		t.Fatalf("b still names the blob: delete a: %v, %d thumbnails left, want 2", err, cached())
	}
	if d, err := l.DeleteFile(ctx, b.UniqueName); err != nil || d.Removed.Blobs != 1 || cached() != 0 {
		t.Fatalf("the last file of the blob: %+v %v, %d thumbnails left, want 0", d, err, cached())
	}
}
