package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

// FuzzParse checks that no input panics the parser, that everything it
// accepts compiles for both targets and shapes or fails with a coded error,
// that the placeholders match the arguments, and that the canonical form
// parses back to itself. The corpus lives in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`annotation.label=dog`,
		`metadata.Tags=dog`,
		`annotation.label=dog AND createdAt >= "2026-01-01"`,
		`(Tags IN (cat, dog) OR metadata.camera ~ canon) AND NOT type = video`,
		`annotation.count(dog) >= 2 AND fileSize < 10MB AND width >= 1920`,
		`metadata."camera model" != 'EOS \'R5\'' OR name !~ x`,
		`createdAt <= 2026-01-31T10:00:00.5+02:00 AND updatedAt > 2026-01`,
		`Tags NOT IN (a, "b c") OR NOT NOT frameRate = 29.97`,
		`((name = a)`, `name = "abc`, `name = a; DROP TABLE file`, "name = \xff",
		`annotation(label = dog AND NOT source = human) OR annotation(frame > 2)`,
		`annotation.source = machine AND annotation.confidence > 0.5 OR fileCount > 2`,
		`annotation.attributes.occluded = true AND annotation.attributes."my key" IN (1, x)`,
		`annotation(attributes.truncation >= 0.5 AND NOT attributes.color ~ red)`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			if !errs.Is(err, errs.InvalidArgument) {
				t.Fatalf("Parse(%q): uncoded error %v", src, err)
			}
			return
		}
		if e == nil {
			if strings.TrimSpace(src) != "" {
				t.Fatalf("Parse(%q) = nil for a non-blank query", src)
			}
			return
		}
		canon := e.String()
		again, err := Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) → %q, which does not parse: %v", src, canon, err)
		}
		if again.String() != canon {
			t.Fatalf("Parse(%q) → %q → %q", src, canon, again.String())
		}
		for _, target := range []Target{Files, Collections} {
			for _, shape := range []Shape{Page, Count} {
				sql, args, err := CompileWith(e, Options{Target: target, Alias: "x", Shape: shape})
				var coded *errs.Error
				if err != nil && !errors.As(err, &coded) {
					t.Fatalf("Compile(%q): uncoded error %v", canon, err)
				}
				if err == nil && strings.Count(sql, "?") != len(args) {
					t.Fatalf("Compile(%q) = %q with %d args", canon, sql, len(args))
				}
			}
		}
	})
}

func BenchmarkParseCompile(b *testing.B) {
	const q = `annotation.label=dog AND createdAt >= "2026-01-01" AND (Tags IN (cat, "hot dog") OR metadata.camera ~ canon) AND NOT type = video`
	b.ReportAllocs()
	for b.Loop() {
		e, err := Parse(q)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Compile(e, Files, "f"); err != nil {
			b.Fatal(err)
		}
	}
}
