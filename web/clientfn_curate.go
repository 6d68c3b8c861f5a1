package web

import (
	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
)

// The curation client functions of issue 21: quality scores, near-duplicate
// groups and a dataset version's split leakage.
func (s *server) curateFunctions() {
	s.function("compute_quality", auth.Write, s.computeQuality)
	s.function("find_duplicates", auth.Write, s.findDuplicates)
	s.function("get_dataset_leakage", auth.Read, s.datasetLeakage)
}

func (s *server) curateService() (*curate.Service, error) {
	if s.Curate == nil {
		return nil, errs.New(errs.Unavailable, "", "curation is not enabled on this server")
	}
	return s.Curate, nil
}

func (s *server) computeQuality(c *echo.Context) error {
	var p struct {
		Query string `json:"query"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	svc, err := s.curateService()
	if err != nil {
		return err
	}
	jobID, err := svc.ComputeQuality(c.Request().Context(), curate.QualityRequest{Query: p.Query})
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"jobId": jobID})
}

func (s *server) findDuplicates(c *echo.Context) error {
	var p struct {
		Query                string   `json:"query"`
		Method               string   `json:"method"`
		ModelName            string   `json:"model_name"`
		Threshold            *float64 `json:"threshold"`
		Tag                  bool     `json:"tag_duplicates"`
		RemoveFromCollection string   `json:"remove_from_collection"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	svc, err := s.curateService()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	model := ""
	if p.Method == curate.Embedding {
		if model, err = s.Analysis.EmbeddingName(ctx, p.ModelName); err != nil {
			return err
		}
	}
	jobID, err := svc.FindDuplicates(ctx, curate.DuplicatesRequest{Query: p.Query, Method: p.Method, ModelName: model,
		Threshold: p.Threshold, Tag: p.Tag, RemoveFromCollection: p.RemoveFromCollection})
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"jobId": jobID})
}

func (s *server) datasetLeakage(c *echo.Context) error {
	var p struct {
		VersionID string `json:"version_id" validate:"required"`
		Threshold *int   `json:"threshold"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	t := curate.DefaultHamming
	if p.Threshold != nil {
		t = *p.Threshold
	}
	l, err := s.Datasets.Leakage(c.Request().Context(), p.VersionID, t)
	if err != nil {
		return err
	}
	return ok(c, l)
}
