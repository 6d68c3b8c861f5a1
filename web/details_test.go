package web_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFileDetailsTakeQueryFieldNames: fields_filter takes the query
// language's dotted names and answers the file's values, never a null for
// a value the file has; a misspelt dotted name is a 400 that names it
// (issue 31 item 8).
func TestFileDetailsTakeQueryFieldNames(t *testing.T) {
	s := startLakeServer(t)
	details := func(name string, fields map[string]bool) (int, map[string]any, string) {
		code, body := s.call(t, "get_file_details", map[string]any{"unique_name": name, "fields_filter": fields})
		var out map[string]any
		json.Unmarshal([]byte(body), &out)
		return code, out, body
	}
	code, d, body := details(s.files[1].UniqueName, map[string]bool{"quality": true, "quality.sharpness": true,
		"quality.aspect": true, "eval.ev.fp": true, "eval.ev.tp": true, "duplicates.count": true, "duplicates.group": true,
		"disagreement.count": true, "annotation.count": true, "annotation.label": true, "metadata.camera": true, "camera": true})
	if code != 200 {
		t.Fatalf("details: %d %s", code, body)
	}
	q, _ := d["quality"].(map[string]any)
	if q == nil || d["quality.sharpness"] == nil || d["quality.sharpness"] != q["sharpness"] || d["quality.aspect"] != q["aspect"] {
		t.Errorf("quality.sharpness %v, quality.aspect %v; the file's quality is %v", d["quality.sharpness"], d["quality.aspect"], q)
	}
	want := map[string]any{"eval.ev.fp": 1.0, "eval.ev.tp": 0.0, "duplicates.count": 1.0, "duplicates.group": nil,
		"disagreement.count": 2.0, "annotation.count": 2.0, "metadata.camera": "canon", "camera": "canon"}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s: %v, want %v", k, d[k], v)
		}
	}
	if labels, _ := json.Marshal(d["annotation.label"]); string(labels) != `["cat","dog"]` {
		t.Errorf("annotation.label: %s", labels)
	}
	_, d, body = details(s.files[3].UniqueName, map[string]bool{"eval.ev.fp": true, "duplicates.group": true, "duplicates.count": true})
	if v, ok := d["eval.ev.fp"]; !ok || v != nil || d["duplicates.group"] != "g1" || d["duplicates.count"] != 2.0 {
		t.Errorf("a file the evaluation did not cover, in a duplicate group: %s", body)
	}
	for _, bad := range []string{"quality.sharpnes", "eval.ev.precision", "annotation.colour", "duplicates.size", "metadata."} {
		code, _, body := details(s.files[0].UniqueName, map[string]bool{bad: true})
		if code != 400 || !strings.Contains(body, bad) || !strings.Contains(body, `"field":"fields_filter"`) {
			t.Errorf("fields_filter %s: %d %s, want a 400 naming it", bad, code, body)
		}
	}
}

// TestAnswersCarryNoFloatNoise: a coordinate stored with arithmetic noise
// (a row written before rounding) is answered rounded to 1e-6 px by the
// item view's route and the lake's listing (issue 31 item 9).
func TestAnswersCarryNoFloatNoise(t *testing.T) {
	s := startLakeServer(t)
	if _, err := s.a.Lake.DB().W.Exec(`UPDATE annotation SET x = 223.00000000000006, w = 0.1 + 0.2`); err != nil {
		t.Fatal(err)
	}
	_, one := s.get(t, "/api/v1/lake/files/"+s.files[0].UniqueName, nil)
	_, page := s.get(t, "/api/v1/lake/items", nil)
	for what, body := range map[string]string{"file": one, "items": page} {
		if strings.Contains(body, "0000000") || !strings.Contains(body, `"x":223,`) || !strings.Contains(body, `"width":0.3,`) {
			t.Errorf("%s: %s", what, body)
		}
	}
}
