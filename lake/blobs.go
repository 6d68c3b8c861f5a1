package lake

import (
	"context"
	"sync"

	"github.com/framelake/framelake/media"
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
// crashes, the store lists the blobs an Add creates in a placing journal
// that is on disk before they are (media/journal.go); the next process to
// open the store hands them to the lake, which checks them.

// blobRefs counts, per blob, the Adds that may still commit a row naming it.
type blobRefs struct {
	mu sync.Mutex
	m  map[media.Key]*blobRef // made on first use
}

type blobRef struct {
	n     int
	sweep bool // when n drops to 0, remove the blob if no row names it
}

// holdBlobs marks keys as possibly named by rows about to be committed.
func (l *Lake) holdBlobs(keys []media.Key) {
	r := &l.refs
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		if r.m == nil {
			r.m = map[media.Key]*blobRef{}
		}
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
func (l *Lake) releaseBlobs(ctx context.Context, keys []media.Key, created map[media.Key]bool, failed bool) bool {
	r := &l.refs
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
				l.log.Error("remove unused blob", "blob", k.Hash, "err", err)
				ok = false
			}
		}
	}
	return ok
}

// removeBlobIfUnused removes a blob no row names, or leaves that to the
// last Add holding it. It reports whether it removed the blob.
func (l *Lake) removeBlobIfUnused(ctx context.Context, k media.Key) (bool, error) {
	r := &l.refs
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
func (l *Lake) removeUnusedLocked(ctx context.Context, k media.Key) (bool, error) {
	var named bool
	if err := l.db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM file WHERE blob = ? AND ext = ?)`,
		k.Hash, k.Ext).Scan(&named); err != nil {
		return false, err
	}
	for _, u := range l.blobUsers {
		if named {
			break
		}
		var err error
		if named, err = u(ctx, k.Hash, k.Ext); err != nil {
			return false, err
		}
	}
	if named {
		return false, nil
	}
	return true, l.store.Remove(ctx, k.Hash, k.Ext)
}

// sweepLeftovers removes the blobs of leftover journals that no row names.
// The store cannot see the rows, so the lake does it before its first write.
func (l *Lake) sweepLeftovers(ctx context.Context) {
	l.sweepOnce.Do(func() {
		for _, j := range l.store.Leftovers() {
			keys, err := j.Keys()
			for _, k := range keys {
				if err == nil {
					_, err = l.removeBlobIfUnused(ctx, k)
				}
			}
			if err != nil {
				l.log.Error("sweep placing journal", "journal", j.Name(), "err", err)
			}
			j.Done(err == nil)
		}
	})
}
