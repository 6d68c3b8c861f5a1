package web

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
)

// oidcCookie keeps a sign-in under way (state, nonce, PKCE verifier)
// between leaving for the provider and coming back. SameSite=Lax, not
// Strict: the browser comes back from the provider's site, and a Strict
// cookie would not be sent with that navigation.
const (
	oidcCookie     = "framelake_oidc"
	oidcCookiePath = "/api/v1/session/oidc"
	oidcCookieLife = 10 * time.Minute
	// oidcTokenCookie keeps a sign-on's ID token for the hint of the
	// provider's logout (oidcLogout); a browser drops a cookie past 4 KB,
	// so a longer token is not kept and the logout goes without it.
	oidcTokenCookie = "framelake_oidc_token"
	oidcTokenMax    = 3800
)

// oidcRoutes are single sign-on's (docs/team.md "Single sign-on"). They
// need no key: they are how a person gets a session. Without an issuer
// configured they answer 400 (this server takes no such request) and
// /session/sso says so.
func (s *server) oidcRoutes(e *echo.Echo) {
	e.GET("/api/v1/session/sso", s.ssoInfo)
	e.GET("/api/v1/session/oidc", s.oidcStart)
	e.GET("/api/v1/session/oidc/callback", s.oidcCallback)
	e.GET("/api/v1/session/oidc/logout", s.oidcLogout)
}

// ssoInfo tells a signed-out web app whether to show "Sign in with SSO"
// and where it leads (GET /api/v1/session itself answers 401 then).
func (s *server) ssoInfo(c *echo.Context) error {
	if s.OIDC == nil {
		return c.JSON(http.StatusOK, map[string]any{"oidc": false})
	}
	return c.JSON(http.StatusOK, map[string]any{"oidc": true, "signInUrl": oidcCookiePath, "signOutUrl": oidcCookiePath + "/logout"})
}

func (s *server) oidcOff() error {
	return errs.New(errs.InvalidArgument, "", "single sign-on is not configured on this server (serve --oidc-issuer)")
}

// oidcStart sends the browser to the provider with a fresh state, nonce
// and PKCE S256 challenge, kept in a short-lived HttpOnly cookie.
func (s *server) oidcStart(c *echo.Context) error {
	if s.OIDC == nil {
		return s.oidcOff()
	}
	r := c.Request()
	st := auth.NewOIDCStart()
	to, err := s.OIDC.AuthURL(r.Context(), st)
	if err != nil {
		return err
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: oidcCookie, Value: st.State + "." + st.Nonce + "." + st.Verifier,
		Path: oidcCookiePath, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
		MaxAge: int(oidcCookieLife.Seconds()), Expires: time.Now().Add(oidcCookieLife)})
	return c.Redirect(http.StatusFound, to)
}

// oidcCallback checks the state against this browser's cookie, exchanges
// the code, checks the ID token, and opens a new session exactly as
// password sign-in does, then sends the browser to the web app.
func (s *server) oidcCallback(c *echo.Context) error {
	if s.OIDC == nil {
		return s.oidcOff()
	}
	r := c.Request()
	// The sign-in's cookie is spent whatever happens: a state is used once.
	http.SetCookie(c.Response(), &http.Cookie{Name: oidcCookie, Value: "", Path: oidcCookiePath, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: -1, Expires: time.Unix(0, 0)})
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return errs.New(errs.Unauthenticated, "", "the sign-on provider refused the sign-in: %s %s", e, q.Get("error_description"))
	}
	ck, err := r.Cookie(oidcCookie)
	if err != nil {
		return errs.New(errs.Unauthenticated, "state", "no sign-in is under way in this browser (or it took over %s): start again", oidcCookieLife)
	}
	parts := strings.Split(ck.Value, ".")
	if len(parts) != 3 || q.Get("state") == "" || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(parts[0])) != 1 {
		return errs.New(errs.Unauthenticated, "state", "the sign-on answer's state does not match this browser's sign-in: start again")
	}
	if q.Get("code") == "" {
		return errs.Invalid("code", "the sign-on answer has no code")
	}
	who, err := s.OIDC.Exchange(r.Context(), q.Get("code"), auth.OIDCStart{State: parts[0], Nonce: parts[1], Verifier: parts[2]})
	if err != nil {
		return err
	}
	sess, err := s.Keys.SignInOIDC(r.Context(), who)
	if err != nil {
		return err
	}
	http.SetCookie(c.Response(), &http.Cookie{Name: sessionCookie, Value: sess.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, Expires: sess.ExpiresAt})
	if len(who.IDToken) <= oidcTokenMax {
		http.SetCookie(c.Response(), &http.Cookie{Name: oidcTokenCookie, Value: who.IDToken, Path: oidcCookiePath,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, Expires: sess.ExpiresAt})
	}
	return c.Redirect(http.StatusFound, "/")
}

// oidcLogout answers GET /api/v1/session/oidc/logout, where the web app
// sends a browser signed in by sign-on to sign out: it ends the framelake
// session, and then the provider's too when the provider advertises an
// end_session_endpoint (a redirect there with the ID token as hint), else
// it sends the browser to the web app. A GET is safe here: the cookies are
// SameSite=Strict, so another site's link ends nothing. A browser with
// neither a session nor a sign-on's token is a 401: there is nothing to end.
func (s *server) oidcLogout(c *echo.Context) error {
	r := c.Request()
	sess, serr := r.Cookie(sessionCookie)
	tok, terr := r.Cookie(oidcTokenCookie)
	if serr != nil && terr != nil {
		return errs.New(errs.Unauthenticated, "", "this browser is not signed in: there is no session to end")
	}
	if serr == nil {
		if err := s.Keys.SignOut(r.Context(), sess.Value); err != nil {
			return err
		}
	}
	for _, ck := range []struct{ name, path string }{{sessionCookie, "/"}, {oidcTokenCookie, oidcCookiePath}} {
		http.SetCookie(c.Response(), &http.Cookie{Name: ck.name, Value: "", Path: ck.path, HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1, Expires: time.Unix(0, 0)})
	}
	to := "/"
	if s.OIDC != nil && terr == nil {
		u, err := s.OIDC.LogoutURL(r.Context(), tok.Value)
		if err != nil {
			return err
		}
		if u != "" {
			to = u
		}
	}
	return c.Redirect(http.StatusFound, to)
}
