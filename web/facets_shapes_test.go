package web_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestFacetsCountShapes: /lake/facets counts the selection's annotations by
// shape type, with the files that have each and the clause that selects
// them, for the whole lake and for a query; /lake/facets/annotation.type
// lists the types that files have.
func TestFacetsCountShapes(t *testing.T) {
	s := startLakeServer(t) // f0: a human dog box; f1: a human cat box and a machine dog box
	type value struct {
		Value       string
		Count       int
		Annotations *int
		Clause      string
	}
	shapes := func(q string) string {
		t.Helper()
		code, body := s.get(t, "/api/v1/lake/facets", url.Values{"query": {q}})
		var facets map[string][]value
		if code != 200 || json.Unmarshal([]byte(body), &facets) != nil {
			t.Fatalf("facets %q: %d %s", q, code, body)
		}
		var b strings.Builder
		for _, v := range facets["annotation.type"] {
			if v.Annotations == nil || v.Clause != "annotation.type = "+v.Value {
				t.Errorf("facets %q: %+v", q, v)
				continue
			}
			fmt.Fprintf(&b, "%s:%d/%d ", v.Value, v.Count, *v.Annotations)
		}
		return b.String()
	}
	for _, c := range []struct{ q, want string }{
		{"", "box:2/3 polygon:0/0 mask:0/0 keypoints:0/0 polyline:0/0 class:0/0 "},
		{"name = f1.jpg", "box:1/2 polygon:0/0 mask:0/0 keypoints:0/0 polyline:0/0 class:0/0 "},
		{"annotation.type = polygon", "box:0/0 polygon:0/0 mask:0/0 keypoints:0/0 polyline:0/0 class:0/0 "},
	} {
		if got := shapes(c.q); got != c.want {
			t.Errorf("facets %q: %s, want %s", c.q, got, c.want)
		}
	}
	code, body := s.get(t, "/api/v1/lake/facets/annotation.type", nil)
	var set struct{ Values []value }
	if code != 200 || json.Unmarshal([]byte(body), &set) != nil || len(set.Values) != 1 ||
		set.Values[0] != (value{Value: "box", Count: 2, Clause: "annotation.type = box"}) {
		t.Errorf("facets/annotation.type: %d %s", code, body)
	}
	// An attribute name travels as a bound path; one with " is a 400 naming it.
	code, body = s.get(t, "/api/v1/lake/facets", url.Values{"query": {`annotation.attributes."a\"b" = 1`}})
	if code != 400 || !strings.Contains(body, "may not contain a double quote") {
		t.Errorf("hostile attribute name: %d %s", code, body)
	}
	code, body = s.get(t, "/api/v1/lake/facets", url.Values{"query": {`annotation.attributes."') OR 1=1 --" = x`}})
	if code != 200 || shapes(`annotation.attributes."') OR 1=1 --" = x`) != "box:0/0 polygon:0/0 mask:0/0 keypoints:0/0 polyline:0/0 class:0/0 " {
		t.Errorf("injected attribute name: %d %s", code, body)
	}
}
