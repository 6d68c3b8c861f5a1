package lake

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/tests3"
	"github.com/framelake/framelake/internal/testmedia"
)

// BenchmarkBucketThumbnail is the cold thumbnail from the bucket: a
// 1080p JPEG fetched from a SeaweedFS on loopback into the stage cache and
// shrunk to 256 px, with the stage cache emptied before every call and no
// thumbnail cache, in wall time.
func BenchmarkBucketThumbnail(b *testing.B) {
	ctx := context.Background()
	srv := tests3.Shared(b)
	srv.SetEnv(b)
	dir := b.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", Migrations); err != nil {
		b.Fatal(err)
	}
	l, err := Open(ctx, db, Options{MediaDir: filepath.Join(dir, "media"), SigningKey: make([]byte, 32),
		Media: srv.Bucket(b, "thumbs")})
	if err != nil {
		b.Fatal(err)
	}
	img := testmedia.JPEG(1920, 1080, 7)
	res, err := l.Add(ctx, AddOptions{}, []Upload{{Name: "frame.jpg", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }}})
	if err != nil || len(res.Stored) != 1 {
		b.Fatalf("%+v %v", res, err)
	}
	f := res.Stored[0]
	var wall time.Duration
	for b.Loop() {
		dropStaged(l.store.stage, blobKey{f.Blob, f.Ext})
		start := time.Now()
		if _, err := l.Thumbnail(ctx, f, 256); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
	}
	b.ReportMetric(float64(wall)/float64(b.N)/1e6, "wall-ms/op")
	b.ReportMetric(float64(len(img))/1024, "source-KiB")
}

// dropStaged forgets and removes the staged copy of k, so the next read fetches it.
func dropStaged(c *stageCache, k blobKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil {
		delete(c.m, k)
		c.total -= e.size
		os.Remove(c.path(k))
	}
}
