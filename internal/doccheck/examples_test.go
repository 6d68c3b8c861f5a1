package doccheck

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/web"
)

// The examples of README and docs/ are checked, not only their links:
//   - every curl command names a method and path the server serves (web.Routes,
//     client functions one by one), and its JSON body parses;
//   - every framelake command line names a command the binary has, and only
//     flags that command takes (binary_test.go, which builds it);
//   - README's tour runs against the real binary (binary_test.go).
// A block that cannot be checked says why in a marker on the line before it:
//   <!-- doccheck: skip REASON -->   the block is left out (REASON is required)
//   <!-- doccheck: run REASON -->    the block is run as a script (TestReadmeTour)

// block is one ```sh code block of a document.
type block struct {
	doc, text, marker string
	line              int
}

var markerRe = regexp.MustCompile(`<!-- doccheck: (skip|run) (.+?) -->\s*$`)

// shellBlocks lists the ```sh blocks of the documents with the marker on the
// line before each, if any.
func shellBlocks(t *testing.T) []block {
	t.Helper()
	var out []block
	for _, doc := range documents(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, blocksOf(rel(doc), string(b))...)
	}
	return out
}

func blocksOf(doc, text string) []block {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		indent := len(lines[i]) - len(trimmed)
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		if lang == "sh" || lang == "bash" || lang == "shell" {
			var body []string
			for _, l := range lines[i+1 : min(j, len(lines))] {
				if len(l) >= indent {
					l = l[indent:]
				}
				body = append(body, l)
			}
			bl := block{doc: doc, text: strings.Join(body, "\n"), line: i + 1}
			if i > 0 {
				if m := markerRe.FindStringSubmatch(lines[i-1]); m != nil {
					bl.marker = m[1]
				}
			}
			out = append(out, bl)
		}
		i = j
	}
	return out
}

// commands splits a block into shell commands as words: quotes kept whole
// across lines, backslash-newline continues a line, comments dropped. In a
// block written as a session ("$ cmd" lines), only the "$" lines are
// commands; the others are output.
func commands(text string) [][]string {
	session := regexp.MustCompile(`(?m)^\$ `).MatchString(text)
	if session {
		var keep []string
		more := false // the command goes on after a backslash
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "$ ") || more {
				keep = append(keep, strings.TrimPrefix(l, "$ "))
				more = strings.HasSuffix(l, "\\")
			}
		}
		text = strings.Join(keep, "\n")
	}
	var cmds [][]string
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	flushWord := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' && i+1 < len(rs) && (rs[i+1] == '"' || rs[i+1] == '\\' || rs[i+1] == '$') {
				i++
				cur.WriteRune(rs[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs) && rs[i+1] == '\n':
			i++
			flushWord()
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == '#' && !inWord:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			flushCmd()
		case r == '\n' || r == ';' || r == '|' || r == '&' || r == '(' || r == ')':
			flushCmd()
		case r == ' ' || r == '\t':
			flushWord()
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flushCmd()
	return cmds
}

// apiVars are the shell variables the documents use for the API's address.
var apiVars = map[string]string{
	"$A": "http://127.0.0.1:8080/api/v1", "${A}": "http://127.0.0.1:8080/api/v1",
	"$F": "http://127.0.0.1:8080/api/v1/client", "${F}": "http://127.0.0.1:8080/api/v1/client",
	"$API": "http://127.0.0.1:8080/api/v1",
}

// answerURL is a URL an example took from an earlier answer ("$URL", a
// signed media link): it names no route to check.
var answerURL = regexp.MustCompile(`^"?\$\{?URL\}?"?$`)

// curlRequest reads a curl command's method, path and JSON body.
func curlRequest(words []string) (method, path, body string, err error) {
	var rawURL string
	form := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		next := func() string {
			if i+1 < len(words) {
				i++
				return words[i]
			}
			return ""
		}
		switch {
		case w == "-X" || w == "--request":
			method = next()
		case w == "-d" || w == "--data" || w == "--data-raw" || w == "--json":
			body = next()
		case w == "--data-binary" || w == "-F" || w == "--form":
			form = true
			next()
		case w == "-H" || w == "-u" || w == "-o" || w == "--output" || w == "-w" || w == "-r" || w == "--range" || w == "-e" || w == "-A":
			next()
		case w == "-I" || w == "--head":
			method = "GET" // HEAD mirrors every GET route
		case strings.HasPrefix(w, "-"):
		default:
			for v, u := range apiVars {
				if strings.HasPrefix(w, v+"/") {
					w = u + strings.TrimPrefix(w, v)
				}
			}
			if strings.HasPrefix(w, "http") {
				rawURL = w
			} else if answerURL.MatchString(w) {
				return "GET", "", "", nil
			}
		}
	}
	if rawURL == "" {
		return "", "", "", fmt.Errorf("no URL the check can read")
	}
	if method == "" {
		method = "GET"
		if body != "" || form {
			method = "POST"
		}
	}
	u, err := url.Parse(strings.NewReplacer("$", "X", "{", "X", "}", "X").Replace(rawURL))
	if err != nil {
		return "", "", "", err
	}
	return method, u.Path, body, nil
}

// serves reports whether the router serves method on path (":name"
// segments and a final "*" match anything).
func serves(routes []web.Route, method, path string) bool {
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	for _, r := range routes {
		if r.Method != method {
			continue
		}
		rs := strings.Split(r.Path, "/")
		ok := len(rs) == len(segs) || (len(rs) > 0 && rs[len(rs)-1] == "*" && len(segs) >= len(rs)-1)
		for i := 0; ok && i < len(rs) && i < len(segs); i++ {
			if rs[i] == "*" {
				break
			}
			ok = rs[i] == segs[i] || strings.HasPrefix(rs[i], ":")
		}
		if ok {
			return true
		}
	}
	return false
}

// TestCurlExamplesNameServedRoutes: every curl example of README and docs/
// asks for a method and path the server serves, and sends JSON that parses.
// A renamed route, a client function that does not exist or a body with a
// stray comma fails here.
func TestCurlExamplesNameServedRoutes(t *testing.T) {
	routes := web.Routes()
	n := 0
	for _, b := range shellBlocks(t) {
		if b.marker == "skip" {
			continue
		}
		for _, words := range commands(b.text) {
			for i, w := range words {
				if w != "curl" {
					continue
				}
				n++
				method, path, body, err := curlRequest(words[i:])
				where := fmt.Sprintf("%s (block at line %d): %s", b.doc, b.line, strings.Join(words[i:], " "))
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if path != "" && !strings.HasPrefix(path, "/healthz") && !serves(routes, method, path) {
					t.Errorf("%s: the server serves no %s %s", where, method, path)
				}
				if body != "" && !strings.Contains(body, "$") && strings.HasPrefix(strings.TrimSpace(body), "{") {
					var v any
					if err := json.Unmarshal([]byte(body), &v); err != nil {
						t.Errorf("%s: its JSON body does not parse: %v", where, err)
					}
				}
				break
			}
		}
	}
	if n < 90 {
		t.Errorf("found %d curl examples; the documents hold about 100", n)
	}
	t.Logf("%d curl examples checked", n)
}

// TestExampleParserReadsShell: the block reader joins continued lines and
// quoted bodies over lines, drops comments, and reads a session's "$" lines
// only; a route that is not served and a body that does not parse are found.
func TestExampleParserReadsShell(t *testing.T) {
	text := "<!-- doccheck: skip needs a GPU -->\n```sh\ncurl -s -u \"$KEY:$SECRET\" -H \"$JSON\" $F/get_item_count_from_lake -d '{\"query\":\n  \"Tags = x\"}'   # [{\"count\": 1}]\n```\n" +
		"```sh\n$ framelake check --data d \\\n  --json\nok: no problems\n```\n"
	bs := blocksOf("x.md", text)
	if len(bs) != 2 || bs[0].marker != "skip" || bs[1].marker != "" {
		t.Fatalf("blocks %+v", bs)
	}
	c := commands(bs[0].text)
	if len(c) != 1 || c[0][len(c[0])-1] != "{\"query\":\n  \"Tags = x\"}" {
		t.Fatalf("commands %q", c)
	}
	m, p, body, err := curlRequest(c[0])
	if err != nil || m != "POST" || p != "/api/v1/client/get_item_count_from_lake" || body == "" {
		t.Errorf("curl read as %s %s %q %v", m, p, body, err)
	}
	if s := commands(bs[1].text); len(s) != 1 || !slices.Equal(s[0], []string{"framelake", "check", "--data", "d", "--json"}) {
		t.Errorf("session read as %q", s)
	}
	routes := web.Routes()
	if !serves(routes, "POST", "/api/v1/client/get_item_count_from_lake") || !serves(routes, "GET", "/api/v1/lake/files/x-y") {
		t.Error("served routes not found")
	}
	if serves(routes, "POST", "/api/v1/client/no_such_function") || serves(routes, "DELETE", "/api/v1/me") {
		t.Error("a route the server does not serve was found")
	}
}
