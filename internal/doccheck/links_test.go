// Package doccheck holds the tests that keep the written documentation
// honest: every link in README and docs/ resolves.
package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's root, from this package's folder.
const root = "../.."

// documents are the Markdown files people read.
func documents(t *testing.T) []string {
	t.Helper()
	var docs []string
	for _, pattern := range []string{"*.md", "*/*.md"} { // the manual and docs/spec
		m, err := filepath.Glob(filepath.Join(root, "docs", pattern))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, m...)
	}
	for _, p := range []string{"README.md", "web/ui/README.md", "lake/query/GRAMMAR.md", "models/README.md",
		"examples/models/colour-tagger/README.md"} {
		docs = append(docs, filepath.Join(root, p))
	}
	return docs
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	fence   = regexp.MustCompile("(?s)```.*?```")
)

// slug is GitHub's anchor of a heading: lower case, punctuation dropped
// but for hyphens and underscores, spaces as hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		s := slug(strings.ReplaceAll(m[1], "`", ""))
		for n := 0; ; n++ { // GitHub numbers repeated headings -1, -2, ...
			k := s
			if n > 0 {
				k = s + "-" + string(rune('0'+n))
			}
			if !out[k] {
				out[k] = true
				break
			}
		}
	}
	return out
}

// TestLinksResolve: every relative link of the documents names a file or
// folder of the repository, and every #anchor a heading of its file.
func TestLinksResolve(t *testing.T) {
	for _, doc := range documents(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range brokenLinks(doc, string(b)) {
			t.Error(p)
		}
	}
}

// TestBrokenLinksFound: the checker itself finds a missing file, a missing
// heading, and takes GitHub's anchors (punctuation dropped, a repeated
// heading numbered) and links in code blocks as they are.
func TestBrokenLinksFound(t *testing.T) {
	doc := filepath.Join(root, "docs", "example.md")
	text := "# The `tracks` API, in short\n## Notes\n## Notes\n" +
		"[a](#the-tracks-api-in-short) [b](#notes-1) [c](#nowhere) [d](tracks.md#the-model) [e](tracks.md#no-such)\n" +
		"[f](missing.md) [g](https://example.com/x)\n```\n[h](inside-a-fence.md)\n```\n"
	got := strings.Join(brokenLinks(doc, text), "\n")
	for _, want := range []string{"link #nowhere: docs/example.md has no heading #nowhere",
		"link tracks.md#no-such: docs/tracks.md has no heading #no-such", "link missing.md: no such file"} {
		if !strings.Contains(got, want) {
			t.Errorf("missed %q in:\n%s", want, got)
		}
	}
	if n := len(brokenLinks(doc, text)); n != 3 {
		t.Errorf("%d problems, want 3:\n%s", n, got)
	}
}

// brokenLinks lists the links of doc (its text) that do not resolve.
func brokenLinks(doc, text string) []string {
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		link := m[1]
		if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
			continue // other sites: this machine cannot reach them
		}
		target, anchor, _ := strings.Cut(link, "#")
		file, body := doc, text
		if target != "" {
			file = filepath.Join(filepath.Dir(doc), target)
			if _, err := os.Stat(file); err != nil {
				out = append(out, fmt.Sprintf("%s: link %s: no such file", rel(doc), link))
				continue
			}
			if !strings.HasSuffix(file, ".md") || anchor == "" {
				continue
			}
			b, err := os.ReadFile(file)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: link %s: %v", rel(doc), link, err))
				continue
			}
			body = string(b)
		}
		if anchor != "" && !anchors(body)[anchor] {
			out = append(out, fmt.Sprintf("%s: link %s: %s has no heading #%s", rel(doc), link, rel(file), anchor))
		}
	}
	return out
}

func rel(p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}
