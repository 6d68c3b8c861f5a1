package web

import (
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
)

// clientFn is one client function of docs/spec/interface.md 4.2, served as
// POST /api/v1/client/<name> with a JSON object of its parameters.
type clientFn struct {
	role auth.Role // least role that may call it (reads are POSTs too)
	call echo.HandlerFunc
}

// function registers a client function; resource files call it from their
// routes method. Handlers read their parameters with s.params.
func (s *server) function(name string, role auth.Role, call echo.HandlerFunc) {
	if _, dup := s.fns[name]; dup {
		panic("web: client function registered twice: " + name)
	}
	s.fns[name] = clientFn{role: role, call: call}
}

func (s *server) clientRoutes(g *echo.Group) {
	g.POST("/client/:fn", s.callFunction)
}

func (s *server) callFunction(c *echo.Context) error {
	name := c.Param("fn")
	fn, ok := s.fns[name]
	if !ok {
		names := make([]string, 0, len(s.fns))
		for n := range s.fns {
			names = append(names, n)
		}
		sort.Strings(names)
		return errs.NotFoundf("unknown client function %q; known: %s", name, strings.Join(names, ", "))
	}
	return requireRole(fn.role)(fn.call)(c)
}

// params decodes a client function's JSON parameters into v (snake_case
// fields as in the function's signature): unknown parameters and wrong types
// are 400s naming the parameter, then v's validate tags are checked.
func (s *server) params(c *echo.Context, v any) error { return s.bindJSON(c, v) }

// ok answers a client function with a JSON value.
func ok(c *echo.Context, v any) error { return c.JSON(http.StatusOK, v) }
