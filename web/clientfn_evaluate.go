package web

import (
	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/internal/auth"
)

// The evaluation client functions of issues 21 and 24: named evaluations of
// a model run against human boxes, and label disagreements.
func (s *server) evaluateFunctions() {
	s.function("evaluate_detections", auth.Write, s.evaluateDetections)
	s.function("get_evaluation", auth.Read, s.getEvaluation)
	s.function("compare_evaluations", auth.Read, s.compareEvaluations)
	s.function("delete_evaluation", auth.Write, s.deleteEvaluation)
	s.function("list_evaluations", auth.Read, s.listEvaluations)
	s.function("find_label_disagreements", auth.Write, s.findLabelDisagreements)
}

func (s *server) evaluations() (*evaluate.Service, error) {
	if s.Evaluate == nil {
		return nil, errs.New(errs.Unavailable, "", "evaluations are not enabled on this server")
	}
	return s.Evaluate, nil
}

func (s *server) evaluateDetections(c *echo.Context) error {
	svc, err := s.evaluations()
	if err != nil {
		return err
	}
	var p struct {
		PredRunID    string   `json:"pred_run_id" validate:"required"`
		GTOperations []string `json:"gt_operations"`
		Query        string   `json:"query"`
		CollectionID string   `json:"collection_id"`
		VersionID    string   `json:"version_id"`
		Split        string   `json:"split"`
		IoU          float64  `json:"iou"`
		Confidence   float64  `json:"confidence"`
		TieOrder     string   `json:"tie_order"`
		AreaSource   string   `json:"area_source"`
		VOCAP        string   `json:"voc_ap"`
		IoUType      string   `json:"iou_type"`
		// Sigmas: OKS sigmas by label and point name (iou_type keypoints).
		Sigmas map[string]map[string]float64 `json:"sigmas"`
		Key    string                        `json:"key" validate:"required"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	id, err := svc.Start(c.Request().Context(), evaluate.Request{Key: p.Key, PredRunID: p.PredRunID,
		GTOperations: p.GTOperations, Query: p.Query, CollectionID: p.CollectionID,
		VersionID: p.VersionID, Split: p.Split, IoU: p.IoU,
		Confidence: p.Confidence, TieOrder: p.TieOrder, AreaSource: p.AreaSource, VOCAP: p.VOCAP, IoUType: p.IoUType,
		Sigmas: p.Sigmas, CreatedBy: caller(c).Name})
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"jobId": id})
}

// getEvaluation: key; with unique_name, framelake adds "boxes": the outcome
// of each box of that file.
func (s *server) getEvaluation(c *echo.Context) error {
	svc, err := s.evaluations()
	if err != nil {
		return err
	}
	var p struct {
		Key        string `json:"key" validate:"required"`
		UniqueName string `json:"unique_name"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	ctx := c.Request().Context()
	res, err := svc.Get(ctx, p.Key)
	if err != nil || p.UniqueName == "" {
		return okOr(c, res, err)
	}
	boxes, err := svc.Outcomes(ctx, p.Key, p.UniqueName)
	if err != nil {
		return err
	}
	return ok(c, struct {
		evaluate.Result
		Boxes []evaluate.BoxOutcome `json:"boxes"`
	}{res, boxes})
}

func okOr(c *echo.Context, v any, err error) error {
	if err != nil {
		return err
	}
	return ok(c, v)
}

func (s *server) compareEvaluations(c *echo.Context) error {
	svc, err := s.evaluations()
	if err != nil {
		return err
	}
	var p struct {
		KeyA string `json:"key_a" validate:"required"`
		KeyB string `json:"key_b" validate:"required"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	cmp, err := svc.Compare(c.Request().Context(), p.KeyA, p.KeyB)
	return okOr(c, cmp, err)
}

func (s *server) deleteEvaluation(c *echo.Context) error {
	svc, err := s.evaluations()
	if err != nil {
		return err
	}
	var p struct {
		Key string `json:"key" validate:"required"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	if err := svc.Delete(c.Request().Context(), p.Key); err != nil {
		return err
	}
	return ok(c, map[string]bool{"success": true})
}

func (s *server) listEvaluations(c *echo.Context) error {
	svc, err := s.evaluations()
	if err != nil {
		return err
	}
	var p struct{}
	if err := s.params(c, &p); err != nil {
		return err
	}
	list, err := svc.List(c.Request().Context())
	if err != nil {
		return err
	}
	return ok(c, map[string]any{"evaluationCount": len(list), "evaluations": list})
}

// findLabelDisagreements: run_id, query, iou → {"jobId"}; the job's result
// lists the disagreements (evaluate.Disagreements).
func (s *server) findLabelDisagreements(c *echo.Context) error {
	svc, err := s.evaluations()
	if err != nil {
		return err
	}
	var p struct {
		RunID string  `json:"run_id" validate:"required"`
		Query string  `json:"query"`
		IoU   float64 `json:"iou"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	id, err := svc.FindDisagreements(c.Request().Context(), evaluate.DisagreementRequest{RunID: p.RunID, Query: p.Query, IoU: p.IoU})
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"jobId": id})
}
