package web_test

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/framelake/framelake/web"
)

// wantHeaders are the security headers every answer carries (issue 31 item 16).
var wantHeaders = map[string]string{
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "same-origin",
	"X-Frame-Options":        "DENY",
}

func checkSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for k, v := range wantHeaders {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %s %q, want %q", what, k, got, v)
		}
	}
	csp := h.Get("Content-Security-Policy")
	for _, d := range []string{"script-src 'self';", "frame-ancestors 'none'", "object-src 'none'", "worker-src 'self' blob:"} {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: Content-Security-Policy %q lacks %q", what, csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-eval") || regexp.MustCompile(`script-src[^;]*unsafe-inline`).MatchString(csp) {
		t.Errorf("%s: Content-Security-Policy %q lets inline script or eval run", what, csp)
	}
}

// TestSecurityHeadersOnEveryAnswer: the app's pages, its assets, API
// answers and API errors, media, thumbnails and unknown paths all carry a
// Content-Security-Policy without inline script that forbids framing,
// nosniff, a Referrer-Policy and X-Frame-Options.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	s := startLakeServer(t)
	assets, _ := fs.Glob(os.DirFS("ui/dist"), "assets/*")
	if len(assets) == 0 {
		t.Fatal("no built assets under ui/dist")
	}
	_, body := s.get(t, "/api/v1/lake/items", url.Values{"pageSize": {"1"}})
	media := regexp.MustCompile(`"url":"(http[^"]+)"`).FindStringSubmatch(body)
	thumb := regexp.MustCompile(`"thumbUrl":"(http[^"]+)"`).FindStringSubmatch(body)
	if media == nil || thumb == nil {
		t.Fatalf("no media or thumbnail URL in %s", body)
	}
	for _, c := range []struct {
		what, url string
		auth      bool
		status    int
	}{
		{"page", s.base + "/", false, 200},
		{"deep link", s.base + "/items/x.jpg", false, 200},
		{"asset", s.base + "/" + assets[0], false, 200},
		{"API answer", s.base + "/api/v1/lake/facets", true, 200},
		{"API error", s.base + "/api/v1/lake/histogram?field=nope", true, 400},
		{"unauthenticated", s.base + "/api/v1/lake/facets", false, 401},
		{"no route", s.base + "/api/v1/nothing", true, 404},
		{"media", media[1], false, 200},
		{"thumbnail", thumb[1], false, 200},
		{"health", s.base + "/healthz", false, 200},
	} {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		if c.auth {
			req.Header.Set("key", s.key)
			req.Header.Set("secret", s.secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.what, c.url, resp.StatusCode, c.status)
		}
		checkSecurityHeaders(t, c.what, resp.Header)
	}
}

// TestAppHasNoInlineScript: the built page loads its scripts from files,
// which the policy allows; an inline script would not run under it.
func TestAppHasNoInlineScript(t *testing.T) {
	b, err := os.ReadFile("ui/dist/index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range regexp.MustCompile(`(?is)<script\b[^>]*>(.*?)</script>`).FindAllStringSubmatch(string(b), -1) {
		if strings.TrimSpace(tag[1]) != "" || !strings.Contains(tag[0], "src=") {
			t.Errorf("ui/dist/index.html has an inline script: %.200s", tag[0])
		}
	}
	if regexp.MustCompile(`(?i)\son[a-z]+\s*=`).Match(b) {
		t.Error("ui/dist/index.html has an inline event handler")
	}
}

// TestSecurityHeadersOnEveryRoute walks every route the router serves (the
// team's member, session and job routes among them), with a key and
// without, and checks each answer, whatever its status, carries the
// security headers.
func TestSecurityHeadersOnEveryRoute(t *testing.T) {
	s := startLakeServer(t)
	param := regexp.MustCompile(`:[A-Za-z]+`)
	for _, r := range web.Routes() {
		path := param.ReplaceAllString(r.Path, "x")
		for _, withKey := range []bool{true, false} {
			req, _ := http.NewRequest(r.Method, s.base+path, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			if withKey {
				req.Header.Set("key", s.key)
				req.Header.Set("secret", s.secret)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			checkSecurityHeaders(t, fmt.Sprintf("%s %s (key %v: %d)", r.Method, r.Path, withKey, resp.StatusCode), resp.Header)
		}
	}
}
