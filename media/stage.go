package media

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// stageCache keeps local copies of bucket blobs for the tools that read a
// file by path (libvips, ffmpeg, model runs): at most limit bytes of copies
// nobody uses, the least recently used removed first. A copy in use is never
// removed, so the folder may pass limit by what is in use at once.
type stageCache struct {
	dir    string
	limit  int64
	bucket *bucket

	mu    sync.Mutex
	m     map[Key]*stageEntry
	total int64 // bytes of ready copies
	tick  int64
}

type stageEntry struct {
	ready chan struct{} // closed once the copy is in place or failed
	err   error
	size  int64
	refs  int
	used  int64 // tick of the last use
}

func (c *stageCache) path(k Key) string { return filepath.Join(c.dir, k.Name()) }

// get returns the path of a local copy of k, fetching it on a miss; call
// release when done reading it.
func (c *stageCache) get(ctx context.Context, k Key) (string, func(), error) {
	c.mu.Lock()
	e := c.m[k]
	fetch := e == nil
	if fetch {
		e = &stageEntry{ready: make(chan struct{})}
		c.m[k] = e
	}
	e.refs++
	c.tick++
	e.used = c.tick
	c.mu.Unlock()
	if fetch {
		e.size, e.err = c.fetch(ctx, k)
		c.mu.Lock()
		if e.err != nil {
			delete(c.m, k) // the next caller tries again
		} else {
			c.total += e.size
		}
		c.mu.Unlock()
		close(e.ready)
	}
	var once sync.Once
	release := func() { once.Do(func() { c.release(k, e) }) }
	select {
	case <-e.ready:
	case <-ctx.Done():
		release()
		return "", nil, ctx.Err()
	}
	if e.err != nil {
		release()
		return "", nil, e.err
	}
	return c.path(k), release, nil
}

// fetch copies the blob into the folder, whole or not at all.
func (c *stageCache) fetch(ctx context.Context, k Key) (int64, error) {
	rc, err := c.bucket.get(ctx, k.Hash, k.Ext)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	f, err := os.CreateTemp(c.dir, ".fetch-*")
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path(k))
	}
	if err != nil {
		os.Remove(f.Name())
		return 0, err
	}
	return n, nil
}

func (c *stageCache) release(k Key, e *stageEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	c.evictLocked()
}

// evictLocked removes unused copies, oldest first, until the rest fit.
func (c *stageCache) evictLocked() {
	for c.total > c.limit {
		var old Key
		var oldest *stageEntry
		for k, e := range c.m {
			if e.refs == 0 && isClosed(e.ready) && e.err == nil && (oldest == nil || e.used < oldest.used) {
				old, oldest = k, e
			}
		}
		if oldest == nil {
			return
		}
		if err := os.Remove(c.path(old)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return // kept and counted: a later eviction tries again
		}
		delete(c.m, old)
		c.total -= oldest.size
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
