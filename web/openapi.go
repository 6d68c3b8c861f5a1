package web

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v5"
)

// openAPI documents every route: the eight fixed by docs/spec/rest.md, the client
// functions, and the ones framelake adds (lake upload, jobs, media).
//
//go:embed openapi.yaml
var openAPI []byte

func (s *server) openAPI(c *echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", openAPI)
}
