package web

import (
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
}

// lakeFacets counts the files of a selection by type and by annotation
// source (raw: no box), so a page can show counts beside the values that
// narrow the query. Types are counted for the query alone, sources within itemType.
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
		for _, v := range f.values {
			sel := lake.Selection{ItemType: itemType, Query: and(query, v[1])}
			if f.field == "type" {
				sel.ItemType = v[0]
			}
			n, err := s.Lake.Count(ctx, sel)
			if err != nil {
				return err
			}
			out[f.field] = append(out[f.field], facetValue{Value: v[0], Count: n, Clause: v[1]})
		}
	}
	return c.JSON(http.StatusOK, out)
}

// and joins two queries. Its parentheses move a parse error's column, so
// pages place errors from the listing and count, which take the query alone.
func and(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return "(" + a + "\n) AND " + b
}
