package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// ThumbPath serves display thumbnails: ThumbPath + "<size>/<uniqueName>",
// signed like the file's media URL (same exp and sig): whoever may read a
// file's bytes may read a smaller copy of them, and <img> tags send no keys.
const ThumbPath = "/thumbs/"

// ThumbSizes are the edge lengths a thumbnail fits in; fixed so that the
// disk cache stays small and every client hits the same entries.
var ThumbSizes = []int{128, 256, 512}

// thumbURL is the signed thumbnail URL of f at size, made from its media URL.
func (s *server) thumbURL(f lake.File, size int) string {
	u := s.Lake.URL(f)
	i := strings.Index(u, lake.MediaPath)
	if i < 0 || f.Type == lake.Other {
		return ""
	}
	return u[:i] + ThumbPath + strconv.Itoa(size) + "/" + u[i+len(lake.MediaPath):]
}

func validThumbSize(v string) (int, error) {
	n, err := strconv.Atoi(v)
	for _, s := range ThumbSizes {
		if err == nil && n == s {
			return n, nil
		}
	}
	return 0, errs.Invalid("size", "thumbnail size must be one of %v, got %q", ThumbSizes, v)
}

// signedThumbFile checks a thumbnail or crop link's signature and size and
// returns its file. The signature comes first: a stranger learns nothing,
// not even which sizes exist.
func (s *server) signedThumbFile(c *echo.Context) (lake.File, int, error) {
	name := c.Param("name")
	q := c.Request().URL.Query()
	if err := s.Lake.VerifyURL(name, q.Get("exp"), q.Get("sig")); err != nil {
		return lake.File{}, 0, err
	}
	size, err := validThumbSize(c.Param("size"))
	if err != nil {
		return lake.File{}, 0, err
	}
	f, err := s.Lake.File(c.Request().Context(), name)
	return f, size, err
}

// thumbnail answers a signed thumbnail URL from the disk cache, making the
// entry on a miss. Entries are named by content hash and size, so they never
// go stale: the ETag is that name and the browser may keep them for a year.
func (s *server) thumbnail(c *echo.Context) error {
	f, size, err := s.signedThumbFile(c)
	if err != nil {
		return err
	}
	etag := fmt.Sprintf(`"%s-%d"`, f.Blob, size)
	h := c.Response().Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, max-age=31536000, immutable")
	if c.Request().Header.Get("If-None-Match") == etag {
		return c.NoContent(http.StatusNotModified)
	}
	jpeg, err := s.Lake.Thumbnail(c.Request().Context(), f, size)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "image/jpeg", jpeg)
}
