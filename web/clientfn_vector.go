package web

import (
	"errors"
	"fmt"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// The embedding client functions of docs/spec/interface.md 4.2, and find_similar.
func (s *server) vectorFunctions() {
	s.function("insert_image_embeddings_batch", auth.Write, s.insertEmbeddingsBatch)
	s.function("insert_image_embeddings", auth.Write, s.insertEmbeddings)
	s.function("get_embedding_vector", auth.Read, s.getEmbeddings)
	s.function("find_similar", auth.Read, s.findSimilar)
}

// embeddingRecord is docs/spec/interface.md 2.7's record: JSON numbers, checked and
// narrowed to float32 before anything is written.
type embeddingRecord struct {
	UniqueName string    `json:"uniqueName"`
	Embeddings []float64 `json:"embeddings"`
}

type insertParams struct {
	EmbeddingList   []embeddingRecord `json:"embedding_list" validate:"required"`
	ModelName       string            `json:"model_name" validate:"required"`
	VectorDimension []int             `json:"vector_dimension" validate:"required"`
	SessionID       string            `json:"session_id"`
}

// records checks the parameters and converts them for the vector store.
func (p insertParams) records() (int, []vector.Record, error) {
	if len(p.VectorDimension) != 1 || p.VectorDimension[0] < 1 {
		return 0, nil, errs.Invalid("vector_dimension", "vector_dimension must be a list of one positive integer, e.g. [512], got %v", p.VectorDimension)
	}
	recs := make([]vector.Record, len(p.EmbeddingList))
	for i, r := range p.EmbeddingList {
		v, err := vector.Float32s(fmt.Sprintf("embedding_list[%d].embeddings", i), r.Embeddings)
		if err != nil {
			return 0, nil, err
		}
		recs[i] = vector.Record{UniqueName: r.UniqueName, Vector: v}
	}
	return p.VectorDimension[0], recs, nil
}

func (s *server) insertEmbeddingsBatch(c *echo.Context) error {
	var p insertParams
	if err := s.params(c, &p); err != nil {
		return err
	}
	if err := vector.CheckBatch(len(p.EmbeddingList)); err != nil {
		return err
	}
	dim, recs, err := p.records()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	model, err := s.Analysis.EmbeddingName(ctx, p.ModelName)
	if err != nil {
		return err
	}
	if p.SessionID == "" {
		n, err := s.Vectors.Insert(ctx, model, dim, recs)
		if err != nil {
			return err
		}
		return ok(c, map[string]any{"success": true, "upsertCount": n})
	}
	n, jobID, err := s.Vectors.InsertSession(ctx, model, dim, recs, p.SessionID)
	if err != nil {
		return err
	}
	return ok(c, map[string]any{"success": true, "upsertCount": n, "jobId": jobID})
}

func (s *server) insertEmbeddings(c *echo.Context) error {
	var p struct {
		EmbeddingList   []embeddingRecord `json:"embedding_list" validate:"required"`
		ModelName       string            `json:"model_name" validate:"required"`
		VectorDimension []int             `json:"vector_dimension" validate:"required"`
	}
	if err := s.params(c, &p); err != nil {
		var e *errs.Error
		if errors.As(err, &e) && e.Code == errs.TooLarge {
			// Over the body limit, a list can only get through in parts.
			return errs.New(errs.TooLarge, "embedding_list", "%s: send embedding_list in several requests "+
				"of fewer vectors (the Go and Python clients' insert_image_embeddings do)", e.Message)
		}
		return err
	}
	dim, recs, err := insertParams{EmbeddingList: p.EmbeddingList, VectorDimension: p.VectorDimension}.records()
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	model, err := s.Analysis.EmbeddingName(ctx, p.ModelName)
	if err != nil {
		return err
	}
	n, err := s.Vectors.InsertMany(ctx, model, dim, recs)
	if err != nil {
		return err
	}
	return ok(c, map[string]any{"success": true, "upsertCount": n})
}

func (s *server) getEmbeddings(c *echo.Context) error {
	var p struct {
		UniqueNames []string `json:"unique_names" validate:"required"`
		ModelName   string   `json:"model_name" validate:"required"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	ctx := c.Request().Context()
	model, err := s.Analysis.EmbeddingName(ctx, p.ModelName)
	if err != nil {
		return err
	}
	found, missing, err := s.Vectors.Get(ctx, model, p.UniqueNames)
	if err != nil {
		return err
	}
	type rec struct {
		UniqueName string    `json:"uniqueName"`
		Embeddings []float32 `json:"embeddings"`
	}
	out := make([]rec, len(found))
	for i, r := range found {
		out[i] = rec{r.UniqueName, r.Vector}
	}
	return ok(c, map[string]any{"embeddings": out, "missing": nonNil(missing)})
}

// findSimilar returns the k nearest files to a file's vector or to a given
// vector, among the files the lake's query and filter select. Without
// model_name it searches the default embedding model's vectors, as the
// embedding functions write them without one.
func (s *server) findSimilar(c *echo.Context) error {
	var p struct {
		ModelName  string       `json:"model_name"`
		UniqueName string       `json:"unique_name"`
		Vector     []float64    `json:"vector"`
		K          int          `json:"k"`
		ItemType   string       `json:"item_type"`
		Query      string       `json:"query"`
		Filter     *lake.Filter `json:"filter"`
	}
	if err := s.params(c, &p); err != nil {
		return err
	}
	if (p.UniqueName == "") == (p.Vector == nil) {
		return errs.Invalid("unique_name", "give exactly one of unique_name and vector")
	}
	ctx := c.Request().Context()
	model, err := s.Analysis.EmbeddingName(ctx, p.ModelName)
	if err != nil {
		return err
	}
	q := vector.SearchQuery{Model: model, UniqueName: p.UniqueName, K: p.K}
	if q.K == 0 {
		q.K = 10
	}
	if p.Vector != nil {
		v, err := vector.Float32s("vector", p.Vector)
		if err != nil {
			return err
		}
		q.Vector = v
	}
	if p.Query != "" || p.Filter != nil || p.ItemType != "" {
		where, args, err := s.Lake.SelectionSQL(ctx, lake.Selection{ItemType: p.ItemType, Query: p.Query, Filter: p.Filter})
		if err != nil {
			return err
		}
		q.Filter = &vector.Filter{Where: where, Args: args}
	}
	hits, err := s.Vectors.Search(ctx, q)
	if err != nil {
		return err
	}
	type hit struct {
		UniqueName string  `json:"uniqueName"`
		Distance   float64 `json:"distance"`
	}
	out := make([]hit, len(hits))
	for i, h := range hits {
		out[i] = hit{h.UniqueName, h.Distance}
	}
	return ok(c, map[string]any{"results": out})
}
