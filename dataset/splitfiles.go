package dataset

import (
	"context"

	"github.com/framelake/framelake/errs"
)

// SplitFiles returns the lake keys of the files in a built version's split
// (train, test or validation; "" for the whole version), in frame order:
// what an evaluation over a version's split reads. Augmented frames and
// files deleted from the lake since the build are left out.
func (s *Service) SplitFiles(ctx context.Context, versionID, split string) ([]int64, error) {
	switch split {
	case "", Train, Test, Validation:
	default:
		return nil, errs.Invalid("split", "split %q is not one of %s, %s, %s", split, Train, Validation, Test)
	}
	vr, _, err := s.built(ctx, versionID, "version_id")
	if err != nil {
		return nil, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT file_seq FROM version_item
		WHERE version_seq = ? AND build = ? AND derived_from IS NULL AND file_seq IS NOT NULL AND (? = '' OR split = ?)
		ORDER BY ord`, vr.seq, vr.current, split, split)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seqs := []int64{}
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}
