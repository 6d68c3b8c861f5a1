package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// S3 keeps blobs in an S3-compatible bucket (bucket.go), with the local
// working folder for temp files and journals, and a bounded cache of local
// copies for the tools that read by path (stage.go). A stageEntry blob is
// uploaded with one PUT carrying its SHA-256, so the object is there whole
// or not at all and never under a wrong name.
type S3 struct {
	*staging
	b     *bucket
	stage *stageCache // nil for a store opened as a view
}

func newS3(t *staging, b *bucket, stageBytes int64) (*S3, error) {
	if stageBytes <= 0 {
		stageBytes = DefaultStageBytes
	}
	dir := filepath.Join(t.tmp, "stage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	return &S3{staging: t, b: b, stage: &stageCache{dir: dir, limit: stageBytes, bucket: b, m: map[Key]*stageEntry{}}}, nil
}

func (s *S3) URL() string { return s.b.url }

func (s *S3) Local(ctx context.Context, hash, ext string) (string, func(), error) {
	if s.stage == nil {
		return "", nil, errors.New("media store: a view stages no copies")
	}
	return s.stage.get(ctx, Key{hash, ext})
}

func (s *S3) ReadAll(ctx context.Context, hash, ext string) ([]byte, error) {
	rc, err := s.b.get(ctx, hash, ext)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func (s *S3) Open(ctx context.Context, hash, ext string) (io.ReadSeekCloser, error) {
	return s.b.open(ctx, hash, ext)
}

func (s *S3) Stat(ctx context.Context, hash, ext string) (int64, bool, error) {
	return s.b.stat(ctx, hash, ext)
}

func (s *S3) Presign(ctx context.Context, hash, ext, name string, ttl time.Duration) (string, error) {
	return s.b.presign(ctx, hash, ext, name, ttl)
}

func (s *S3) Remove(ctx context.Context, hash, ext string) error { return s.b.remove(ctx, hash, ext) }

func (s *S3) Walk(ctx context.Context, fn func(name string, size int64, blob bool)) error {
	return s.b.list(ctx, fn)
}

// Sync has nothing to do: nothing in the local folder has to outlive a
// crash but the placing journals, which journal syncs itself; a temp file
// is uploaded from, and the bucket makes the object durable. syncfs(2)
// would write every temp file to disk before its upload, and wait for
// whatever else the file system has to flush.
func (s *S3) Sync() error { return nil }

// Place journals every blob of the batch as created (a lookup per blob
// would cost what the upload of a small one does), syncs the journal, as
// Sync does not, and uploads the blobs on run's workers. A blob that was
// there already is safe from the removal after a failure, as a row names it.
func (s *S3) Place(ctx context.Context, batch []Placing, run Runner) (map[Key]bool, *Journal, error) {
	created, news := newKeys(batch, nil)
	j, err := s.journal(news, true)
	if err != nil {
		discardAll(batch)
		return created, j, err
	}
	return created, j, s.upload(ctx, batch, run)
}

// upload puts the batch in the bucket on run's workers; the first error
// is returned once all have finished.
func (s *S3) upload(ctx context.Context, batch []Placing, run Runner) error {
	fails := make([]error, len(batch))
	run(len(batch), func(i int) {
		defer func() {
			if p := recover(); p != nil {
				fails[i] = fmt.Errorf("media store: upload panic: %v", p)
			}
		}()
		p := batch[i]
		if fails[i] = ctx.Err(); fails[i] != nil {
			p.Pending.Discard()
			return
		}
		fails[i] = s.put(ctx, p.Pending, p.Ext)
		p.Pending.Data = nil
	})
	return errors.Join(fails...)
}

// put uploads a stageEntry blob, from memory when Write kept its bytes (no
// second read of them), and removes its temp file.
func (s *S3) put(ctx context.Context, p *Pending, ext string) error {
	if err := checkExt(ext); err != nil {
		return err
	}
	defer os.Remove(p.tmp)
	if p.Data != nil && int64(len(p.Data)) == p.Size {
		return s.b.putBytes(ctx, p.Hash, ext, p.Data)
	}
	return s.b.put(ctx, p.Hash, ext, p.tmp)
}

// Put uploads from a temp file, which needs no sync: the upload is read
// from it while this process lives.
func (s *S3) Put(ctx context.Context, hash, ext string, r io.Reader) error {
	return s.putThrough(hash, ext, r, false, func(tmp string) error { return s.b.put(ctx, hash, ext, tmp) })
}
