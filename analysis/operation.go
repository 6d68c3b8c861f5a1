package analysis

import "context"

// HasOperation reports whether operation is a run's id: the operation of the
// tags and boxes it writes. Datasets ask it so that a run that found nothing
// is a known annotation source, not an unknown id.
func (s *Service) HasOperation(ctx context.Context, operation string) (bool, error) {
	var n int
	err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM run WHERE id = ?`, operation).Scan(&n)
	return n > 0, err
}

// RunScope is the collection and query a run was started with: the files
// it covered (evaluate.RunScopes).
func (s *Service) RunScope(ctx context.Context, runID string) (collectionID, query string, err error) {
	r, err := s.Run(ctx, runID)
	return r.Params.CollectionID, r.Params.Query, err
}
