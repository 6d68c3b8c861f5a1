package dataset

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/framelake/framelake/lake"
)

// VersionBlobs is the dataset package's lake.BlobNamer: every frame of every
// build, pending ones too, names a blob (augmented frames own theirs).
func VersionBlobs(ctx context.Context, tx *sql.Tx, add func(lake.NamedBlob)) error {
	rows, err := tx.QueryContext(ctx, `SELECT v.id, i.build, i.unique_name, i.blob, i.ext
		FROM version_item i JOIN dataset_version v ON v.seq = i.version_seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var vid, name string
		var build int
		n := lake.NamedBlob{Size: -1}
		if err := rows.Scan(&vid, &build, &name, &n.Hash, &n.Ext); err != nil {
			return err
		}
		n.Owner = fmt.Sprintf("dataset version %s build %d frame %s", vid, build, name)
		add(n)
	}
	return rows.Err()
}

// VersionProblem is a dataset version whose rows disagree with its status.
type VersionProblem struct {
	VersionID string `json:"versionId"`
	Problem   string `json:"problem"`
}

// CheckVersions finds versions half built: ready without a build, ready with
// other than the frames its statistics count, or building under a job that
// completed or is gone. A building version whose job failed or was
// cancelled is not one: it shows as failed and can be retried. It also
// counts frames of builds that are neither current nor pending (a build
// superseded by a crash), which the version's next build clears.
func CheckVersions(ctx context.Context, db *sql.DB) (problems []VersionProblem, stale int, err error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("check versions: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT v.id, v.status, v.current_build,
			coalesce(v.stats ->> '$.totalFrames', 0),
			(SELECT count(*) FROM version_item i WHERE i.version_seq = v.seq AND i.build = v.current_build),
			coalesce((SELECT status FROM job WHERE id = v.job_id), '')
		FROM dataset_version v ORDER BY v.seq`)
	if err != nil {
		return nil, 0, fmt.Errorf("check versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, status, jobStatus string
		var current, want, have int
		if err := rows.Scan(&id, &status, &current, &want, &have, &jobStatus); err != nil {
			return nil, 0, fmt.Errorf("check versions: %w", err)
		}
		add := func(format string, a ...any) {
			problems = append(problems, VersionProblem{id, fmt.Sprintf(format, a...)})
		}
		switch {
		case status == StatusReady && current == 0:
			add("ready but never built")
		case status == StatusReady && want != have:
			add("ready with %d frames, its statistics count %d", have, want)
		case status == StatusBuilding && jobStatus == "":
			add("building, but its build job is gone")
		case status == StatusBuilding && jobStatus == "completed":
			add("building, but its build job completed")
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("check versions: %w", err)
	}
	err = tx.QueryRowContext(ctx, `SELECT count(*) FROM version_item i JOIN dataset_version v ON v.seq = i.version_seq
		WHERE i.build NOT IN (v.current_build, v.pending_build)`).Scan(&stale)
	if err != nil {
		return nil, 0, fmt.Errorf("check versions: %w", err)
	}
	return problems, stale, nil
}
