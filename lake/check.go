package lake

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/media"
)

// NamedBlob is a row that names a blob of the media store, for the
// integrity check (framelake check).
type NamedBlob struct {
	Hash, Ext string
	Owner     string // the row, as a person reads it: "file fil_..."
	Size      int64  // the size the row records; -1 when it records none
}

func (n NamedBlob) key() string { return n.Hash + "." + n.Ext }

// BlobNamer lists, in tx, the blobs one package's rows name.
type BlobNamer func(ctx context.Context, tx *sql.Tx, add func(NamedBlob)) error

// FileBlobs is the lake's BlobNamer: every file row names its blob.
func FileBlobs(ctx context.Context, tx *sql.Tx, add func(NamedBlob)) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, blob, ext, size FROM file`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		n := NamedBlob{}
		if err := rows.Scan(&id, &n.Hash, &n.Ext, &n.Size); err != nil {
			return err
		}
		n.Owner = "file " + id
		add(n)
	}
	return rows.Err()
}

// MediaReport is what CheckMedia found.
type MediaReport struct {
	Location string      // where the media lives: "" for the local folder, else its bucket URL
	Blobs    int         // blobs on disk or in the bucket
	Named    int         // rows naming a blob
	Missing  []NamedBlob // rows whose blob is absent, or not of the size the row records
	Orphans  []string    // blobs no row names and no upload in progress is placing ("hash.ext")
	Leftover []string    // blobs no row names that a dead process's journal lists: the next start sweeps them
	InFlight int         // blobs no row names yet that a live upload is placing
	Journals []string    // placing journals a dead process left (the next start sweeps them)
	Strays   []string    // files in the store that are not blobs, relative to the store
}

// CheckMedia compares the blobs on disk under mediaDir with the blobs the
// rows name. It only reads, and a server may write meanwhile: a blob placed
// but not yet committed is in a placing journal its upload holds locked,
// and each suspect is looked at again after the journals were read, so
// neither an upload nor a delete in flight reads as a problem.
func CheckMedia(ctx context.Context, db *sqlitedb.DB, mediaDir string, namers ...BlobNamer) (MediaReport, error) {
	var r MediaReport
	v, err := openView(ctx, db, mediaDir)
	if err != nil {
		return r, err
	}
	r.Location = v.URL()
	onDisk, strays, err := scan(ctx, v)
	if err != nil {
		return r, err
	}
	r.Blobs, r.Strays = len(onDisk), strays
	named := map[string]bool{}
	var suspects []NamedBlob
	err = readNamed(ctx, db, namers, func(n NamedBlob) {
		named[n.key()] = true
		r.Named++
		if size, ok := onDisk[n.key()]; !ok || n.Size >= 0 && size != n.Size {
			suspects = append(suspects, n)
		}
	})
	if err != nil {
		return r, err
	}
	var orphans []string
	for k := range onDisk {
		if !named[k] {
			orphans = append(orphans, k)
		}
	}
	if len(suspects) == 0 && len(orphans) == 0 {
		return r, nil
	}
	js, err := media.ReadJournals(mediaDir)
	if err != nil {
		return r, err
	}
	r.Journals = js.Dead
	// A second look, after the journals: rows committed or deleted since.
	again := map[string]bool{}
	owners := map[string]bool{}
	if err := readNamed(ctx, db, namers, func(n NamedBlob) {
		again[n.key()] = true
		owners[n.Owner+" "+n.key()] = true
	}); err != nil {
		return r, err
	}
	for _, k := range orphans {
		switch {
		case again[k]:
		case js.Live[k]:
			r.InFlight++
		case !exists(ctx, v, k):
		case js.DeadKeys[k]:
			r.Leftover = append(r.Leftover, k)
		default:
			r.Orphans = append(r.Orphans, k)
		}
	}
	for _, n := range suspects {
		size, ok := blobSize(ctx, v, n.key())
		if owners[n.Owner+" "+n.key()] && (!ok || n.Size >= 0 && size != n.Size) {
			r.Missing = append(r.Missing, n)
		}
	}
	return r, nil
}

// readNamed runs every namer in one read transaction, so they see one state.
func readNamed(ctx context.Context, db *sqlitedb.DB, namers []BlobNamer, add func(NamedBlob)) error {
	tx, err := db.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("check media: %w", err)
	}
	defer tx.Rollback()
	for _, n := range append([]BlobNamer{FileBlobs}, namers...) {
		if err := n(ctx, tx, add); err != nil {
			return fmt.Errorf("check media: %w", err)
		}
	}
	return nil
}

// RepairMedia removes the orphan and leftover blobs and the dead journals
// r lists. The
// caller must hold the data folder alone (no server, no import): an upload
// of bytes already stored names their blob without a journal.
func RepairMedia(ctx context.Context, mediaDir string, r MediaReport) (removed int, err error) {
	store, err := media.OpenView(ctx, mediaDir, r.Location)
	if err != nil {
		return 0, err
	}
	for _, k := range append(r.Orphans, r.Leftover...) {
		hash, ext, _ := strings.Cut(k, ".")
		if err := store.Remove(ctx, hash, ext); err != nil {
			return removed, err
		}
		removed++
	}
	for _, j := range r.Journals {
		if err := media.RemoveJournal(mediaDir, j); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// openView opens the media store the database records for reading only:
// nothing in the local folder is cleared or swept.
func openView(ctx context.Context, db *sqlitedb.DB, mediaDir string) (media.Blobs, error) {
	url, err := MediaLocation(ctx, db.R)
	if err != nil {
		return nil, err
	}
	return media.OpenView(ctx, mediaDir, url)
}

// scan lists the store's blobs with their sizes, and what else it holds.
func scan(ctx context.Context, s media.Blobs) (map[string]int64, []string, error) {
	blobs := map[string]int64{}
	var strays []string
	err := s.Walk(ctx, func(name string, size int64, blob bool) {
		if blob {
			blobs[name] = size
		} else {
			strays = append(strays, name)
		}
	})
	return blobs, strays, err
}

// blobSize returns the size of the blob named "hash.ext", ok false when
// absent or unreadable.
func blobSize(ctx context.Context, s media.Blobs, key string) (int64, bool) {
	hash, ext, _ := strings.Cut(key, ".")
	n, ok, err := s.Stat(ctx, hash, ext)
	return n, ok && err == nil
}

func exists(ctx context.Context, s media.Blobs, key string) bool {
	_, ok := blobSize(ctx, s, key)
	return ok
}
