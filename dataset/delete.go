package dataset

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// filesDeleted is the lake delete hook. Versions are immutable snapshots, so
// the files' frames stay (see the package comment); they only stop naming a
// lake file. Their blobs stay on disk because namesBlob still finds them.
func (s *Service) filesDeleted(ctx context.Context, tx *sql.Tx, fileSeqs []int64, d *lake.Deleted) error {
	list, _ := json.Marshal(fileSeqs)
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT version_seq) FROM version_item
		WHERE file_seq IN (SELECT value FROM json_each(?))`, string(list)).Scan(&n); err != nil {
		return err
	}
	d.Kept.Versions += n
	_, err := tx.ExecContext(ctx, `UPDATE version_item SET file_seq = NULL
		WHERE file_seq IN (SELECT value FROM json_each(?))`, string(list))
	return err
}

// DeleteVersion deletes a version and releases its frames (see the package
// comment): the answer counts the version, its frames, and the blobs removed
// from disk or kept because a lake file or another version names them.
func (s *Service) DeleteVersion(ctx context.Context, versionID string) (lake.Deleted, error) {
	return s.deleteVersions(ctx, "datasetVersionId", "dataset version", `v.id = ?`, versionID, false)
}

// DeleteDataset deletes a dataset with every version it has, built or not.
func (s *Service) DeleteDataset(ctx context.Context, groupID string) (lake.Deleted, error) {
	return s.deleteVersions(ctx, "datasetGroupId", "dataset", `g.id = ?`, groupID, true)
}

// deleteVersions deletes the versions where selects (over dataset_version v
// joined to its dataset_group g) and, with group, their dataset.
func (s *Service) deleteVersions(ctx context.Context, field, what, where, id string, group bool) (lake.Deleted, error) {
	var d lake.Deleted
	// Builds are cancelled before the delete so their jobs end as cancelled
	// rather than failing on a missing version. A batch they still commit
	// before the delete is deleted with the rest; one after it fails on the
	// foreign key, and the lake removes the blobs that batch placed.
	jobs, err := s.buildingJobs(ctx, where, id)
	if err != nil {
		return d, err
	}
	for _, j := range jobs {
		if _, err := s.jobs.Cancel(ctx, j); err == nil {
			d.CancelledJobs = append(d.CancelledJobs, j)
		} else if !errs.Is(err, errs.FailedPrecondition) && !errs.Is(err, errs.NotFound) {
			return d, fmt.Errorf("delete %s %s: cancel build %s: %w", what, id, j, err)
		}
	}
	var blobs []lake.BlobRef
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var groupSeq int64
		err := tx.QueryRowContext(ctx, `SELECT g.seq FROM dataset_group g
			LEFT JOIN dataset_version v ON v.group_seq = g.seq WHERE `+where+` LIMIT 1`, id).Scan(&groupSeq)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.New(errs.NotFound, field, "%s %q not found", what, id)
		}
		if err != nil {
			return err
		}
		sel := `SELECT v.seq FROM dataset_version v JOIN dataset_group g ON g.seq = v.group_seq WHERE ` + where
		if blobs, err = versionBlobs(ctx, tx, sel, id); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*), (SELECT count(*) FROM version_item
			WHERE version_seq IN (`+sel+`)) FROM (`+sel+`)`, id, id).Scan(&d.Removed.Versions, &d.Removed.Frames); err != nil {
			return err
		}
		if group {
			d.Removed.Datasets = 1
			_, err = tx.ExecContext(ctx, `DELETE FROM dataset_group WHERE seq = ?`, groupSeq)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM dataset_version WHERE seq IN (`+sel+`)`, id)
		}
		return err
	})
	if err != nil {
		return lake.Deleted{}, fmt.Errorf("delete %s %s: %w", what, id, err)
	}
	s.lake.ReleaseBlobs(ctx, blobs, &d)
	return d, nil
}

// buildingJobs are the jobs of the selected versions' builds still queued or
// running.
func (s *Service) buildingJobs(ctx context.Context, where, id string) ([]string, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT v.status, v.job_id FROM dataset_version v
		JOIN dataset_group g ON g.seq = v.group_seq WHERE `+where, id)
	if err != nil {
		return nil, err
	}
	type pair struct{ status, job string }
	var vs []pair
	for rows.Next() {
		var p pair
		if err := rows.Scan(&p.status, &p.job); err != nil {
			rows.Close()
			return nil, err
		}
		vs = append(vs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range vs {
		st, _, err := s.status(ctx, p.status, p.job)
		if err != nil {
			return nil, err
		}
		if st == StatusBuilding {
			out = append(out, p.job)
		}
	}
	return out, nil
}

// versionBlobs are the blobs the frames of the versions sel selects name.
func versionBlobs(ctx context.Context, tx *sql.Tx, sel, id string) ([]lake.BlobRef, error) {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT blob, ext FROM version_item WHERE version_seq IN (`+sel+`)`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []lake.BlobRef
	for rows.Next() {
		var b lake.BlobRef
		if err := rows.Scan(&b.Hash, &b.Ext); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
