package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/media"
)

// Deleting is safe (decided here, where the interface is silent):
//   - Deleting a file removes its row, its collection memberships, tags and
//     annotations (human and machine), and whatever other packages keep about
//     it through their delete hooks (embeddings, upload-session frames), in
//     one transaction. Dataset versions that hold the file stay whole: they
//     are immutable snapshots and keep naming its blob.
//   - A blob leaves the disk only after that transaction has committed, and
//     only when no file row and no BlobUser (dataset versions) names it and
//     no Add of the same bytes holds it (blobs.go); otherwise it is kept.
//   - Deleting a collection removes it, its tags and its memberships; its
//     files stay in the lake unless asked to go too.
//
// Every delete answers a Deleted: counts of what went, and of what stayed
// because something else still needs it.

// Counts are how many things of each kind a delete removed or kept; kinds
// it did not touch are left out of the JSON.
type Counts struct {
	Files       int `json:"files,omitempty"`
	Collections int `json:"collections,omitempty"`
	Memberships int `json:"memberships,omitempty"` // file-in-collection rows
	Tags        int `json:"tags,omitempty"`
	Annotations int `json:"annotations,omitempty"` // human and machine boxes
	Embeddings  int `json:"embeddings,omitempty"`
	Blobs       int `json:"blobs,omitempty"` // media files on disk
	Datasets    int `json:"datasets,omitempty"`
	Versions    int `json:"versions,omitempty"`
	Frames      int `json:"frames,omitempty"` // dataset version frames, augmented ones included
	Projects    int `json:"projects,omitempty"`
	Labels      int `json:"labels,omitempty"`
	Tasks       int `json:"tasks,omitempty"`      // upload sessions with their tasks
	TaskFrames  int `json:"taskFrames,omitempty"` // frames received by upload sessions
}

// Deleted is the answer of a delete. Kept counts what the delete left because
// something else still needs it: the versions still holding a deleted file,
// blobs another file or version names, the files of a collection or project
// deleted without its files.
type Deleted struct {
	Removed Counts `json:"removed"`
	Kept    Counts `json:"kept"`
	// CancelledJobs are the builds cancelled because their version went.
	CancelledJobs []string `json:"cancelledJobs,omitempty"`
}

// DeleteHook runs inside the transaction that deletes files, before their
// rows go, so packages that keep rows about files (vectors, datasets,
// annotation projects) settle theirs atomically and count them in d.
type DeleteHook func(ctx context.Context, tx *sql.Tx, fileSeqs []int64, d *Deleted) error

// OnDelete registers a hook; call it before serving requests.
func (l *Lake) OnDelete(h DeleteHook) { l.deleteHooks = append(l.deleteHooks, h) }

// BlobRef names a blob of the media store.
type BlobRef struct{ Hash, Ext string }

// Delete is DeleteFile for callers that need no counts.
func (l *Lake) Delete(ctx context.Context, uniqueName string) error {
	_, err := l.DeleteFile(ctx, uniqueName)
	return err
}

// DeleteFile deletes the file uniqueName (see the semantics above).
func (l *Lake) DeleteFile(ctx context.Context, uniqueName string) (Deleted, error) {
	var d Deleted
	var blobs []BlobRef
	err := l.db.Tx(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM file WHERE unique_name = ?`, uniqueName).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.New(errs.NotFound, "uniqueName", "file %q not found", uniqueName)
		}
		if err != nil {
			return err
		}
		blobs, err = l.DeleteFilesTx(ctx, tx, []int64{seq}, &d)
		return err
	})
	if err != nil {
		return Deleted{}, fmt.Errorf("delete file %s: %w", uniqueName, err)
	}
	l.ReleaseBlobs(ctx, blobs, &d)
	return d, nil
}

// DeleteCollection deletes a collection with its tags and memberships; with
// withFiles its member files are deleted too (from every collection),
// otherwise they stay in the lake and count as kept.
func (l *Lake) DeleteCollection(ctx context.Context, id string, withFiles bool) (Deleted, error) {
	var d Deleted
	var blobs []BlobRef
	err := l.db.Tx(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM collection WHERE id = ?`, id).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.New(errs.NotFound, "collectionId", "collection %q not found", id)
		}
		if err != nil {
			return err
		}
		if withFiles {
			seqs, err := sqlitedb.Int64s(ctx, tx, `SELECT file_seq FROM collection_file WHERE collection_seq = ?`, seq)
			if err != nil {
				return err
			}
			if blobs, err = l.DeleteFilesTx(ctx, tx, seqs, &d); err != nil {
				return err
			}
		}
		var members, tags int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM collection_file WHERE collection_seq = ?),
			(SELECT count(*) FROM collection_tag WHERE collection_seq = ?)`, seq, seq).Scan(&members, &tags); err != nil {
			return err
		}
		if !withFiles {
			d.Kept.Files += members
		}
		d.Removed.Memberships += members
		d.Removed.Tags += tags
		d.Removed.Collections++
		_, err = tx.ExecContext(ctx, `DELETE FROM collection WHERE seq = ?`, seq)
		return err
	})
	if err != nil {
		return Deleted{}, fmt.Errorf("delete collection %s: %w", id, err)
	}
	l.ReleaseBlobs(ctx, blobs, &d)
	return d, nil
}

// DeleteFilesTx deletes the files with these keys in the caller's
// transaction: it runs the delete hooks, removes the rows with their
// memberships, tags and annotations, counts them in d, and returns the blobs
// the files named. Pass those to ReleaseBlobs once the transaction has
// committed (never before: a rolled-back delete still needs them).
func (l *Lake) DeleteFilesTx(ctx context.Context, tx *sql.Tx, fileSeqs []int64, d *Deleted) ([]BlobRef, error) {
	if len(fileSeqs) == 0 {
		return nil, nil
	}
	list := jsonArray(fileSeqs)
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT blob, ext FROM file WHERE seq IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return nil, err
	}
	var blobs []BlobRef
	for rows.Next() {
		var b BlobRef
		if err := rows.Scan(&b.Hash, &b.Ext); err != nil {
			rows.Close()
			return nil, err
		}
		blobs = append(blobs, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var members, tags, boxes int
	if err := tx.QueryRowContext(ctx, `WITH s AS (SELECT value AS seq FROM json_each(?)) SELECT
		(SELECT count(*) FROM collection_file WHERE file_seq IN (SELECT seq FROM s)),
		(SELECT count(*) FROM file_tag WHERE file_seq IN (SELECT seq FROM s)),
		(SELECT count(*) FROM annotation WHERE file_seq IN (SELECT seq FROM s))`, list).Scan(&members, &tags, &boxes); err != nil {
		return nil, err
	}
	for _, h := range l.deleteHooks {
		if err := h(ctx, tx, fileSeqs, d); err != nil {
			return nil, err
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM file WHERE seq IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return nil, err
	}
	n, _ := res.RowsAffected()
	d.Removed.Files += int(n)
	d.Removed.Memberships += members
	d.Removed.Tags += tags
	d.Removed.Annotations += boxes
	return blobs, nil
}

// ReleaseBlobs removes from disk the blobs that nothing names any more, after
// the transaction that dropped their last rows has committed, and counts each
// in d as removed or kept. A blob an Add of the same bytes holds is kept now
// and checked again when that Add ends (blobs.go). The removal is not
// cancelled with ctx, and a blob that cannot be removed is logged and counted
// as kept rather than failing the delete: its rows are gone already.
func (l *Lake) ReleaseBlobs(ctx context.Context, blobs []BlobRef, d *Deleted) {
	ctx = context.WithoutCancel(ctx)
	l.sweepLeftovers(ctx)
	seen := make(map[media.Key]bool, len(blobs))
	for _, b := range blobs {
		k := media.Key{Hash: b.Hash, Ext: b.Ext}
		if seen[k] {
			continue
		}
		seen[k] = true
		removed, err := l.removeBlobIfUnused(ctx, k)
		if err != nil {
			l.log.Error("remove unused blob", "blob", b.Hash+"."+b.Ext, "err", err)
		}
		if removed && err == nil {
			d.Removed.Blobs++
			l.dropThumbs(b.Hash)
		} else {
			d.Kept.Blobs++
		}
	}
}

// DeleteEmptyCollectionsTx deletes those of the collections named names that
// have no member left, in the caller's transaction, and returns how many it
// deleted (annotation projects drop their sessions' collections with their
// frames).
func DeleteEmptyCollectionsTx(ctx context.Context, tx *sql.Tx, names []string) (int, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM collection WHERE name IN (SELECT value FROM json_each(?))
		AND NOT EXISTS (SELECT 1 FROM collection_file cf WHERE cf.collection_seq = collection.seq)`, jsonArray(names))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// CountOperationBoxesTx counts the boxes of one source that an operation (a
// project or model run id) made.
func CountOperationBoxesTx(ctx context.Context, tx *sql.Tx, source Source, operation string) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM annotation WHERE operation = ? AND source = ?`,
		operation, source).Scan(&n)
	return n, err
}

// CountCollectionsTx counts those of the collections named names that exist.
func CountCollectionsTx(ctx context.Context, tx *sql.Tx, names []string) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM collection WHERE name IN (SELECT value FROM json_each(?))`,
		jsonArray(names)).Scan(&n)
	return n, err
}
