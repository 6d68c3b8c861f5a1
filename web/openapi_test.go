package web

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v5"
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
