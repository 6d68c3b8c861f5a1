package annotate

import "context"

// HasOperation reports whether operation is a project's id: the operation
// its boxes carry in the lake. Datasets ask it so that a project with no
// boxes yet is a known annotation source, not an unknown id.
func (s *Service) HasOperation(ctx context.Context, operation string) (bool, error) {
	var n int
	err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM project WHERE id = ?`, operation).Scan(&n)
	return n > 0, err
}
