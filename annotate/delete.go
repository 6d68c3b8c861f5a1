package annotate

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// DeleteProject deletes a project with its labels, upload sessions, tasks and
// frame records (see the package comment). Without withFiles the frames'
// files, their human boxes and the sessions' collections stay in the lake and
// count as kept; with it the files are deleted, and the collections left
// empty.
func (s *Service) DeleteProject(ctx context.Context, projectID string, withFiles bool) (lake.Deleted, error) {
	var d lake.Deleted
	var blobs []lake.BlobRef
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		p, err := loadProject(ctx, tx, "p.id = ?", projectID)
		if errs.Is(err, errs.NotFound) {
			return errs.New(errs.NotFound, "projectId", "project %q not found", projectID)
		}
		if err != nil {
			return err
		}
		var collections []string
		// By name, as frames are added to them: a session's collection
		// deleted on its own is made again, with a new id, by its next frame.
		if err := eachRow(ctx, tx, `SELECT collection_name FROM upload_session WHERE project_seq = ?`, p.seq,
			func(r *sql.Rows) error {
				var name string
				err := r.Scan(&name)
				collections = append(collections, name)
				return err
			}); err != nil {
			return err
		}
		var files []int64
		if err := eachRow(ctx, tx, `SELECT f.file_seq FROM frame f JOIN upload_session s ON s.seq = f.session_seq
			WHERE s.project_seq = ?`, p.seq, func(r *sql.Rows) error {
			var seq int64
			err := r.Scan(&seq)
			files = append(files, seq)
			return err
		}); err != nil {
			return err
		}
		if withFiles {
			if blobs, err = s.lake.DeleteFilesTx(ctx, tx, files, &d); err != nil {
				return err
			}
			n, err := lake.DeleteEmptyCollectionsTx(ctx, tx, collections)
			if err != nil {
				return err
			}
			d.Removed.Collections += n
			d.Kept.Collections += len(collections) - n
		} else {
			if err := s.countKept(ctx, tx, p, len(files), collections, &d); err != nil {
				return err
			}
		}
		d.Removed.Projects, d.Removed.Labels, d.Removed.Tasks = 1, len(p.Labels), len(collections)
		_, err = tx.ExecContext(ctx, `DELETE FROM project WHERE seq = ?`, p.seq)
		return err
	})
	if err != nil {
		return lake.Deleted{}, fmt.Errorf("delete project %s: %w", projectID, err)
	}
	s.lake.ReleaseBlobs(ctx, blobs, &d)
	return d, nil
}

// countKept counts what a delete without files leaves in the lake: the
// frames' files, the project's human boxes and the sessions' collections.
// The frame records go with the project.
func (s *Service) countKept(ctx context.Context, tx *sql.Tx, p Project, frames int, collections []string, d *lake.Deleted) error {
	d.Removed.TaskFrames += frames
	d.Kept.Files += frames
	boxes, err := lake.CountOperationBoxesTx(ctx, tx, lake.Human, p.ID)
	if err != nil {
		return err
	}
	d.Kept.Annotations += boxes
	n, err := lake.CountCollectionsTx(ctx, tx, collections)
	d.Kept.Collections += n
	return err
}

// eachRow runs a query with one argument and calls fn for each row.
func eachRow(ctx context.Context, tx *sql.Tx, query string, arg any, fn func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, query, arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
