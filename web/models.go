package web

import (
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

// modelRoutes serve models and their runs (automatic analysis): the client functions of
// docs/spec/interface.md 4.2 (register_model, the auto tagging, auto annotation and
// embedding runs) and the model and run listings. g authenticates but sets
// no role; each route here sets its own.
func (s *server) modelRoutes(g *echo.Group) {
	s.function("register_model", auth.Admin, s.registerModel)
	run := func(app analysis.Application, lakeWide bool) echo.HandlerFunc {
		return func(c *echo.Context) error { return s.startRun(c, app, lakeWide) }
	}
	s.function("auto_tag_collection", auth.Write, run(analysis.AutoTagging, false))
	s.function("generate_auto_tags_to_lake", auth.Write, run(analysis.AutoTagging, true))
	s.function("auto_annotate_collection", auth.Write, run(analysis.AutoAnnotation, false))
	s.function("generate_auto_annotations_to_lake", auth.Write, run(analysis.AutoAnnotation, true))
	s.function("generate_embeddings_for_collection", auth.Write, run(analysis.Embedding, false))
	s.function("generate_embeddings_to_lake", auth.Write, run(analysis.Embedding, true))

	read, admin := requireRole(auth.Read), requireRole(auth.Admin)
	g.GET("/models", s.listModels, read)
	g.GET("/models/:name", s.getModel, read)
	g.PATCH("/models/:name", s.updateModel, admin)
	g.DELETE("/models/:name", s.deleteModel, admin)
	g.GET("/runs", s.listRuns, read)
	g.GET("/runs/:id", s.getRun, read)
}

func (s *server) analysisService() (*analysis.Service, error) {
	if s.Analysis == nil {
		return nil, errs.New(errs.Unavailable, "", "automatic analysis is not enabled on this server")
	}
	return s.Analysis, nil
}

// registerModel: multipart model_name (or model_id), application, package
// (.tar.gz), and framelake's replace=true to install a new package under a
// registered name.
func (s *server) registerModel(c *echo.Context) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	f, err := s.readForm(c, map[string]bool{"model_name": true, "model_id": true, "application": true, "replace": true},
		map[string]bool{"package": true})
	if err != nil {
		return err
	}
	defer f.close()
	name, err := oneOf("model_name", f.values["model_name"], f.values["model_id"])
	if err != nil {
		return err
	}
	switch {
	case name == "":
		return errs.Invalid("model_name", "model_name is required")
	case f.values["application"] == "":
		return errs.Invalid("application", "application is required: auto_tagging, auto_annotation or embedding")
	case len(f.files) != 1:
		return errs.Invalid("package", "send exactly one package file: the model folder as .tar.gz")
	}
	replace, err := boolParam(f.values["replace"], "replace")
	if err != nil {
		return err
	}
	pkg, err := f.files[0].open()
	if err != nil {
		return err
	}
	defer pkg.Close()
	m, err := svc.Register(c.Request().Context(), analysis.RegisterRequest{Name: name,
		Application: f.values["application"], Package: pkg, CreatedBy: caller(c).Name, Replace: replace})
	if err != nil {
		return err
	}
	return ok(c, map[string]any{"success": true, "modelName": m.Name, "application": m.Application})
}

// boolParam reads a form's true/false value; absent is false.
func boolParam(v, field string) (bool, error) {
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, errs.Invalid(field, "%s must be true or false, got %q", field, v)
}

// oneOf merges a parameter and its alias (model_name and model_id).
func oneOf(field, a, b string) (string, error) {
	if a != "" && b != "" && a != b {
		return "", errs.Invalid(field, "model_name %q and model_id %q differ; give one", a, b)
	}
	if a != "" {
		return a, nil
	}
	return b, nil
}

// runParams are the parameters of the six run functions; which ones a
// function takes is checked in startRun.
type runParams struct {
	CollectionID        *string           `json:"collection_id"`
	ContentType         *string           `json:"content_type"`
	ModelName           string            `json:"model_name"`
	ModelID             string            `json:"model_id"`
	InputResolution     []int             `json:"input_resolution"`
	ConfidenceThreshold *float64          `json:"confidence_threshold"`
	Query               string            `json:"query"`
	Filter              *lake.Filter      `json:"filter"`
	InferencePlatform   string            `json:"inference_platform"`
	Prompts             []analysis.Prompt `json:"prompts"`
	VideoFPS            float64           `json:"video_fps"` // framelake's extension: frames sampled per second of video
}

func (s *server) startRun(c *echo.Context, app analysis.Application, lakeWide bool) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	var p runParams
	if err := s.params(c, &p); err != nil {
		return err
	}
	if err := p.check(app, lakeWide); err != nil {
		return err
	}
	name, err := oneOf("model_name", p.ModelName, p.ModelID)
	if err != nil {
		return err
	}
	req := analysis.RunRequest{Application: app, Model: name, InputResolution: p.InputResolution,
		ConfidenceThreshold: p.ConfidenceThreshold, Query: p.Query, Filter: p.Filter, Platform: p.InferencePlatform,
		Prompts: p.Prompts, VideoFPS: p.VideoFPS, CreatedBy: caller(c).Name}
	if lakeWide {
		req.ContentType = *p.ContentType
	} else {
		req.CollectionID = *p.CollectionID
	}
	run, err := svc.Start(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return ok(c, map[string]string{"jobId": run.JobID, "runId": run.ID})
}

// check refuses parameters the function does not have and requires its own.
func (p runParams) check(app analysis.Application, lakeWide bool) error {
	unknown := func(name string) error { return errs.Invalid(name, "unknown field %q", name) }
	switch {
	case lakeWide && p.CollectionID != nil:
		return unknown("collection_id")
	case !lakeWide && p.ContentType != nil:
		return unknown("content_type")
	case lakeWide && (p.ContentType == nil || *p.ContentType == ""):
		return errs.Invalid("content_type", "content_type is required: image or video")
	case !lakeWide && (p.CollectionID == nil || *p.CollectionID == ""):
		return errs.Invalid("collection_id", "collection_id is required")
	case app == analysis.Embedding && p.InputResolution != nil:
		return unknown("input_resolution")
	case app == analysis.Embedding && p.ConfidenceThreshold != nil:
		return unknown("confidence_threshold")
	case app != analysis.AutoAnnotation && p.Prompts != nil:
		return unknown("prompts")
	case app == analysis.AutoAnnotation && len(p.Prompts) == 0:
		return errs.Invalid("prompts", `prompts is required: a list of {"label", "description"}`)
	}
	return nil
}

func (s *server) listModels(c *echo.Context) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	ms, err := svc.Models(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"modelCount": len(ms), "modelList": ms})
}

func (s *server) getModel(c *echo.Context) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	m, err := svc.Model(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m)
}

// updateModel: {"endpoint": "http://gpu-host:8080", "systemDefault": true}, both optional.
func (s *server) updateModel(c *echo.Context) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	var p struct {
		Endpoint      *string `json:"endpoint"`
		SystemDefault *bool   `json:"systemDefault"`
	}
	if err := s.bindJSON(c, &p); err != nil {
		return err
	}
	m, err := svc.UpdateModel(c.Request().Context(), c.Param("name"),
		analysis.ModelUpdate{Endpoint: p.Endpoint, SystemDefault: p.SystemDefault})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m)
}

func (s *server) deleteModel(c *echo.Context) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	if err := svc.DeleteModel(c.Request().Context(), c.Param("name")); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]bool{"success": true})
}

// listRuns: ?modelName=&pageIndex=&pageSize=, newest first.
func (s *server) listRuns(c *echo.Context) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	q := c.Request().URL.Query()
	opt := analysis.RunListOptions{Model: q.Get("modelName")}
	if opt.PageIndex, err = intParam(q.Get("pageIndex"), "pageIndex", 0, 0, 1<<31); err != nil {
		return err
	}
	if opt.PageSize, err = intParam(q.Get("pageSize"), "pageSize", 50, 1, 1000); err != nil {
		return err
	}
	runs, total, err := svc.Runs(c.Request().Context(), opt)
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []analysis.Run{}
	}
	return c.JSON(http.StatusOK, map[string]any{"runCount": total, "pageIndex": opt.PageIndex,
		"pageSize": opt.PageSize, "runList": runs})
}

func (s *server) getRun(c *echo.Context) error {
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	r, err := svc.Run(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}
