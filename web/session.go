package web

import (
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
)

// sessionCookie names the cookie a signed-in person's browser carries.
const sessionCookie = "framelake_session"

// csrfHeader carries a session's CSRF token on every write made with the
// cookie: a page of another origin can make the browser send the cookie
// (SameSite=Strict already stops most), never read the token.
const csrfHeader = "X-CSRF-Token"

// sessionRoutes sign people in and out (docs/team.md). Signing in needs
// no key: it is how a person gets one.
func (s *server) sessionRoutes(e *echo.Echo, api *echo.Group) {
	e.POST("/api/v1/session", s.signIn)
	api.GET("/session", s.currentSession)
	api.DELETE("/session", s.signOut)
}

// signIn checks {"name", "password"} and sets the session cookie:
// HttpOnly, SameSite=Strict, Secure when the request came over TLS. The
// answer carries the CSRF token and the person; an old cookie the browser
// sent is never reused (a new session each time: no fixation).
func (s *server) signIn(c *echo.Context) error {
	var req struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	r := c.Request()
	addr, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		addr = r.RemoteAddr
	}
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	sess, err := s.Keys.SignIn(r.Context(), req.Name, req.Password, addr, log)
	if err != nil {
		return err
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: sessionCookie, Value: sess.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, Expires: sess.ExpiresAt})
	return c.JSON(http.StatusOK, sess)
}

// currentSession answers the signed-in person and the CSRF token, so a page
// loaded later (the cookie kept, the token not) can write again; null for
// a request made with a key. memberships are the projects the caller (the
// person, or a key's person) is an annotator or a reviewer of: where an
// annotator's app starts, since they may not list the lake's projects.
func (s *server) currentSession(c *echo.Context) error {
	ctx := c.Request().Context()
	ms := []auth.Member{}
	if k := caller(c); k.User != "" {
		var err error
		if ms, err = s.Keys.Memberships(ctx, k.User); err != nil {
			return err
		}
	}
	ck, err := c.Request().Cookie(sessionCookie)
	if err != nil { // signed in by key: no person's session to show
		return c.JSON(http.StatusOK, map[string]any{"user": nil, "csrfToken": nil, "memberships": ms})
	}
	u, csrf, err := s.Keys.SessionUser(ctx, ck.Value)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"user": u, "csrfToken": csrf, "memberships": ms})
}

// signOut ends the session and clears the cookie.
func (s *server) signOut(c *echo.Context) error {
	if ck, err := c.Request().Cookie(sessionCookie); err == nil {
		if err := s.Keys.SignOut(c.Request().Context(), ck.Value); err != nil {
			return err
		}
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.Request().TLS != nil, MaxAge: -1, Expires: time.Unix(0, 0)})
	return c.NoContent(http.StatusNoContent)
}

// sessionKey authenticates a request by its session cookie, as the key of
// its person; a write must carry the session's CSRF token.
func (s *server) sessionKey(c *echo.Context, token string) (auth.Key, error) {
	r := c.Request()
	u, csrf, err := s.Keys.SessionUser(r.Context(), token)
	if err != nil {
		return auth.Key{}, err
	}
	if m := r.Method; m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions {
		if got := r.Header.Get(csrfHeader); subtle.ConstantTimeCompare([]byte(got), []byte(csrf)) != 1 {
			return auth.Key{}, errs.New(errs.PermissionDenied, "", "a write signed in by cookie needs the session's %s header", csrfHeader)
		}
	}
	return auth.Key{ID: u.ID, Name: u.Name, User: u.Name, Role: u.Role, CreatedAt: u.CreatedAt}, nil
}
