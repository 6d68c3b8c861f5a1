package lake_test

import (
	"context"
	"errors"
	"fmt"
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
