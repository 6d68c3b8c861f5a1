package web_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/query"
)

// clausesOf are queries on field that the fixture's files answer, each
// also negated: a missing value (a file an evaluation did not cover, a file
// without scores) must count as "not selected" everywhere, never break a
// count.
func clausesOf(field string) []string {
	var c string
	switch field {
	case "name", "uniqueName", "annotation.operation":
		c = field + ` ~ "f"`
	case "type":
		c = "type = image"
	case "createdAt", "updatedAt":
		c = field + " >= 2000-01-01"
	case "collection":
		c = "collection = voc"
	case "Tags":
		c = "Tags = t"
	case "annotation.label":
		c = "annotation.label IN (dog, cat)"
	case "annotation.source":
		c = "annotation.source = machine"
	case "annotation.type":
		c = "annotation.type = box"
	case "class":
		c = "class = night"
	case "duplicates.group":
		c = "duplicates.group = g1"
	case "metadata.camera":
		c = "metadata.camera = canon"
	default: // numbers: sizes, scores, counts, eval.<key>.*
		c = field + " > 0"
	}
	return []string{c, "NOT " + c}
}

// sidebarFields are every field the query language knows for files, an
// evaluation's counts, a metadata key and a label's box count.
func sidebarFields() []string {
	return append(query.Fields(query.Files), "eval.ev.tp", "eval.ev.fp", "eval.ev.fn", "metadata.camera",
		"annotation.count(dog)")
}

// TestSidebarRoutesTakeEveryField runs a query on each field through each
// route the grid's sidebar asks (types and sources, label/tag/collection
// counts, every histogram, the count) on a lake with an evaluation that
// covers only some files: each answers 200, and the counts agree with the
// count of the query. eval.<key>.fp > 0 answered 500 (a NULL read as a
// bool) in /lake/facets and /lake/histogram (issue 31 item 1).
func TestSidebarRoutesTakeEveryField(t *testing.T) {
	s := startLakeServer(t)
	var hists []string
	for f := range lake.HistogramFields {
		hists = append(hists, f)
	}
	sort.Strings(hists)
	for _, field := range sidebarFields() {
		for _, q := range clausesOf(field) {
			code, body := s.call(t, "get_item_count_from_lake", map[string]any{"query": q})
			var counts []struct{ Count int }
			if code != 200 || json.Unmarshal([]byte(body), &counts) != nil || len(counts) != 1 {
				t.Errorf("count %q: %d %s", q, code, body)
				continue
			}
			n := counts[0].Count
			qv := url.Values{"query": {q}}
			code, body = s.get(t, "/api/v1/lake/facets", qv)
			var facets map[string][]struct {
				Value string
				Count int
			}
			if code != 200 || json.Unmarshal([]byte(body), &facets) != nil {
				t.Errorf("facets %q: %d %s", q, code, body)
			} else if facets["type"][0].Value != "image" || facets["type"][0].Count != n {
				t.Errorf("facets %q: images %+v, the count says %d", q, facets["type"], n)
			}
			code, body = s.get(t, "/api/v1/lake/items", url.Values{"query": {q}, "pageSize": {"100"}})
			var items struct{ Items []json.RawMessage }
			if code != 200 || json.Unmarshal([]byte(body), &items) != nil || len(items.Items) != n {
				t.Errorf("items %q: %d, %d items, the count says %d: %.300s", q, code, len(items.Items), n, body)
			}
			for _, set := range []string{"annotation.label", "Tags", "collection"} {
				code, body = s.get(t, "/api/v1/lake/facets/"+set, qv)
				var r struct {
					Values []struct {
						Value string
						Count int
					}
				}
				if code != 200 || json.Unmarshal([]byte(body), &r) != nil {
					t.Errorf("facets/%s %q: %d %s", set, q, code, body)
					continue
				}
				for _, v := range r.Values {
					if v.Count < 1 || v.Count > n {
						t.Errorf("facets/%s %q: %s has %d files of the %d selected", set, q, v.Value, v.Count, n)
					}
				}
			}
			for _, h := range hists {
				code, body = s.get(t, "/api/v1/lake/histogram", url.Values{"query": {q}, "field": {h}})
				var r lake.Histogram
				if code != 200 || json.Unmarshal([]byte(body), &r) != nil {
					t.Errorf("histogram %s %q: %d %s", h, q, code, body)
				} else if h == "width" && r.Total != n {
					t.Errorf("histogram width %q: %d widths, the count says %d", q, r.Total, n)
				}
			}
		}
	}
}

// TestCompleteKnowsEveryField: the query bar's completion of field names
// offers each field the query language knows for files, the evaluations'
// counts (eval.<key>.tp|fp|fn of the evaluations the lake holds) and the
// metadata keys.
func TestCompleteKnowsEveryField(t *testing.T) {
	s := startLakeServer(t)
	for _, field := range sidebarFields() {
		prefix := strings.TrimSuffix(field, "(dog)")
		code, body := s.get(t, "/api/v1/lake/complete", url.Values{"prefix": {prefix}, "limit": {"200"}})
		var r struct{ Values []string }
		if code != 200 || json.Unmarshal([]byte(body), &r) != nil {
			t.Errorf("complete %q: %d %s", prefix, code, body)
			continue
		}
		found := false
		for _, v := range r.Values {
			found = found || v == prefix
		}
		if !found {
			t.Errorf("complete %q: %v lacks it", prefix, r.Values)
		}
	}
	for _, vocab := range []string{"annotation.label", "Tags", "collection", "metadata", "metadata.camera"} {
		if code, body := s.get(t, "/api/v1/lake/complete", url.Values{"field": {vocab}}); code != 200 {
			t.Errorf("complete field %s: %d %s", vocab, code, body)
		}
	}
}

// TestSetFacetsSayWhatTheyIgnore: /lake/facets/{field} counts within the
// whole query by default (ignored is empty); with disjunctive=true it leaves
// the query's own terms on the field out, as the sidebar counts, and names
// them, and its counts are those of the query without them: the page and
// the API agree (issue 31 item 4).
func TestSetFacetsSayWhatTheyIgnore(t *testing.T) {
	s := startLakeServer(t)
	type answer struct {
		Values []struct {
			Value string
			Count int
		}
		Ignored      []string
		CountedQuery string
	}
	facet := func(field, q, disjunctive string) answer {
		t.Helper()
		v := url.Values{"query": {q}}
		if disjunctive != "" {
			v.Set("disjunctive", disjunctive)
		}
		code, body := s.get(t, "/api/v1/lake/facets/"+field, v)
		var a answer
		if code != 200 || json.Unmarshal([]byte(body), &a) != nil {
			t.Fatalf("facets/%s %q: %d %s", field, q, code, body)
		}
		return a
	}
	counts := func(a answer) string {
		var b strings.Builder
		for _, v := range a.Values {
			fmt.Fprintf(&b, "%s %d, ", v.Value, v.Count)
		}
		return b.String()
	}
	for _, c := range []struct{ field, q, rest, conj, disj string }{
		// f0 has a dog, f1 a cat and a (machine) dog.
		{"annotation.label", "annotation.label IN (cat)", "", "cat 1, dog 1, ", "dog 2, cat 1, "},
		{"annotation.label", "collection = voc AND annotation.label = cat", "collection = voc", "cat 1, dog 1, ", "dog 2, cat 1, "},
		{"collection", "collection = voc AND annotation.label = cat", "annotation.label = cat", "voc 1, ", "voc 1, "},
		{"collection", "collection != voc", "", "", "voc 4, "},
	} {
		conj := facet(c.field, c.q, "")
		if got := counts(conj); got != c.conj || len(conj.Ignored) != 0 || conj.CountedQuery != c.q {
			t.Errorf("facets/%s %q: %s ignored %v counted %q; want %s and nothing ignored", c.field, c.q, got, conj.Ignored, conj.CountedQuery, c.conj)
		}
		disj := facet(c.field, c.q, "true")
		if got := counts(disj); got != c.disj || len(disj.Ignored) == 0 || disj.CountedQuery != c.rest {
			t.Errorf("facets/%s %q disjunctive: %s ignored %v counted %q; want %s counted %q", c.field, c.q, got, disj.Ignored, disj.CountedQuery, c.disj, c.rest)
		}
		if same := facet(c.field, c.rest, ""); counts(same) != counts(disj) {
			t.Errorf("facets/%s: disjunctive over %q gives %s, the query without its terms %q gives %s", c.field, c.q, counts(disj), c.rest, counts(same))
		}
	}
	if code, body := s.get(t, "/api/v1/lake/facets/collection", url.Values{"disjunctive": {"yes"}}); code != 400 || !strings.Contains(body, "disjunctive") {
		t.Errorf("disjunctive=yes: %d %s", code, body)
	}
}
