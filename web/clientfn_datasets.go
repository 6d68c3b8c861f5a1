package web

import (
	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/internal/auth"
)

// datasetDiffFunctions is issue 21's version diff.
func (s *server) datasetDiffFunctions() {
	s.function("diff_dataset_versions", auth.Read, s.diffDatasetVersions)
}

func (s *server) diffDatasetVersions(c *echo.Context) error {
	var p struct {
		FromVersionID string `json:"from_version_id" validate:"required"`
		ToVersionID   string `json:"to_version_id" validate:"required"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	d, err := s.Datasets.Diff(c.Request().Context(), p.FromVersionID, p.ToVersionID)
	if err != nil {
		return err
	}
	return ok(c, d)
}
