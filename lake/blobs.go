package lake

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A blob must stay on disk while a file row names it, and should not stay
// when none does. Blobs are placed before their rows are inserted (so a crash
// never leaves a row without its blob), which opens three ways to get this
// wrong:
//   - an Add whose transaction fails leaves the blobs it placed;
//   - a Delete sees no other row share its blob and removes it just as an Add
//     of the same bytes, which found the blob in place, commits a row naming it;
//   - a crash between placing and committing leaves blobs no row names.
// So an Add holds each of its blobs (blobRefs) from before it looks for it on
// disk until its transaction has ended, and a blob is removed only under
// blobRefs.mu, when no Add holds it and no row names it. A blob still held is
// flagged instead, and the last Add to let go of it does the check. For
// crashes, an Add lists the blobs it creates in a placing journal that is on
// disk before they are; the next process to open the store checks them.

// blobKey names a blob in the store.
type blobKey struct{ hash, ext string }

func (s staged) key() blobKey { return blobKey{s.pend.Hash, s.p.Ext} }

// blobRefs counts, per blob, the Adds that may still commit a row naming it.
type blobRefs struct {
	mu sync.Mutex
	m  map[blobKey]*blobRef
}

type blobRef struct {
	n     int
	sweep bool // when n drops to 0, remove the blob if no row names it
}

// holdBlobs marks keys as possibly named by rows about to be committed.
func (l *Lake) holdBlobs(keys []blobKey) {
	r := &l.store.refs
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		e := r.m[k]
		if e == nil {
			e = &blobRef{}
			r.m[k] = e
		}
		e.n++
	}
}

// releaseBlobs lets go of keys once the transaction has ended. After a
// failed one, the blobs this Add created are removed unless a row names them
// or another Add still holds them (that Add then checks). It reports whether
// every removal it tried worked.
func (l *Lake) releaseBlobs(ctx context.Context, keys []blobKey, created map[blobKey]bool, failed bool) bool {
	r := &l.store.refs
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := true
	for _, k := range keys {
		e := r.m[k]
		e.n--
		e.sweep = e.sweep || failed && created[k]
		if e.n > 0 {
			continue
		}
		delete(r.m, k)
		if e.sweep {
			if _, err := l.removeUnusedLocked(ctx, k); err != nil {
				l.log.Error("remove unused blob", "blob", k.hash, "err", err)
				ok = false
			}
		}
	}
	return ok
}

// removeBlobIfUnused removes a blob no row names, or leaves that to the
// last Add holding it. It reports whether it removed the blob.
func (l *Lake) removeBlobIfUnused(ctx context.Context, k blobKey) (bool, error) {
	r := &l.store.refs
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.m[k]; e != nil {
		e.sweep = true
		return false, nil
	}
	return l.removeUnusedLocked(ctx, k)
}

// BlobUser reports whether rows outside the lake's tables name a blob of the
// media store (dataset versions keep augmented frames there).
type BlobUser func(ctx context.Context, hash, ext string) (bool, error)

// OnBlobCheck makes the lake keep a blob on disk while u says it is named,
// whatever the lake's own rows say. Register before the lake is shared.
func (l *Lake) OnBlobCheck(u BlobUser) { l.blobUsers = append(l.blobUsers, u) }

// removeUnusedLocked removes the blob if no committed row names it and
// reports whether it did; the caller holds refs.mu and knows no Add holds k.
func (l *Lake) removeUnusedLocked(ctx context.Context, k blobKey) (bool, error) {
	var named bool
	if err := l.db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM file WHERE blob = ? AND ext = ?)`,
		k.hash, k.ext).Scan(&named); err != nil {
		return false, err
	}
	for _, u := range l.blobUsers {
		if named {
			break
		}
		var err error
		if named, err = u(ctx, k.hash, k.ext); err != nil {
			return false, err
		}
	}
	if named {
		return false, nil
	}
	return true, l.store.Remove(ctx, k.hash, k.ext)
}

// journal is a placing journal: a temp file listing the blobs one Add
// creates, flock'ed while that Add runs so no other process sweeps it.
type journal struct{ f *os.File }

// placingName is the temp subfolder of journals, kept when temp is cleared.
const placingName = "placing"

func (s *DiskStore) placingDir() string { return filepath.Join(s.tmp, placingName) }

// writeJournal lists keys in a new journal. For the local folder it is not
// synced: the Sync that makes the temp files durable, before any is renamed
// into place, does that. With a bucket it is synced here, file and folder,
// as Sync has nothing else to do.
func (s *DiskStore) writeJournal(keys []blobKey) (*journal, error) {
	f, err := os.CreateTemp(s.placingDir(), "add-*")
	if err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	j := &journal{f}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.hash + "." + k.ext + "\n")
	}
	if err = unix.Flock(int(f.Fd()), unix.LOCK_EX); err == nil {
		_, err = f.WriteString(b.String())
	}
	if err == nil && s.bucket != nil {
		err = syncFileAndDir(f)
	}
	if err != nil {
		j.done(true)
		return nil, fmt.Errorf("media store: journal: %w", err)
	}
	return j, nil
}

// done closes the journal, removing it when its blobs are settled; one kept
// is swept by the next process to open the store.
func (j *journal) done(settled bool) {
	if j == nil {
		return
	}
	if settled {
		os.Remove(j.f.Name())
	}
	j.f.Close()
}

// keys reads the blobs a journal lists.
func (j *journal) keys() ([]blobKey, error) {
	if _, err := j.f.Seek(0, 0); err != nil {
		return nil, err
	}
	var out []blobKey
	sc := bufio.NewScanner(j.f)
	for sc.Scan() {
		hash, ext, ok := strings.Cut(sc.Text(), ".")
		if ok && len(hash) == 64 && ext != "" && !strings.ContainsAny(ext, `/\.`) {
			out = append(out, blobKey{hash, ext})
		}
	}
	return out, sc.Err()
}

// openLeftovers locks the journals no live process holds: those of
// processes that died between placing blobs and committing their rows.
func (s *DiskStore) openLeftovers() ([]*journal, error) {
	ents, err := os.ReadDir(s.placingDir())
	if err != nil {
		return nil, err
	}
	var out []*journal
	for _, e := range ents {
		f, err := os.OpenFile(filepath.Join(s.placingDir(), e.Name()), os.O_RDWR, 0)
		if err != nil {
			continue // swept by another process meanwhile
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				continue // its Add is still running in another process
			}
			return out, err
		}
		out = append(out, &journal{f})
	}
	return out, nil
}

// sweepLeftovers removes the blobs of leftover journals that no row names.
// The store cannot see the rows, so the lake does it before its first write.
func (l *Lake) sweepLeftovers(ctx context.Context) {
	l.store.sweepOnce.Do(func() {
		for _, j := range l.store.leftover {
			keys, err := j.keys()
			for _, k := range keys {
				if err == nil {
					_, err = l.removeBlobIfUnused(ctx, k)
				}
			}
			if err != nil {
				l.log.Error("sweep placing journal", "journal", j.f.Name(), "err", err)
			}
			j.done(err == nil)
		}
		l.store.leftover = nil
	})
}

// syncFileAndDir makes f's bytes and its name in its folder durable.
func syncFileAndDir(f *os.File) error {
	if err := f.Sync(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(f.Name()))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
