package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/query"
)

// lakeItemRoutes are what the web app's grid reads of the files a query
// selects: the items, counts by type, source, shape, label, tag and
// collection, histograms and completion lists. items and facets are on api
// (any key), the rest on the rest group (GET needs a read key).
func (s *server) lakeItemRoutes(rest, api *echo.Group) {
	api.GET("/lake/items", s.lakeItems)
	api.GET("/lake/facets", s.lakeFacets)
	rest.GET("/lake/facets/:field", s.lakeSetFacet)
	rest.GET("/lake/histogram", s.lakeHistogram)
	rest.GET("/lake/complete", s.lakeComplete)
}

// fileSelectionParam reads query and itemType (a file type, default image).
func fileSelectionParam(q url.Values) (lake.Selection, error) {
	sel := lake.Selection{Query: q.Get("query"), ItemType: q.Get("itemType")}
	if sel.ItemType == "" {
		sel.ItemType = "image"
	}
	if lake.IsCollectionType(sel.ItemType) {
		return sel, errs.Invalid("itemType", "itemType must be a file type (image, video, other), got %q", sel.ItemType)
	}
	return sel, nil
}

// lakeSetFacet counts the selected files by a set's values (box labels,
// tags, collections), most files first, each with the clause that selects it.
// With disjunctive=true the query's own terms on the field are left out of
// the count, and the answer names them (ignored) and the query counted.
func (s *server) lakeSetFacet(c *echo.Context) error {
	q := c.Request().URL.Query()
	sel, err := fileSelectionParam(q)
	if err != nil {
		return err
	}
	limit, err := intParam(q.Get("limit"), "limit", 20, 1, lake.MaxFacetValues)
	if err != nil {
		return err
	}
	disjunctive, err := boolParam(q.Get("disjunctive"), "disjunctive")
	if err != nil {
		return err
	}
	field := c.Param("field")
	ignored := []string{}
	if disjunctive {
		if sel.Query, ignored, err = withoutField(sel.Query, field); err != nil {
			return err
		}
	}
	r, err := s.Lake.SetCounts(c.Request().Context(), sel, field, limit)
	if err != nil {
		return err
	}
	out := make([]facetValue, len(r.Values))
	for i, v := range r.Values {
		out[i] = facetValue{Value: v.Value, Count: v.Count, Clause: field + " = " + queryString(v.Value)}
	}
	body := map[string]any{"field": field, "values": out, "more": r.More, "ignored": ignored, "countedQuery": sel.Query}
	if r.Estimated {
		body["estimated"], body["sampled"] = true, r.Sampled
	}
	return c.JSON(http.StatusOK, body)
}

// withoutField is query with its top-level terms on field left out (see
// query.Without) and those terms, in the canonical form: the counts of a
// disjunctive facet are of the files the rest selects, so a person sees
// what each further value would add.
func withoutField(q, field string) (string, []string, error) {
	ignored := []string{}
	e, err := query.Parse(q)
	if err != nil {
		return "", nil, err
	}
	rest, left := query.Without(e, field)
	if len(left) == 0 {
		return q, ignored, nil
	}
	for _, x := range left {
		ignored = append(ignored, x.String())
	}
	if rest == nil {
		return "", ignored, nil
	}
	return rest.String(), ignored, nil
}

// queryString writes v as a value of the query language: bare when it reads
// back as v, quoted otherwise.
func queryString(v string) string { return query.Value{Text: v}.String() }

// lakeHistogram is the distribution of a numeric field over the selection.
func (s *server) lakeHistogram(c *echo.Context) error {
	q := c.Request().URL.Query()
	sel, err := fileSelectionParam(q)
	if err != nil {
		return err
	}
	bins, err := intParam(q.Get("bins"), "bins", 24, 1, lake.MaxBins)
	if err != nil {
		return err
	}
	h, err := s.Lake.Histogram(c.Request().Context(), sel, q.Get("field"), bins)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h)
}

// lakeComplete lists the values of a vocabulary that start with prefix, for
// a query bar's completion; field "" lists the query's field names and the
// metadata keys as metadata.<key>.
func (s *server) lakeComplete(c *echo.Context) error {
	q := c.Request().URL.Query()
	limit, err := intParam(q.Get("limit"), "limit", 20, 1, lake.MaxFacetValues)
	if err != nil {
		return err
	}
	field, prefix, ctx := q.Get("field"), q.Get("prefix"), c.Request().Context()
	if field != "" {
		vs, err := s.Lake.Complete(ctx, field, prefix, limit)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"field": field, "values": vs})
	}
	var vs []string
	for _, f := range query.Fields(query.Files) {
		if strings.HasPrefix(strings.ToLower(f), strings.ToLower(prefix)) && len(vs) < limit {
			vs = append(vs, f)
		}
	}
	if vs, err = s.completeEvalFields(ctx, prefix, vs, limit); err != nil {
		return err
	}
	key, isMeta := strings.CutPrefix(prefix, "metadata.")
	if isMeta || strings.HasPrefix("metadata.", prefix) {
		keys, err := s.Lake.Complete(ctx, "metadata", key, limit)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if len(vs) < limit {
				vs = append(vs, query.Field{Name: "metadata", Key: k}.String())
			}
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"field": field, "values": vs})
}

// completeEvalFields adds to vs, up to limit, the fields eval.<key>.tp|fp|fn
// of the evaluations that stored per-file counts, when prefix could start
// one: a person typing "eval." sees the evaluations one may query.
func (s *server) completeEvalFields(ctx context.Context, prefix string, vs []string, limit int) ([]string, error) {
	const p = "eval."
	if len(vs) >= limit || !strings.HasPrefix(strings.ToLower(p), strings.ToLower(prefix)) &&
		!strings.HasPrefix(strings.ToLower(prefix), p) {
		return vs, nil
	}
	rest := prefix[min(len(prefix), len(p)):]
	key, _, _ := strings.Cut(rest, ".")
	keys, err := s.Lake.Complete(ctx, "eval", key, limit)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		for _, stat := range []string{"tp", "fp", "fn"} {
			if f := p + k + "." + stat; len(vs) < limit && strings.HasPrefix(strings.ToLower(f), strings.ToLower(prefix)) {
				vs = append(vs, f)
			}
		}
	}
	return vs, nil
}

func (b selectionBody) selection() (lake.Selection, error) {
	return fileSelectionParam(url.Values{"query": {b.Query}, "itemType": {b.ItemType}})
}

// lakeItems is one page of a lake listing (the selection, paging and sort of
// get_item_list_from_datalake) with each file's thumbnail URL and its boxes of
// frame 0, in one request instead of one get_file_details per cell.
func (s *server) lakeItems(c *echo.Context) error {
	q := c.Request().URL.Query()
	sel := lake.Selection{Query: q.Get("query"), ItemType: q.Get("itemType"), CollectionID: q.Get("collectionId")}
	if lake.IsCollectionType(sel.ItemType) {
		return errs.Invalid("itemType", "itemType must be a file type (image, video, other), got %q", sel.ItemType)
	}
	index, err := queryNumber(q, "pageIndex")
	if err != nil {
		return err
	}
	size, err := queryNumber(q, "pageSize")
	if err != nil {
		return err
	}
	idx, n, err := pageParams(index, size)
	if err != nil {
		return err
	}
	thumb := 256
	if v := q.Get("thumbSize"); v != "" {
		if thumb, err = validThumbSize(v); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	files, err := s.Lake.ListFiles(ctx, sel, idx, n, lake.Sort{Field: q.Get("sortBy"), Order: q.Get("sortOrder")})
	if err != nil {
		return err
	}
	items, err := s.appItems(c, files, thumb, 0)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"items": items})
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
