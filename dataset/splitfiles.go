package dataset

import (
	"context"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
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
	seqs, err := sqlitedb.Int64s(ctx, s.db.R, `SELECT file_seq FROM version_item
		WHERE version_seq = ? AND build = ? AND derived_from IS NULL AND file_seq IS NOT NULL AND (? = '' OR split = ?)
		ORDER BY ord`, vr.seq, vr.current, split, split)
	if seqs == nil && err == nil {
		seqs = []int64{} // not nil: an empty split narrows the evaluation to nothing
	}
	return seqs, err
}
