package lake

import (
	"context"
	"io"

	"github.com/framelake/framelake/media"
)

// The media store is package media: one interface (media.Blobs) over a
// local folder or an S3 bucket, chosen once at Open from the location the
// database records (location.go). The lake keeps the database side of it:
// which rows name a blob and so when a blob may go (blobs.go), what a
// file's bytes are (probe.go) and its thumbnails (thumb.go).

// Pending is a blob written to a temp file of the store, not yet in place.
type Pending = media.Pending

// ErrTooLarge is wrapped when a blob exceeds the size limit.
var ErrTooLarge = media.ErrTooLarge

// memLimit is the largest upload the lake holds in memory: what the store
// keeps of a blob it writes (Pending.Data).
const memLimit = media.MemLimit

// DefaultStageBytes is the default bound of the local copies of bucket
// media (Options.StageBytes): 1 GiB.
const DefaultStageBytes = media.DefaultStageBytes

// Store is the lake's media store.
func (l *Lake) Store() media.Blobs { return l.store }

// key is the blob a staged upload is to be placed as.
func (s staged) key() media.Key { return media.Key{Hash: s.pend.Hash, Ext: s.p.Ext} }

// place puts the staged files' blobs in place, durable when it returns (see
// media.Blobs.Place), uploading on the lake's workers where the store gains
// by it. It returns the blobs it created and their journal.
func (l *Lake) place(ctx context.Context, files []staged) (map[media.Key]bool, *media.Journal, error) {
	batch := make([]media.Placing, len(files))
	for i, s := range files {
		batch[i] = media.Placing{Pending: s.pend, Ext: s.p.Ext}
	}
	return l.store.Place(ctx, batch, l.parallel)
}

// writeClose copies an upload's bytes to a temp file of the store and
// closes them, also when reading them panics.
func (l *Lake) writeClose(rc io.ReadCloser, limit int64) (*Pending, error) {
	defer rc.Close()
	return l.store.Write(rc, limit)
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
