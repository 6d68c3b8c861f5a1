package lake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
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
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || sig == "" {
		return errs.New(errs.Unauthenticated, "", "media url is not signed")
	}
	if !hmac.Equal([]byte(sig), []byte(l.sign(uniqueName, e))) {
		return errs.New(errs.Unauthenticated, "", "media url signature does not match")
	}
	if time.Unix(e, 0).Before(l.now()) {
		return errs.New(errs.Unauthenticated, "", "media url expired")
	}
	return nil
}
