package lake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
)

// MediaPath is the URL path under which a file's bytes are served.
const MediaPath = "/media/"

// URL returns a signed URL for a file's bytes that expires after the lake's
// URL lifetime, like a presigned object-store URL: whoever holds it can read
// that one file until then, with no API key.
func (l *Lake) URL(f File) string {
	exp := l.now().Add(l.opt.URLTTL).Unix()
	path := MediaPath + url.PathEscape(f.UniqueName)
	return l.opt.BaseURL + path + "?exp=" + strconv.FormatInt(exp, 10) + "&sig=" + l.sign(f.UniqueName, exp)
}

func (l *Lake) sign(uniqueName string, exp int64) string {
	m := hmac.New(sha256.New, l.opt.SigningKey)
	m.Write([]byte(MediaPath + uniqueName + "\n" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

// VerifyURL checks the exp and sig parameters of a media URL for uniqueName.
func (l *Lake) VerifyURL(uniqueName, exp, sig string) error {
	return l.verifySigned(exp, sig, func(e int64) string { return l.sign(uniqueName, e) })
}

// verifySigned checks a signed URL's parameters, saying which one is missing
// or wrong. The signature is checked before the expiry: exp means nothing
// until it is known to be the one that was signed.
func (l *Lake) verifySigned(exp, sig string, sign func(exp int64) string) error {
	unsigned := func(format string, args ...any) error {
		return errs.New(errs.Unauthenticated, "", "media url "+format, args...)
	}
	e, err := strconv.ParseInt(exp, 10, 64)
	switch {
	case strings.Contains(exp+sig, `\u0026`):
		return unsigned(`has its & written as \u0026: copy the link from decoded JSON, or replace \u0026 by &`)
	case exp == "" && sig == "":
		return unsigned("is not signed: it needs the exp and sig parameters of the link the API gave")
	case exp == "":
		return unsigned("has no exp parameter: use the whole link the API gave")
	case sig == "":
		return unsigned("has no sig parameter: use the whole link the API gave")
	case err != nil:
		return unsigned("exp %q is not a unix time", exp)
	case !hmac.Equal([]byte(sig), []byte(sign(e))):
		return unsigned("signature does not match its path and exp: the link was changed or signed by another server")
	case time.Unix(e, 0).Before(l.now()):
		return unsigned("expired at %s: ask the API for a new link", time.Unix(e, 0).UTC().Format(time.RFC3339))
	}
	return nil
}
