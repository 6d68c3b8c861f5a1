package query

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestAttributes runs annotation.attributes.<name> on real SQLite: numbers
// compare as numbers, strings as text, true/false with the JSON boolean and
// CVAT's text, missing attributes make a test false; inside annotation(...)
// the same box must hold every test.
func TestAttributes(t *testing.T) {
	db := lakeDB(t)
	ctx := context.Background()
	for _, s := range []string{
		`UPDATE annotation SET attributes = '{"occluded":true,"truncation":0.25,"color":"Red","my key":"x"}' WHERE id = 'a1'`,
		`UPDATE annotation SET attributes = '{"occluded":false,"truncation":1,"color":"blue","n":"10"}' WHERE id = 'a3'`,
		`UPDATE annotation SET attributes = '{"occluded":"true","truncation":"0.9","x\"y":1}' WHERE id = 'a4'`,
		`UPDATE annotation SET attributes = '{"truncation":0.75,"occluded":1}' WHERE id = 'a5'`,
	} {
		if _, err := db.W.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		q    string
		want []int
	}{
		{`annotation.attributes.occluded = true`, []int{1, 2}},   // JSON true on 1, CVAT's text on 2; 3's 1 is a number
		{`annotation.attributes.occluded = "TRUE"`, []int{1, 2}}, // the boolean words in any case and quoting
		{`annotation.attributes.occluded = false`, []int{1}},     // a3
		{`annotation.attributes.occluded != true`, []int{3, 4}},  // no annotation with it
		{`annotation.attributes.occluded = 1`, []int{3}},         // a number only
		{`annotation.attributes.occluded IN (false, 1)`, []int{1, 3}},
		{`annotation.attributes.truncation > 0.5`, []int{1, 3}}, // a3's 1 and a5's 0.75; a4's "0.9" is text
		{`annotation.attributes.truncation <= 0.25`, []int{1}},  // a1
		{`annotation.attributes.truncation = "0.9"`, []int{2}},  // quoted: text
		{`annotation.attributes.truncation >= "0"`, []int{2}},   // text order only against text
		{`annotation.attributes.color ~ RED`, []int{1}},
		{`annotation.attributes.color !~ e`, []int{2, 3, 4}}, // "Red" and "blue" both hold an e
		{`annotation.attributes.color IN (blue, green)`, []int{1}},
		{`annotation.attributes.color < c`, []int{1}}, // "Red" < "c" by code point, "blue" too
		{`annotation.attributes.n > 9`, nil},          // "10" is text
		{`annotation.attributes.Color = red`, nil},    // names are case-sensitive
		{`annotation.attributes."my key" = x`, []int{1}},
		{`annotation.attributes.missing = x`, nil},
		{`annotation.attributes.missing != x`, []int{1, 2, 3, 4}},
		{`annotation(attributes.occluded = true AND source = machine)`, nil},
		{`annotation(label = cat AND attributes.occluded = true)`, []int{2}},
		{`annotation(label = dog AND annotation.attributes.truncation < 0.5)`, []int{1}},
		{`annotation(label = dog AND attributes.truncation != 0.25)`, []int{1, 3}}, // a2 has none: != holds
		{`annotation(label = dog AND NOT attributes.occluded = true)`, []int{1, 3}},
		{`annotation.attributes.occluded = true AND annotation.type = box`, []int{1, 2}},
		{`annotation.attributes.color = "x'); DROP TABLE annotation; --"`, nil},
		{`annotation.attributes."a') OR 1=1 --" = x`, nil},
		{`annotation.attributes."$.occluded" = true`, nil}, // a name, never a path
	}
	for _, tt := range tests {
		for _, shape := range []Shape{Page, Count} {
			got := run(t, db, tt.q, Options{Target: Files, Alias: "f", Shape: shape})
			if !slices.Equal(got, tt.want) {
				t.Errorf("files %q shape %d: got %v, want %v", tt.q, shape, got, tt.want)
			}
		}
	}
	for _, tt := range []struct {
		q    string
		want []int
	}{
		{`annotation.attributes.occluded = true`, []int{1}},
		{`annotation.attributes.truncation > 0.5`, []int{1, 2}},
		{`annotation(attributes.truncation > 0.5 AND label = dog)`, []int{2}},
	} {
		for _, shape := range []Shape{Page, Count} {
			got := run(t, db, tt.q, Options{Target: Collections, Alias: "c", Shape: shape})
			if !slices.Equal(got, tt.want) {
				t.Errorf("collections %q shape %d: got %v, want %v", tt.q, shape, got, tt.want)
			}
		}
	}
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM annotation`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("annotations after the queries: %d, %v", n, err)
	}
}

func TestAttributesParse(t *testing.T) {
	canonical := []struct{ in, want string }{
		{`annotation.attributes.occluded=true`, `annotation.attributes.occluded = true`},
		{`ANNOTATION.Attributes.occluded = TRUE`, `annotation.attributes.occluded = TRUE`},
		{`annotation.attributes."my key" >= 2`, `annotation.attributes."my key" >= 2`},
		{`annotation.attributes."plain" = x`, `annotation.attributes.plain = x`},
		{`annotation.attributes.a.b = x`, `annotation.attributes.a.b = x`},
		{`annotation(attributes.occluded = true and annotation.attributes.color in (red, "dark blue"))`,
			`annotation(attributes.occluded = true AND attributes.color IN (red, "dark blue"))`},
		{`annotation(Attributes."x y" != 1)`, `annotation(attributes."x y" != 1)`},
		{`annotation.type = class AND annotation.label = night`, `annotation.type = class AND annotation.label = night`},
	}
	for _, tt := range canonical {
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	errors := []struct{ in, want string }{
		{`annotation.attributes. = x`, `query 1:1: missing attribute name after annotation.attributes.`},
		{`annotation.attributes = x`, `query 1:1: unknown field "annotation.attributes"`},
		{`annotation.attributes."a\"b" = x`, `query 1:1: attribute name "a\"b" may not contain a double quote`},
		{`annotation.attributes."" = x`, `query 1:1: empty attribute name`},
		{`annotation(attributes. = x)`, `query 1:12: missing attribute name after attributes.`},
		{`attributes.occluded = true`, `query 1:1: unknown field "attributes.occluded"`},
	}
	for _, tt := range errors {
		_, err := Parse(tt.in)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want %s", tt.in, err, tt.want)
		}
	}
	compileErrors := []struct{ in, want string }{
		{`annotation.attributes.occluded > true`, `query 1:1: operator > does not apply to annotation.attributes.occluded = true`},
		{`annotation.attributes.n ~ 5`, `query 1:1: operator ~ does not apply to annotation.attributes.n with the number 5`},
		{`annotation.attributes.n < 1e999`, `query 1:27: annotation.attributes.n: number 1e999 is out of range`},
	}
	for _, tt := range compileErrors {
		e, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		_, _, err = Compile(e, Files, "f")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Compile(%q) = %v, want %s", tt.in, err, tt.want)
		}
	}
}
