package analysis

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
)

var indexedLabel = regexp.MustCompile(`^(\d+)\s*:\s*(.*)$`)

// parseLabels reads the class names of label_list.yaml in the shapes
// training tools write, without a YAML library: a list (`- person`), a flow
// list (`[person, car]`, also under `names:`), an index map (`0: person`,
// also under `names:`), or one name per line. Other keys (`nc: 80`) are
// ignored.
func parseLabels(b []byte) ([]string, error) {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		if l = strings.TrimSpace(stripComment(l)); l != "" && l != "---" {
			lines = append(lines, l)
		}
	}
	text := strings.Join(lines, "\n")
	var labels []string
	if i, j := strings.Index(text, "["), strings.LastIndex(text, "]"); i >= 0 && j > i {
		for _, part := range splitFlow(text[i+1 : j]) {
			labels = append(labels, unquote(part))
		}
		return checkLabels(labels)
	}
	indexed := map[int]string{}
	for _, l := range lines {
		switch m := indexedLabel.FindStringSubmatch(l); {
		case strings.HasPrefix(l, "- ") || l == "-":
			labels = append(labels, unquote(strings.TrimSpace(strings.TrimPrefix(l, "-"))))
		case m != nil:
			n, _ := strconv.Atoi(m[1])
			indexed[n] = unquote(m[2])
		case strings.Contains(l, ":") && !strings.HasPrefix(l, `"`) && !strings.HasPrefix(l, "'"):
			// another key (names:, nc: 80)
		default:
			labels = append(labels, unquote(l))
		}
	}
	if len(indexed) > 0 {
		keys := make([]int, 0, len(indexed))
		for k := range indexed {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for want, k := range keys {
			if k != want {
				return nil, errs.Invalid("package", "label_list.yaml numbers its labels with a gap at %d", want)
			}
			labels = append(labels, indexed[k])
		}
	}
	return checkLabels(labels)
}

func checkLabels(labels []string) ([]string, error) {
	if len(labels) == 0 {
		return nil, errs.Invalid("package", "label_list.yaml lists no labels")
	}
	for i, l := range labels {
		if l == "" {
			return nil, errs.Invalid("package", "label_list.yaml: label %d is empty", i)
		}
	}
	return labels, nil
}

// stripComment drops a # comment outside quotes.
func stripComment(l string) string {
	var quote rune
	for i, r := range l {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i]
		}
	}
	return l
}

// splitFlow splits a YAML flow list on commas outside quotes.
func splitFlow(s string) []string {
	var out []string
	var quote rune
	start := 0
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '\''):
			quote = r
		case quote == 0 && r == ',':
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if last := strings.TrimSpace(s[start:]); last != "" {
		out = append(out, last)
	}
	return out
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}
