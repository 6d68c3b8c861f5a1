package lake

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// lakeTables reads the names of the lake's tables (plain and virtual) from
// its migrations, so a table added by a new migration is covered without
// editing this test.
func lakeTables(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no lake migrations: %v", err)
	}
	create := regexp.MustCompile(`(?i)CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["\x60]?([a-z_][a-z0-9_]*)`)
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			name := strings.ToLower(m[1])
			// A migration rebuilding a table creates it under a temporary
			// name first; the name it ends with is created too.
			if !strings.HasSuffix(name, "_new") && !strings.HasSuffix(name, "_old") {
				seen[name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TestOnlyLakeWritesSQLOnLakeTables keeps docs/architecture.md's ownership
// rule: SQL naming a table of the lake's migrations (after FROM, JOIN, INTO,
// UPDATE, TABLE or a trigger's ON) appears in no string literal of a non-test
// Go file outside lake/. What other packages need of those tables is a lake
// function in lake/<package>_support.go.
func TestOnlyLakeWritesSQLOnLakeTables(t *testing.T) {
	tables := lakeTables(t)
	if len(tables) < 5 {
		t.Fatalf("read only %d lake tables from lake/migrations: %v", len(tables), tables)
	}
	// SQL keywords are upper case throughout the project, which keeps error
	// messages ("read from file ...") out of the match.
	sqlOn := regexp.MustCompile(`\b(?:FROM|JOIN|INTO|UPDATE|TABLE|ON)\s+(` + strings.Join(tables, "|") + `)\b(?:[^.(_]|$)`)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "lake" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		found = append(found, lakeSQLIn(t, path, rel, sqlOn)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("SQL on lake tables outside lake/ (docs/architecture.md: only lake writes SQL on its tables; "+
			"add a function to lake/<package>_support.go instead):\n  %s", strings.Join(found, "\n  "))
	}
}

// lakeSQLIn lists the string literals of one Go file that name a lake table
// in SQL, as "path:line: table".
func lakeSQLIn(t *testing.T, path, rel string, sqlOn *regexp.Regexp) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", rel, err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, m := range sqlOn.FindAllStringSubmatch(s, -1) {
			out = append(out, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+m[1])
		}
		return true
	})
	return out
}
