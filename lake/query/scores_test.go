package query

import (
	"slices"
	"strings"
	"testing"
)

// TestScoreFields runs the per-file figures of lake migration 003 against a
// real database: files 1 and 2 have quality scores, 1 and 2 share a duplicate
// group, 1 has disagreements, evaluation "yolo-v1" covers 1 and 3.
func TestScoreFields(t *testing.T) {
	db := lakeDB(t)
	for _, s := range []string{
		`INSERT INTO file_quality (file_seq, sharpness, brightness, contrast, entropy, aspect, phash) VALUES
			(1, 12.5, 0.1, 0.2, 6.5, 1.333, -5), (2, 250, 0.6, 0.3, 7.2, 1.778, 42)`,
		`INSERT INTO file_duplicate (file_seq, group_id, member_count) VALUES (1, 'g1', 2), (2, 'g1', 2)`,
		`INSERT INTO file_disagreement (file_seq, run_id, count) VALUES (1, 'r1', 3), (2, 'r1', 0)`,
		`INSERT INTO file_uniqueness (file_seq, model_name, score) VALUES (1, 'm', 0.9), (3, 'm', 0.1)`,
		`INSERT INTO file_eval (eval_key, file_seq, tp, fp, fn) VALUES
			('yolo-v1', 1, 2, 1, 0), ('yolo-v1', 3, 0, 0, 2), ('other', 2, 0, 5, 5)`,
	} {
		if _, err := db.W.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	cases := []struct {
		q    string
		want []int
	}{
		{`quality.sharpness < 40 AND quality.brightness < 0.2`, []int{1}},
		{`quality.sharpness >= 40`, []int{2}},
		{`NOT quality.sharpness >= 40`, []int{1, 3, 4}}, // no scores: a missing value
		{`quality.entropy > 7 OR quality.aspect < 1.5`, []int{1, 2}},
		{`QUALITY.Contrast = 0.3`, []int{2}},
		{`duplicates.group = g1`, []int{1, 2}},
		{`duplicates.count > 1`, []int{1, 2}},
		{`duplicates.count = 1`, []int{3, 4}}, // no group: a group of its own
		{`disagreement.count > 0`, []int{1}},
		{`disagreement.count = 0`, []int{2, 3, 4}},
		{`uniqueness >= 0.5`, []int{1}},
		{`uniqueness < 0.5 OR uniqueness > 0.5`, []int{1, 3}},
		{`eval.yolo-v1.fp > 0`, []int{1}},
		{`eval.yolo-v1.fn > 0`, []int{3}},
		{`eval.yolo-v1.TP >= 0`, []int{1, 3}},
		{`eval.yolo-v1.tp != 2`, []int{2, 3, 4}},
		{`eval.other.fp = 5 AND eval.yolo-v1.fp = 1`, nil},
	}
	for _, tt := range cases {
		for _, shape := range []Shape{Page, Count} {
			got := run(t, db, tt.q, Options{Target: Files, Alias: "f", Shape: shape})
			if !slices.Equal(got, tt.want) {
				t.Errorf("%q shape %d: got %v, want %v", tt.q, shape, got, tt.want)
			}
		}
		e, err := Parse(tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := Parse(e.String()); err != nil || again.String() != e.String() {
			t.Errorf("%q prints as %q, which reads back as %v, %v", tt.q, e.String(), again, err)
		}
	}
}

func TestScoreFieldErrors(t *testing.T) {
	cases := []struct {
		q      string
		target Target
		want   string
	}{
		{`eval.k = 1`, Files, `write eval.<key>.tp, eval.<key>.fp or eval.<key>.fn, not "eval.k"`},
		{`eval.k.precision > 1`, Files, `unknown evaluation count "precision"`},
		{`eval..fp > 1`, Files, `evaluation key "" is not 1 to 64`},
		{`eval.a/b.fp > 1`, Files, `evaluation key "a/b"`},
		{`eval.k.fp > 1`, Collections, `field eval.k.fp does not apply to collections`},
		{`quality.sharpness > 1`, Collections, `field quality.sharpness does not apply to collections`},
		{`quality.blur > 1`, Files, `unknown field "quality.blur"`},
		{`duplicates.group > 1`, Files, ``},
	}
	for _, tt := range cases {
		e, err := Parse(tt.q)
		if err == nil {
			_, _, err = CompileWith(e, Options{Target: tt.target})
		}
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.q, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: got %v, want an error with %q", tt.q, err, tt.want)
		}
	}
	for _, k := range []string{"a", "yolo-v8_x", strings.Repeat("k", MaxEvalKey)} {
		if !ValidEvalKey(k) {
			t.Errorf("ValidEvalKey(%q) = false", k)
		}
	}
	for _, k := range []string{"", "a.b", "a b", strings.Repeat("k", MaxEvalKey+1), "é"} {
		if ValidEvalKey(k) {
			t.Errorf("ValidEvalKey(%q) = true", k)
		}
	}
}
