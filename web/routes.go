package web

import (
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/internal/auth"
)

// Route is one method and path the API serves. Client functions, which share
// POST /api/v1/client/:fn, are listed one each with the role they check.
type Route struct {
	Method, Path string
	Function     string    // the client function's name, "" for other routes
	Role         auth.Role // the function's least role; "" for other routes
}

// Routes lists every route New serves (HEAD mirrors of GET routes and the
// groups' 404 catch-alls left out), so a test can walk them all and a route
// added without a decision about who may call it is noticed.
func Routes() []Route {
	e, s := build(Deps{}, Options{})
	var out []Route
	for _, r := range e.Router().Routes() {
		if r.Method == http.MethodHead || r.Method == echo.RouteNotFound {
			continue
		}
		if strings.HasSuffix(r.Path, "/client/:fn") {
			for name, fn := range s.fns {
				out = append(out, Route{Method: r.Method, Path: strings.TrimSuffix(r.Path, ":fn") + name,
					Function: name, Role: fn.role})
			}
			continue
		}
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}
