package lake

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/media"
)

// MigrateReport says what MigrateMedia did.
type MigrateReport struct {
	From    string `json:"from"` // media locations; "" is the local folder
	To      string `json:"to"`
	Blobs   int    `json:"blobs"`   // blobs the rows name
	Resumed int    `json:"resumed"` // verified by an earlier, interrupted run
	Copied  int    `json:"copied"`  // copied and verified by this run
}

// MigrateMedia copies every blob the rows name (the lake's files and what
// namers list) from the lake's media location to another, and records the
// new location only when all are there: each is read back from the new
// location and its SHA-256 checked against its name. Verified blobs are
// listed in a progress file in mediaDir, so a run killed part-way resumes
// where it stopped. Nothing is removed from the old location. The caller
// must hold the data folder alone: no server or import may write meanwhile.
func MigrateMedia(ctx context.Context, db *sqlitedb.DB, mediaDir, to string, workers int, namers ...BlobNamer) (MigrateReport, error) {
	var r MigrateReport
	var err error
	if r.To, err = media.CanonicalURL(to); err != nil {
		return r, err
	}
	src, err := openView(ctx, db, mediaDir)
	if err != nil {
		return r, err
	}
	r.From = src.URL()
	if r.From == r.To {
		return r, errs.Invalid("to", "the media is in %s already", describeMedia(r.To))
	}
	dst, err := media.OpenView(ctx, mediaDir, r.To)
	if err != nil {
		return r, err
	}
	keys := map[media.Key]bool{}
	if err := readNamed(ctx, db, namers, func(n NamedBlob) { keys[media.Key{Hash: n.Hash, Ext: n.Ext}] = true }); err != nil {
		return r, err
	}
	r.Blobs = len(keys)
	p, err := openProgress(filepath.Join(mediaDir, "migrate-"+shortHash(r.To)+".progress"))
	if err != nil {
		return r, err
	}
	defer p.close()
	p.durable = dst.Sync
	var todo []media.Key
	for k := range keys {
		if p.done[k] {
			r.Resumed++
		} else {
			todo = append(todo, k)
		}
	}
	if err := copyAll(ctx, src, dst, todo, max(1, workers), p); err != nil {
		return r, err
	}
	r.Copied = len(todo)
	if err := p.sync(); err != nil {
		return r, err
	}
	if err := SetMediaLocation(ctx, db, r.To); err != nil {
		return r, err
	}
	p.close()
	return r, os.Remove(p.f.Name())
}

// copyAll copies todo on workers, stopping at the first failure.
func copyAll(ctx context.Context, src, dst media.Blobs, todo []media.Key, workers int, p *progress) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan media.Key)
	var wg sync.WaitGroup
	for range min(workers, max(1, len(todo))) {
		wg.Go(func() {
			for k := range next {
				if err := copyBlob(ctx, src, dst, k); err != nil {
					cancel(err)
					continue
				}
				if err := p.add(k); err != nil {
					cancel(err)
				}
			}
		})
	}
	for _, k := range todo {
		if ctx.Err() != nil {
			break
		}
		next <- k
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// copyBlob copies one blob through a local temp file (checking the source
// against its name on the way), stores it at dst and reads it back.
func copyBlob(ctx context.Context, src, dst media.Blobs, k media.Key) error {
	rc, err := src.Open(ctx, k.Hash, k.Ext)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", k.Name(), err)
	}
	err = dst.Put(ctx, k.Hash, k.Ext, rc)
	rc.Close()
	if errors.Is(err, media.ErrWrongHash) {
		err = fmt.Errorf("its bytes at the old location do not hash to its name: restore it from a backup first")
	}
	if err == nil {
		err = verify(ctx, dst, k)
	}
	if err != nil {
		return fmt.Errorf("migrate %s: %w", k.Name(), err)
	}
	return nil
}

// verify reads a blob back from s and checks its hash.
func verify(ctx context.Context, s media.Blobs, k media.Key) error {
	rc, err := s.Open(ctx, k.Hash, k.Ext)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != k.Hash {
		return errors.New("read back from the new location, its bytes do not hash to its name")
	}
	return nil
}

// progress is the list of blobs verified at the new location, one
// "hash.ext" a line, appended as they are; a torn last line is ignored.
type progress struct {
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	done map[media.Key]bool
	n    int // lines since the last sync
	// durable makes the copies the lines name durable before the lines
	// are: the store's Sync (a syncfs of a local folder's renames).
	durable func() error
}

func openProgress(path string) (*progress, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another media migrate is running (%s is locked)", path)
	}
	p := &progress{f: f, w: bufio.NewWriter(f), done: map[media.Key]bool{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hash, ext, ok := strings.Cut(sc.Text(), ".")
		if ok && len(hash) == 64 && ext != "" {
			p.done[media.Key{Hash: hash, Ext: ext}] = true
		}
	}
	return p, sc.Err()
}

// add records k as verified; every 256 lines reach the disk, so a kill
// loses at most that many, which the next run copies again.
func (p *progress) add(k media.Key) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.w.WriteString(k.Name() + "\n")
	if p.n++; p.n < 256 {
		return nil
	}
	p.n = 0
	return p.syncLocked()
}

func (p *progress) sync() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.syncLocked()
}

func (p *progress) syncLocked() error {
	if p.durable != nil {
		if err := p.durable(); err != nil {
			return err
		}
	}
	if err := p.w.Flush(); err != nil {
		return err
	}
	return p.f.Sync()
}

func (p *progress) close() { p.f.Close() }

// shortHash names a media location in a file name.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}
