package analysis

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake"
)

// Defaults and bounds of run parameters.
const (
	DefaultResolution = 300 // input_resolution (300, 300)
	MaxResolution     = 8192
	DefaultConfidence = 0.5
	MaxVideoFPS       = 60
)

// Start validates a run request, then enqueues its job and records the run
// in one transaction, and returns at once. Every parameter error is found
// here, as a 400 naming the parameter, not later as a failed job.
func (s *Service) Start(ctx context.Context, req RunRequest) (Run, error) {
	p, err := s.params(req)
	if err != nil {
		return Run{}, err
	}
	m, vecName, err := s.resolveModel(ctx, req.Application, req.Model)
	if err != nil {
		return Run{}, err
	}
	if p.InferencePlatform == AWS && or(m.Endpoint, s.opt.Endpoint) == "" {
		return Run{}, errs.Invalid("inference_platform", "inference_platform aws needs an endpoint: set one on model %s (PATCH /api/v1/models/%s) or FRAMELAKE_INFERENCE_ENDPOINT", m.Name, m.Name)
	}
	if req.Application == Embedding && s.vectors == nil {
		return Run{}, errs.New(errs.FailedPrecondition, "", "the vector store is not available; embeddings cannot be stored")
	}
	if _, err := s.lake.Count(ctx, selection(p)); err != nil {
		return Run{}, err // a bad query or filter, or a missing collection
	}
	run := Run{ID: id.New("run"), Model: m.Name, VectorModel: vecName, Application: req.Application,
		Platform: p.InferencePlatform, Params: p, Status: "queued", CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
	params, err := json.Marshal(p)
	if err != nil {
		return Run{}, err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if run.JobID, err = s.jobs.Enqueue(ctx, tx, JobType, map[string]string{"runId": run.ID}); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO run (id, job_id, model_name, vector_name, application, platform, params,
			created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, run.ID, run.JobID, run.Model, run.VectorModel, run.Application,
			run.Platform, string(params), run.CreatedAt.UnixMilli())
		return err
	})
	if err != nil {
		return Run{}, err
	}
	return run, nil
}

// resolveModel finds the model a request names, or its application's system
// default; vecName is the vector model an embedding model's vectors go to,
// its own name, so a user reads them back with the name the run shows.
func (s *Service) resolveModel(ctx context.Context, app Application, name string) (m Model, vecName string, err error) {
	if _, err := ParseApplication(string(app)); err != nil || app == "autotagging" {
		return m, "", errs.Invalid("application", "application %q is not one of %s", app, applicationNames)
	}
	if name == "" || name == DefaultModel {
		m, err = s.systemDefault(ctx, app)
	} else if m, err = s.Model(ctx, name); err == nil && m.Application != app {
		err = errs.Invalid("model_name", "model %s is an %s model; this function needs an %s model", name, m.Application, app)
	}
	if err != nil || app != Embedding {
		return m, "", err
	}
	return m, m.Name, nil
}

// EmbeddingName resolves the model_name of the embedding functions
// (get_embedding_vector, find_similar, insert_image_embeddings*): "" and
// "default" name the default embedding model, and when none is installed
// DefaultName(Embedding), under which the shipped one stores its vectors.
// Other names are the vector store's own.
func (s *Service) EmbeddingName(ctx context.Context, name string) (string, error) {
	if s == nil || (name != "" && name != DefaultModel) {
		return EmbeddingName(name), nil
	}
	m, found, err := s.defaultOf(ctx, Embedding)
	if err != nil || !found {
		return DefaultName(Embedding), err
	}
	return m.Name, nil
}

// EmbeddingName is Service.EmbeddingName on a server without analysis.
func EmbeddingName(name string) string {
	if name == "" || name == DefaultModel {
		return DefaultName(Embedding)
	}
	return name
}

// params checks and completes a request's parameters.
func (s *Service) params(req RunRequest) (RunParams, error) {
	p := RunParams{ModelName: or(req.Model, DefaultModel), CollectionID: req.CollectionID, ContentType: req.ContentType,
		InputResolution: req.InputResolution, ConfidenceThreshold: DefaultConfidence, Query: req.Query,
		Filter: req.Filter, Prompts: req.Prompts, VideoFPS: req.VideoFPS, CreatedBy: req.CreatedBy}
	switch {
	case (req.CollectionID == "") == (req.ContentType == ""):
		return p, errs.Invalid("collection_id", "give either collection_id or content_type")
	case req.ContentType != "" && req.ContentType != "image" && req.ContentType != "video":
		return p, errs.Invalid("content_type", "content_type %q is not image or video", req.ContentType)
	}
	if p.InputResolution == nil {
		p.InputResolution = []int{DefaultResolution, DefaultResolution}
	}
	if r := p.InputResolution; len(r) != 2 || r[0] < 1 || r[1] < 1 || r[0] > MaxResolution || r[1] > MaxResolution {
		return p, errs.Invalid("input_resolution", "input_resolution must be (width, height) in 1..%d, got %v", MaxResolution, r)
	}
	if c := req.ConfidenceThreshold; c != nil {
		if math.IsNaN(*c) || *c < 0 || *c > 1 {
			return p, errs.Invalid("confidence_threshold", "confidence_threshold must be between 0 and 1, got %v", *c)
		}
		p.ConfidenceThreshold = *c
	}
	if p.VideoFPS == 0 {
		p.VideoFPS = s.opt.VideoFPS
	}
	if math.IsNaN(p.VideoFPS) || p.VideoFPS <= 0 || p.VideoFPS > MaxVideoFPS {
		return p, errs.Invalid("video_fps", "video_fps must be above 0 and at most %d, got %v", MaxVideoFPS, p.VideoFPS)
	}
	var err error
	if p.InferencePlatform, err = s.platform(req.Platform); err != nil {
		return p, err
	}
	return p, checkPrompts(req.Application, req.Prompts)
}

// platform resolves inference_platform; use_env reads FRAMELAKE_INFERENCE_PLATFORM.
func (s *Service) platform(v string) (string, error) {
	if v == "" || v == UseEnv {
		env := s.opt.Getenv("FRAMELAKE_INFERENCE_PLATFORM")
		switch strings.ToLower(env) {
		case "", Local:
			return Local, nil
		case AWS:
			return AWS, nil
		}
		return "", errs.Invalid("inference_platform", "inference_platform use_env: FRAMELAKE_INFERENCE_PLATFORM is %q, not local or aws", env)
	}
	if v != Local && v != AWS {
		return "", errs.Invalid("inference_platform", "inference_platform %q is not one of use_env, local, aws", v)
	}
	return v, nil
}

func checkPrompts(app Application, prompts []Prompt) error {
	if app != AutoAnnotation {
		if len(prompts) > 0 {
			return errs.Invalid("prompts", "prompts are for auto_annotation models only")
		}
		return nil
	}
	if len(prompts) == 0 {
		return errs.Invalid("prompts", `prompts must list at least one {"label", "description"}`)
	}
	seen := map[string]bool{}
	for i, p := range prompts {
		l := strings.TrimSpace(p.Label)
		if l == "" {
			return errs.Invalid("prompts", "prompts[%d].label is empty", i)
		}
		if seen[l] {
			return errs.Invalid("prompts", "prompts[%d].label %q appears twice", i, l)
		}
		seen[l] = true
	}
	return nil
}

// selection is the lake selection of a run's files.
func selection(p RunParams) lake.Selection {
	if p.CollectionID != "" {
		return lake.Selection{CollectionID: p.CollectionID, Query: p.Query, Filter: p.Filter}
	}
	return lake.Selection{ItemType: p.ContentType, Query: p.Query, Filter: p.Filter}
}

// RunListOptions select a page of runs, newest first.
type RunListOptions struct {
	Model     string // only runs of this model; "default": of the system default models
	PageIndex int
	PageSize  int // default 50, at most 1000
}

const runColumns = `id, job_id, model_name, vector_name, application, platform, params, items, frames, tags, boxes,
	embeddings, skipped, unsupported, created_at, finished_at`

func (s *Service) scanRun(ctx context.Context, sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var params, unsupported string
	var created int64
	var finished sql.NullInt64
	c := &r.Counts
	if err := sc.Scan(&r.ID, &r.JobID, &r.Model, &r.VectorModel, &r.Application, &r.Platform, &params, &c.Items,
		&c.Frames, &c.Tags, &c.Boxes, &c.Embeddings, &c.Skipped, &unsupported, &created, &finished); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(params), &r.Params); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(unsupported), &r.Unsupported); err != nil {
		return r, err
	}
	r.CreatedAt = time.UnixMilli(created).UTC()
	if finished.Valid {
		t := time.UnixMilli(finished.Int64).UTC()
		r.FinishedAt = &t
	}
	return r, nil
}

// withStatus fills in the status and error of r's job.
func (s *Service) withStatus(ctx context.Context, r Run) (Run, error) {
	j, err := s.jobs.Get(ctx, r.JobID)
	if err != nil {
		return r, err
	}
	r.Status, r.Error = j.Status, j.Error
	return r, nil
}

// Run returns a run by id.
func (s *Service) Run(ctx context.Context, runID string) (Run, error) {
	r, err := s.scanRun(ctx, s.db.R.QueryRowContext(ctx, `SELECT `+runColumns+` FROM run WHERE id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, errs.NotFoundf("run %q not found", runID)
	}
	if err != nil {
		return r, err
	}
	return s.withStatus(ctx, r)
}

// Runs lists runs newest first, with the total count.
func (s *Service) Runs(ctx context.Context, opt RunListOptions) ([]Run, int, error) {
	if opt.PageSize == 0 {
		opt.PageSize = 50
	}
	pi, ps, err := lake.CheckPage(opt.PageIndex, opt.PageSize)
	if err != nil {
		return nil, 0, err
	}
	where, args := "1", []any{}
	switch opt.Model {
	case "":
	case DefaultModel:
		where = "model_name IN (SELECT name FROM model WHERE system_default = 1)"
	default:
		where, args = "model_name = ?", append(args, opt.Model)
	}
	var total int
	if err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM run WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+runColumns+` FROM run WHERE `+where+
		` ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`, append(args, ps, pi*ps)...)
	if err != nil {
		return nil, 0, err
	}
	var out []Run
	for rows.Next() {
		r, err := s.scanRun(ctx, rows)
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	for i := range out {
		if out[i], err = s.withStatus(ctx, out[i]); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}
