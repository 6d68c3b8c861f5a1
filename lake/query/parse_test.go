package query

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
)

func TestParseCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`annotation.label=dog`, `annotation.label = dog`},
		{`metadata.Tags=dog`, `Tags = dog`},
		{`METADATA.tags == dog`, `Tags = dog`},
		{`metadata."Tags" = dog`, `metadata."Tags" = dog`},
		{`metadata.camera ~ Canon`, `metadata.camera ~ Canon`},
		{`metadata."camera model" = "EOS R5"`, `metadata."camera model" = "EOS R5"`},
		{`createdat >= "2026-01-01"`, `createdAt >= 2026-01-01`},
		{`createdAt >= '2026-01-01T10:00:00+02:00'`, `createdAt >= 2026-01-01T10:00:00+02:00`},
		{`name = "and"`, `name = "and"`},
		{`name = "say \"hi\""`, `name = "say \"hi\""`},
		{`name = "123"`, `name = "123"`},
		{`width >= 1920 and height>=1080`, `width >= 1920 AND height >= 1080`},
		{`type = image OR type = video AND fileSize > 10MB`, `type = image OR type = video AND fileSize > 10MB`},
		{`(type = image OR type = video) AND fileSize > 10MB`, `(type = image OR type = video) AND fileSize > 10MB`},
		{`((name = a))`, `name = a`},
		{`(name = a AND name = b) AND name = c`, `name = a AND name = b AND name = c`},
		{`name = a OR (name = b OR name = c)`, `name = a OR name = b OR name = c`},
		{`NOT (name = a OR name = b)`, `NOT (name = a OR name = b)`},
		{`not not name = a`, `NOT NOT name = a`},
		{`Tags in (cat, "hot dog",dog)`, `Tags IN (cat, "hot dog", dog)`},
		{`Tags NOT IN (cat)`, `NOT Tags IN (cat)`},
		{`name <> x`, `name != x`},
		{`name !~ x`, `name !~ x`},
		{`annotation.count(dog) >= 2`, `annotation.count(dog) >= 2`},
		{`annotation.COUNT ( "traffic light" ) > 0`, `annotation.count("traffic light") > 0`},
		{`annotation.count > 3`, `annotation.count > 3`},
		{`frameRate > 29.97`, `frameRate > 29.97`},
		{`width > -1e3`, `width > -1e3`},
		{"name = \"two\nlines\"", "name = \"two\nlines\""},
		{`name = 狗`, `name = 狗`},
		{`annotation(label=dog and source = machine)`, `annotation(label = dog AND source = machine)`},
		{`ANNOTATION ( annotation.label = dog OR NOT (frame > 2 AND confidence < 0.5) )`, `annotation(label = dog OR NOT (frame > 2 AND confidence < 0.5))`},
		{`NOT annotation(label = dog) AND annotation.label = cat`, `NOT annotation(label = dog) AND annotation.label = cat`},
	}
	for _, tt := range tests {
		if tt.want == "" {
			continue
		}
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
		again, err := Parse(e.String())
		if err != nil || again.String() != tt.want {
			t.Errorf("round trip of %q: %v, %v", tt.want, again, err)
		}
	}
	if e, err := Parse(" \t\n"); e != nil || err != nil {
		t.Errorf("blank query: %v, %v", e, err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`annotation.label=dog AND colour = red`, `query 1:26: unknown field "colour"; known fields: name, uniqueName,`},
		{`(name = a`, `query 1:10: expected ) to close ( at 1:1, found end of query`},
		{`name = a)`, `query 1:9: unexpected ) with no matching (`},
		{`name = "abc`, `query 1:8: unterminated string (missing closing ")`},
		{`name = 'abc`, `query 1:8: unterminated string (missing closing ')`},
		{`name = "a\nb"`, `query 1:10: invalid escape in string`},
		{`name = a; DROP TABLE file`, `query 1:9: unexpected character ';'`},
		{`name = a -- comment`, `query 1:10: expected AND, OR or end of query, found "--"`},
		{`name = a name = b`, `query 1:10: expected AND, OR or end of query, found "name"`},
		{`name = `, `query 1:8: expected a value, found end of query`},
		{`name = AND`, `query 1:8: expected a value, found the keyword AND (quote it to use it as a value)`},
		{`name dog`, `query 1:6: expected an operator`},
		{`name ! dog`, `query 1:6: unexpected character '!' (did you mean != or !~?)`},
		{`= dog`, `query 1:1: expected a field name, found =`},
		{`"name" = dog`, `query 1:1: expected a field name, found string "name"`},
		{`name = a AND`, `query 1:13: expected a comparison such as annotation.label = dog, found end of query`},
		{`Tags IN cat`, `query 1:9: expected ( after IN, found "cat"`},
		{`Tags IN (cat dog)`, `query 1:14: expected , or ) in the IN list opened at 1:9, found "dog"`},
		{`Tags IN ()`, `query 1:10: expected a value, found )`},
		{`Tags NOT = cat`, `query 1:10: expected IN after NOT, found =`},
		{`metadata. = x`, `query 1:1: missing key after metadata.`},
		{`metadata."a\"b" = x`, `query 1:1: metadata key "a\"b" may not contain a double quote`},
		{"name = a AND\n  colour = red", `query 2:3: unknown field "colour"`},
		{"name = \"é\" AND ü = 1", `query 1:16: unknown field "ü"`},
		{"name = \xff", `query 1:8: query is not valid UTF-8`},
		{"name = a\x00", `query 1:9: unexpected character '\x00'`},
		{`annotation(label = a AND annotation(label = b))`, `query 1:26: annotation(...) cannot nest`},
		{`annotation(name = a)`, `query 1:12: unknown field "name" inside annotation(...); known fields: label, source, confidence, operation, frame`},
		{`annotation = dog`, `query 1:12: expected ( after annotation (or a field such as annotation.label), found =`},
		{`annotation(label = a`, `query 1:21: expected ) to close annotation( at 1:1, found end of query`},
		{`label = a`, `query 1:1: unknown field "label"`},
		{`annotation.count(dog`, `query 1:21: expected ) after the label of annotation.count, found end of query`},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error %q", tt.in, e, tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error\n got %q\nwant %q", tt.in, err, tt.want)
		}
		checkInvalid(t, err)
	}
}

func checkInvalid(t *testing.T, err error) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.InvalidArgument || e.Field != "query" {
		t.Errorf("error %q is not invalid_argument on field query: %#v", err, err)
	}
	if e != nil && e.Message != strings.ToLower(e.Message[:1])+e.Message[1:] {
		t.Errorf("error %q does not start lower case", err)
	}
}

// TestHostile feeds inputs meant to break the parser or reach SQL. Each must
// fail fast with a positioned invalid-argument error.
func TestHostile(t *testing.T) {
	term := `annotation.label = dog AND `
	tests := []struct {
		name, in, want string
	}{
		{"unbalanced open", `((annotation.label = dog)`, "expected ) to close ( at 1:1"},
		{"unbalanced close", `annotation.label = dog))`, "unexpected ) with no matching ("},
		{"stray quote", `annotation.label = "dog`, "unterminated string"},
		{"stray single quote", `annotation.label = dog'`, "unterminated string"},
		{"sql injection", `annotation.label = dog; DROP TABLE file`, "unexpected character ';'"},
		{"quoted injection is only a value", `annotation.label = "dog'; DROP TABLE file; --" AND colour = 1`, "unknown field"},
		{"sql comment", `annotation.label = dog /* x */`, "expected AND, OR"},
		{"10000 nested parens", strings.Repeat("(", 10000) + "name = a" + strings.Repeat(")", 10000), "query 1:65: query nests deeper than 64"},
		{"10000 NOTs", strings.Repeat("NOT ", 10000) + "name = a", "query nests deeper than 64"},
		{"1 MB query", strings.Repeat(term, (1<<20)/len(term)) + "name = a", "query 1:1: query is 1048"},
		{"too many terms", strings.Repeat(term, MaxTerms) + "name = a", "more than 256 comparisons"},
		{"too long IN list", "Tags IN (" + strings.Repeat("a, ", MaxInList) + "b)", "IN list has more than 1000 values"},
		{"too many values", strings.Repeat("Tags IN ("+strings.Repeat("a, ", 999)+"b) OR ", 5) + "name = a", "more than 4096 values"},
		{"invalid utf-8", "annotation.label = \xc3\x28", "not valid UTF-8"},
		{"backslash outside string", `name = a\b`, `unexpected character '\\'`},
		{"unknown field that looks like SQL", `1=1 OR name = a`, "expected a field name, found \"1\""},
		{"subquery attempt", `name = (SELECT 1)`, "expected a value, found ("},
	}
	for _, tt := range tests {
		t0 := time.Now()
		e, err := Parse(tt.in)
		if d := time.Since(t0); d > 100*time.Millisecond {
			t.Errorf("%s: took %v", tt.name, d)
		}
		if err == nil {
			t.Errorf("%s: Parse succeeded: %.80s", tt.name, e)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %.200q does not contain %q", tt.name, err, tt.want)
		}
		checkInvalid(t, err)
	}
}

// TestLimitsAccepted checks the limits are not off by one: a query at every
// limit parses and compiles.
func TestLimitsAccepted(t *testing.T) {
	deep := strings.Repeat("(", MaxDepth) + "name = a" + strings.Repeat(")", MaxDepth)
	terms := strings.Repeat("name = a AND ", MaxTerms-1) + "name = a"
	list := "Tags IN (" + strings.Repeat("a, ", MaxInList-1) + "b)"
	for _, q := range []string{deep, terms, list} {
		e, err := Parse(q)
		if err != nil {
			t.Fatalf("Parse(%.60q...): %v", q, err)
		}
		if _, _, err := Compile(e, Files, "f"); err != nil {
			t.Fatalf("Compile(%.60q...): %v", q, err)
		}
	}
}
