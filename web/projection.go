package web

import (
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/vector"
)

// projectionRoutes serve the embedding map: a model's vectors placed in 2D on
// the server (vector/projection.go), and the models that have vectors.
func (s *server) projectionRoutes(g *echo.Group) {
	read, write := requireRole(auth.Read), requireRole(auth.Write)
	g.GET("/embedding-models", s.embeddingModels, read)
	g.GET("/models/:name/projection", s.projection, read)
	g.POST("/models/:name/projection", s.refitProjection, write)
}

// embeddingModels lists the models that have vectors, with their dimension.
func (s *server) embeddingModels(c *echo.Context) error {
	ms, err := s.Vectors.Models(c.Request().Context())
	if err != nil {
		return err
	}
	type view struct {
		Name      string `json:"modelName"`
		Dim       int    `json:"dimension"`
		Metric    string `json:"metric"`
		CreatedAt any    `json:"createdAt"`
	}
	out := make([]view, len(ms))
	for i, m := range ms {
		out[i] = view{m.Name, m.Dim, m.Metric, m.CreatedAt}
	}
	return c.JSON(http.StatusOK, map[string]any{"modelCount": len(out), "modelList": out})
}

// projectionPoints are a page of points as parallel arrays, the compact form
// for 100,000s of points (x and y rounded to 1e-4 of the map's [-1, 1] box).
type projectionPoints struct {
	Seq        []int64   `json:"seq"`
	UniqueName []string  `json:"uniqueName"`
	X          []float64 `json:"x"`
	Y          []float64 `json:"y"`
	// With colorBy: each point's index into Categories, -1 for none.
	Category []int `json:"category,omitempty"`
}

// projection: ?after=<seq>&limit=<n>&colorBy=label|tag. It starts a
// projection job when the map is behind its vectors and returns the points
// it has meanwhile, with the state.
func (s *server) projection(c *echo.Context) error {
	ctx := c.Request().Context()
	q := c.Request().URL.Query()
	model, err := s.Analysis.EmbeddingName(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	var after int64
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return errs.Invalid("after", "after must be a file seq (a whole number ≥ 0) from a previous page's next, got %q", v)
		}
	}
	limit, err := intParam(q.Get("limit"), "limit", 100000, 1, vector.MaxPointsPage)
	if err != nil {
		return err
	}
	st, err := s.Vectors.RefreshProjection(ctx, model, false)
	if err != nil {
		return err
	}
	pts, err := s.Vectors.ProjectionPoints(ctx, model, after, limit)
	if err != nil {
		return err
	}
	page := projectionPoints{Seq: make([]int64, len(pts)), UniqueName: make([]string, len(pts)),
		X: make([]float64, len(pts)), Y: make([]float64, len(pts))}
	round := func(v float32) float64 { return math.Round(float64(v)*1e4) / 1e4 }
	for i, p := range pts {
		page.Seq[i], page.UniqueName[i], page.X[i], page.Y[i] = p.Seq, p.UniqueName, round(p.X), round(p.Y)
	}
	out := map[string]any{"projection": st}
	if by := q.Get("colorBy"); by != "" {
		cats, err := s.categories(c, by, &page)
		if err != nil {
			return err
		}
		out["colorBy"], out["categories"] = by, cats
	}
	out["points"] = page
	if len(pts) == limit {
		out["next"] = pts[len(pts)-1].Seq
	}
	return c.JSON(http.StatusOK, out)
}

// categories sets each point's category (its main label or tag) and returns
// the category names.
func (s *server) categories(c *echo.Context, by string, page *projectionPoints) ([]string, error) {
	vals, err := s.Lake.MainValues(c.Request().Context(), by, page.Seq)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	names := []string{}
	page.Category = make([]int, len(page.Seq))
	for i, seq := range page.Seq {
		v, ok := vals[seq]
		if !ok {
			page.Category[i] = -1
			continue
		}
		k, seen := index[v]
		if !seen {
			k = len(names)
			index[v] = k
			names = append(names, v)
		}
		page.Category[i] = k
	}
	return names, nil
}

// refitProjection fits the map anew (as a job) even when it is current.
func (s *server) refitProjection(c *echo.Context) error {
	ctx := c.Request().Context()
	model, err := s.Analysis.EmbeddingName(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	st, err := s.Vectors.RefreshProjection(ctx, model, true)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"projection": st})
}
