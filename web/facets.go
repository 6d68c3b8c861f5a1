package web

import (
	"context"

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

// typeCount counts the files of type t a query selects, skipping the count
// when the lake has no file of that type.
func (s *server) typeCount(ctx context.Context, t, query string) (int, error) {
	if ok, err := s.Lake.HasType(ctx, lake.FileType(t)); err != nil || !ok {
		return 0, err
	}
	return s.Lake.Count(ctx, lake.Selection{ItemType: t, Query: query})
}
