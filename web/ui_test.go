package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// uiSourcesHash hashes the web app's sources by the rule of web/ui/stamp.mjs.
func uiSourcesHash(t *testing.T) string {
	t.Helper()
	var files []string
	for _, root := range []string{"index.html", "package.json", "package-lock.json", "vite.config.js", "src"} {
		err := filepath.WalkDir(filepath.Join("ui", root), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, strings.TrimPrefix(filepath.ToSlash(p), "ui/"))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(files)
	all := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("ui", f))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(all, "%s\n%s\n", f, hex.EncodeToString(sum[:]))
	}
	return "sha256 " + hex.EncodeToString(all.Sum(nil)) + "\n"
}

// TestUIBuildIsCurrent fails when web/ui's sources changed after the
// committed build in web/ui/dist was made: run `make ui` and commit dist.
func TestUIBuildIsCurrent(t *testing.T) {
	built, err := os.ReadFile("ui/dist/SOURCES")
	if err != nil {
		t.Fatalf("ui/dist/SOURCES: %v (run make ui)", err)
	}
	if now := uiSourcesHash(t); string(built) != now {
		t.Fatalf("web/ui/dist is stale: built from %s the sources are now %s; run make ui and commit web/ui/dist",
			strings.TrimSpace(string(built)), strings.TrimSpace(now))
	}
}

// TestAppServedAtEveryPagePath checks that the binary answers the app's deep
// links with its index.html, serves its assets, and keeps JSON 404s for API
// and media paths that no route serves.
func TestAppServedAtEveryPagePath(t *testing.T) {
	srv := httptest.NewServer(New(Deps{Logger: slog.New(slog.DiscardHandler)}, Options{}))
	defer srv.Close()
	index, _ := fs.ReadFile(uiFiles, "index.html")
	for _, p := range []string{"/", "/items/abc.jpg", "/datasets/ds_1", "/jobs/job_1", "/?q=label%20%3D%20%22car%22"} {
		body, resp := get(t, srv.URL+p)
		if resp.StatusCode != 200 || body != string(index) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d %s, want the app's index.html", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	assets, _ := fs.Glob(uiFiles, "assets/*.js")
	if len(assets) == 0 {
		t.Fatal("no built script under ui/dist/assets")
	}
	if body, resp := get(t, srv.URL+"/"+assets[0]); resp.StatusCode != 200 || !strings.Contains(body, "framelake") ||
		!strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("GET /%s: %d %q", assets[0], resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	for _, p := range []string{"/api/nothing", "/media/", "/assets/nothing.js"} {
		body, resp := get(t, srv.URL+p)
		if resp.StatusCode != 404 || !strings.Contains(body, `"not_found"`) {
			t.Errorf("GET %s: %d %s, want a JSON 404", p, resp.StatusCode, body)
		}
	}
}

func get(t *testing.T, url string) (string, *http.Response) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), resp
}
