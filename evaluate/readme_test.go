package evaluate_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeEvaluationExamples: README's Python example of evaluations is
// what the Python client's test_readme_evaluation runs (cmd/framelake's
// end-to-end test runs it against a server): each statement of the README
// block is in the test, each answer README shows in a comment is what the
// test asserts. The README's example once named an operation its own steps
// never made (404); a README that drifts from the test fails here.
func TestReadmeEvaluationExamples(t *testing.T) {
	readme, err := os.ReadFile("../docs/python.md") // the Python client's page, once README's section
	if err != nil {
		t.Fatal(err)
	}
	py, err := os.ReadFile("../client/python/test_framelake.py")
	if err != nil {
		t.Fatal(err)
	}
	block := between(t, string(readme), `# Evaluations (README "Evaluating a model")`, `client.delete_evaluation("nanodet_py")`)
	test := squash(between(t, string(py), "# README evaluation example begins", "# README evaluation example ends"))
	comment := regexp.MustCompile(`\s+#\s+(.*)$`)
	stmts := 0
	var stmt strings.Builder
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		want := ""
		if m := comment.FindStringSubmatchIndex(line); m != nil {
			want = line[m[2]:m[3]]
			line = line[:m[0]]
		}
		stmt.WriteString(line)
		code := squash(stmt.String())
		if strings.Count(code, "(")+strings.Count(code, "[") > strings.Count(code, ")")+strings.Count(code, "]") {
			continue // the statement goes on on the next line
		}
		stmt.Reset()
		stmts++
		if !strings.Contains(test, code) {
			t.Errorf("README's %q is not in test_readme_evaluation", code)
		}
		if want != "" && !strings.Contains(test, squash(want)) {
			t.Errorf("README shows %s for %q; test_readme_evaluation does not assert it", want, code)
		}
	}
	if stmts < 6 {
		t.Errorf("%d statements found in README's example", stmts)
	}
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	j := strings.Index(s[max(i, 0):], to)
	if i < 0 || j < 0 {
		t.Fatalf("no %q ... %q", from, to)
	}
	return s[i : i+j+len(to)]
}

// squash drops whitespace, so line breaks and alignment do not count.
func squash(s string) string { return strings.Join(strings.Fields(s), "") }
