package web

import (
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

const keyCtx = "framelake.key"

// authenticate accepts headers key and secret, HTTP Basic with the key as
// user and the secret as password, or a signed-in person's session cookie
// (sessionKey), and remembers the key for the handlers.
func (s *server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		r := c.Request()
		key, secret := r.Header.Get("key"), r.Header.Get("secret")
		if key == "" && secret == "" {
			key, secret, _ = r.BasicAuth()
		}
		if ck, err := r.Cookie(sessionCookie); err == nil && key == "" && secret == "" {
			k, err := s.sessionKey(c, ck.Value)
			if err != nil {
				return err
			}
			c.Set(keyCtx, k)
			// Changes to shapes are recorded with who made them (lake/history.go).
			c.SetRequest(r.WithContext(lake.WithActor(r.Context(), lake.Actor{Who: k.Name, Via: "web app"})))
			return next(c)
		}
		k, err := s.Keys.Verify(r.Context(), key, secret)
		if err != nil {
			// No Basic challenge to a client that sent key headers (the web
			// app): browsers would answer it with their own password dialog.
			if r.Header.Get("key") == "" {
				c.Response().Header().Set("WWW-Authenticate", `Basic realm="framelake"`)
			}
			return err
		}
		c.Set(keyCtx, k)
		c.SetRequest(r.WithContext(lake.WithActor(r.Context(), lake.Actor{Who: k.Name, Via: "api key " + k.Key})))
		return next(c)
	}
}

// roleByMethod lets any key read (GET, HEAD) and write keys change things.
func roleByMethod(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		need := auth.Write
		if m := c.Request().Method; m == http.MethodGet || m == http.MethodHead {
			need = auth.Read
		}
		return requireRole(need)(next)(c)
	}
}

// requireRole guards routes that need more than the method implies, such as
// model registration (admin) or reads done with POST (read).
func requireRole(role auth.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			k, _ := c.Get(keyCtx).(auth.Key)
			if !k.Role.Allows(role) {
				return errs.New(errs.PermissionDenied, "", "this needs a %s key; api key %s is %s", role, k.Key, k.Role)
			}
			return next(c)
		}
	}
}

// caller is the key that made the request.
func caller(c *echo.Context) auth.Key {
	k, _ := c.Get(keyCtx).(auth.Key)
	return k
}

// ProjectNeed is what a route asks of its caller on one project: the team's
// roles (docs/team.md) are per project for annotators and reviewers.
type ProjectNeed int

const (
	NeedView     ProjectNeed = iota // see the project's tasks, frames and shapes
	NeedAnnotate                    // edit the frames of jobs assigned to the caller
	NeedReview                      // review (accept, reject, comment) the project's jobs
	NeedCurate                      // change the project itself: labels, jobs, assignments
)

// projectAccess checks the caller may act on projectID as need asks.
// Handlers of project routes call it before they read or write; the role
// rules behind it are one table in this file.
func (s *server) projectAccess(c *echo.Context, projectID string, need ProjectNeed) error {
	role := auth.Write
	if need == NeedView {
		role = auth.Read
	}
	k := caller(c)
	if !k.Role.Allows(role) {
		return errs.New(errs.PermissionDenied, "", "this needs a %s key; api key %s is %s", role, k.Key, k.Role)
	}
	return nil
}
