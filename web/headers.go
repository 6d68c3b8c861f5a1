package web

import (
	"github.com/labstack/echo/v5"
)

// contentSecurityPolicy is the policy of every answer: the app's own
// scripts only, never inline ones or eval; its API on this origin; images and
// video from anywhere (media redirects to presigned bucket URLs, blob: and
// data: previews); web workers from the app or blob: (allowed for the map's
// former library, regl-scatterplot; src/scatter.js starts none, so this can
// narrow to 'self'); inline styles, which the app sets on elements; and no
// framing by any page. A JSON or media answer opened in a tab runs nothing
// either.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src * data: blob:; media-src * data: blob:; worker-src 'self' blob:; connect-src 'self'; " +
	"font-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// securityHeaders are set on every answer the handler makes: pages, assets,
// media, thumbnails, API answers and errors alike.
var securityHeaders = [][2]string{
	{"Content-Security-Policy", contentSecurityPolicy},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "same-origin"},
	{"X-Frame-Options", "DENY"},
}

// secureHeaders sets securityHeaders before the request is handled, so an
// error answer carries them as well.
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c *echo.Context) error {
		h := c.Response().Header()
		for _, kv := range securityHeaders {
			h.Set(kv[0], kv[1])
		}
		return next(c)
	}
}
