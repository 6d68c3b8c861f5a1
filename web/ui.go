package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/labstack/echo/v5"
)

// uiDist is the built web app (web/ui, `make ui`), committed so that a Go
// build needs no Node.
//
//go:embed ui/dist
var uiDist embed.FS

var uiFiles, _ = fs.Sub(uiDist, "ui/dist")

// app serves the web app for any GET that no route took: its hashed assets
// as files, every other path (/, /items/<uniqueName>, /datasets/<id>, ...)
// as index.html, whose script routes it after sign-in. API and media paths
// keep their JSON 404.
func (s *server) app(c *echo.Context) error {
	r := c.Request()
	p := r.URL.Path
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || p == "/api" ||
		strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/media") || strings.HasPrefix(p, ThumbPath) {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	if strings.HasPrefix(p, "/assets/") {
		// Vite names assets by content hash, so they never change under a name.
		if _, err := fs.Stat(uiFiles, strings.TrimPrefix(p, "/")); err != nil {
			return echo.ErrNotFound
		}
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		return c.FileFS(strings.TrimPrefix(p, "/"), uiFiles)
	}
	index, err := fs.ReadFile(uiFiles, "index.html")
	if err != nil {
		return err
	}
	h.Set("Cache-Control", "no-cache")
	return c.HTMLBlob(http.StatusOK, index)
}
