package web

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v5"
	"go.yaml.in/yaml/v3"
)

var (
	echoParam = regexp.MustCompile(`:[A-Za-z]+`)
	specParam = regexp.MustCompile(`\{[A-Za-z]+\}`)
)

// documented reads openapi.yaml's paths into "METHOD /path" keys, with every
// path parameter written as {} so that :id and {jobId} compare equal.
func documented(t *testing.T) map[string]bool {
	t.Helper()
	ops := map[string]bool{}
	path := ""
	sc := bufio.NewScanner(bytes.NewReader(openAPI))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":"):
			path = specParam.ReplaceAllString(strings.TrimSuffix(strings.TrimSpace(line), ":"), "{}")
		case path != "" && len(line) > 4 && line[:4] == "    " && line[4] != ' ' && strings.HasSuffix(line, ":"):
			ops[strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(line), ":"))+" "+path] = true
		case line != "" && line[0] != ' ':
			path = "" // left the paths section
		}
	}
	if len(ops) == 0 {
		t.Fatal("openapi.yaml: no operations found under paths")
	}
	return ops
}

// TestOpenAPIDocumentsEveryRoute keeps the served spec honest: a route added
// without its entry fails here, and so does an entry whose route is gone.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	e, ok := New(Deps{}, Options{}).(*echo.Echo)
	if !ok {
		t.Fatal("New no longer returns *echo.Echo; update this test")
	}
	ops := documented(t)
	routed := map[string]bool{}
	for _, r := range e.Router().Routes() {
		if r.Method == "HEAD" || r.Method == echo.RouteNotFound {
			continue // HEAD mirrors GET on the media routes; groups add 404 catch-alls
		}
		key := r.Method + " " + echoParam.ReplaceAllString(r.Path, "{}")
		routed[key] = true
		if !ops[key] {
			t.Errorf("route %s %s is not in openapi.yaml", r.Method, r.Path)
		}
	}
	for op := range ops {
		if !routed[op] {
			t.Errorf("openapi.yaml documents %s, which no route serves", op)
		}
	}
}

// TestOpenAPIIsValid loads the served document with a real OpenAPI 3
// validator (kin-openapi: schemas, references, parameters, responses) and
// checks that no mapping repeats a key: YAML decoders keep one of two equal
// keys without a word, so /api/v1/lake/files/{uniqueName} written twice (GET
// in one, DELETE in the other) lost an operation for every tool that read
// it (issue 31 item 10).
func TestOpenAPIIsValid(t *testing.T) {
	if dups := duplicateKeys(t, openAPI); len(dups) > 0 {
		t.Errorf("openapi.yaml repeats keys:\n%s", strings.Join(dups, "\n"))
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openAPI)
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI: %v", err)
	}
}

// TestDuplicateKeysFound: the duplicate check finds a repeated key at any
// depth, and a document without one passes.
func TestDuplicateKeysFound(t *testing.T) {
	bad := []byte("paths:\n  /a:\n    get: {}\n  /b: {}\n  /a:\n    delete: {}\nx: {y: 1, y: 2}\n")
	if dups := duplicateKeys(t, bad); len(dups) != 2 {
		t.Errorf("found %q, want /a under paths and y under x", dups)
	}
	if dups := duplicateKeys(t, []byte("a: {b: 1}\nc: [{b: 1}, {b: 2}]\n")); len(dups) != 0 {
		t.Errorf("found %q in a document without repeats", dups)
	}
}

// duplicateKeys lists every key a YAML mapping of doc repeats, with its line.
func duplicateKeys(t *testing.T, doc []byte) []string {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		t.Fatalf("not YAML: %v", err)
	}
	var out []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n.Kind == yaml.MappingNode {
			seen := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if first, ok := seen[k.Value]; ok {
					out = append(out, fmt.Sprintf("line %d: %s%s (first on line %d)", k.Line, path, k.Value, first))
				} else {
					seen[k.Value] = k.Line
				}
				walk(n.Content[i+1], path+k.Value+" > ")
			}
			return
		}
		for _, c := range n.Content {
			walk(c, path)
		}
	}
	walk(&root, "")
	return out
}
