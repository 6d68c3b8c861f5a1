package web

import (
	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/labelnext"
)

// labelNextFunctions are issue 24's choice of what to label next
// (select_samples) and the stored uniqueness scores (compute_uniqueness).
func (s *server) labelNextFunctions() {
	s.function("select_samples", auth.Write, s.selectSamples)
	s.function("compute_uniqueness", auth.Write, s.computeUniqueness)
}

func (s *server) selectionService() (*labelnext.Service, error) {
	if s.LabelNext == nil {
		return nil, errs.New(errs.Unavailable, "", "sample selection is not available on this server")
	}
	return s.LabelNext, nil
}

func (s *server) selectSamples(c *echo.Context) error {
	var p struct {
		Query     string `json:"query"`
		Budget    int    `json:"budget" validate:"required"`
		Strategy  string `json:"strategy" validate:"required"`
		RunID     string `json:"run_id"`
		ModelName string `json:"model_name"`
		Measure   string `json:"measure"`
		Seed      int64  `json:"seed"`
		Tag       string `json:"tag"`
		// keep_duplicates: true lets the selection choose copies of a chosen file.
		KeepDuplicates bool `json:"keep_duplicates"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	sel, err := s.selectionService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	req := labelnext.Request{Query: p.Query, Budget: p.Budget, Strategy: p.Strategy, RunID: p.RunID,
		Measure: p.Measure, Seed: p.Seed, Tag: p.Tag, KeepDuplicates: p.KeepDuplicates}
	if p.Strategy != labelnext.Uncertainty {
		// Without model_name: the default embedding model's vectors, as find_similar.
		if req.Model, err = s.Analysis.EmbeddingName(ctx, p.ModelName); err != nil {
			return err
		}
	}
	jobID, err := sel.Select(ctx, req)
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"jobId": jobID})
}

func (s *server) computeUniqueness(c *echo.Context) error {
	var p struct {
		ModelName string `json:"model_name"`
		Query     string `json:"query"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	sel, err := s.selectionService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	model, err := s.Analysis.EmbeddingName(ctx, p.ModelName)
	if err != nil {
		return err
	}
	jobID, err := sel.ComputeUniqueness(ctx, labelnext.UniquenessRequest{Model: model, Query: p.Query})
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"jobId": jobID})
}
