package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// facetValues are the fields whose values are a fixed list, counted by
// /api/v1/lake/facets, each value with the query clause that selects it.
var facetValues = []struct {
	field  string
	values [][2]string // value, clause
}{
	{"type", [][2]string{{"image", ""}, {"video", ""}, {"other", ""}}},
	{"annotation.source", [][2]string{{"human", "annotation.source = human"}, {"machine", "annotation.source = machine"},
		{"raw", "annotation.count = 0"}}},
}

type facetValue struct {
	Value  string `json:"value"`
	Count  int    `json:"count"`
	Clause string `json:"clause,omitempty"` // what to AND to the query to select it
	// Annotations: for annotation.type, the annotations of the type on the
	// files counted (Count is the files that have one).
	Annotations *int `json:"annotations,omitempty"`
	lake.Estimate
}

// lakeFacets counts the files of a selection by type, by annotation source
// (raw: no box) and by shape type (files and annotations), so a page can show
// counts beside the values that narrow the query. Types are counted for the
// query alone, exactly; sources and shapes within itemType, in one pass over
// the selection each (estimated from a sample of a large one, see
// lake.ClauseCounts and lake.ShapeCounts).
func (s *server) lakeFacets(c *echo.Context) error {
	q := c.Request().URL.Query()
	query, itemType := q.Get("query"), q.Get("itemType")
	if itemType == "" {
		itemType = "image"
	}
	if lake.IsCollectionType(itemType) {
		return errs.Invalid("itemType", "itemType must be a file type (image, video, other), got %q", itemType)
	}
	ctx := c.Request().Context()
	out := map[string][]facetValue{}
	for _, f := range facetValues {
		if f.field == "type" {
			for _, v := range f.values {
				n, err := s.typeCount(ctx, v[0], query)
				if err != nil {
					return err
				}
				out[f.field] = append(out[f.field], facetValue{Value: v[0], Count: n})
			}
			continue
		}
		var clauses []string
		for _, v := range f.values {
			clauses = append(clauses, v[1])
		}
		ns, est, err := s.Lake.ClauseCounts(ctx, lake.Selection{ItemType: itemType, Query: query}, clauses)
		if err != nil {
			return err
		}
		for i, v := range f.values {
			out[f.field] = append(out[f.field], facetValue{Value: v[0], Count: ns[i], Clause: v[1], Estimate: est})
		}
	}
	shapes, est, err := s.Lake.ShapeCounts(ctx, lake.Selection{ItemType: itemType, Query: query})
	if err != nil {
		return err
	}
	for _, sc := range shapes {
		out["annotation.type"] = append(out["annotation.type"], facetValue{Value: sc.Type, Count: sc.Files,
			Clause: lake.ShapeClause(sc.Type), Annotations: &sc.Annotations, Estimate: est})
	}
	return c.JSON(http.StatusOK, out)
}

// typeCount counts the files of type t a query selects, skipping the count
// when the lake has no file of that type.
func (s *server) typeCount(ctx context.Context, t, query string) (int, error) {
	if ok, err := s.Lake.HasType(ctx, lake.FileType(t)); err != nil || !ok {
		return 0, err
	}
	return s.Lake.Count(ctx, lake.Selection{ItemType: t, Query: query})
}
