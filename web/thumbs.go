package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
)

// ThumbPath serves display thumbnails: ThumbPath + "<size>/<uniqueName>",
// signed like the file's media URL (same exp and sig): whoever may read a
// file's bytes may read a smaller copy of them, and <img> tags send no keys.
const ThumbPath = "/thumbs/"

// ThumbSizes are the edge lengths a thumbnail fits in; fixed so that the
// disk cache stays small and every client hits the same entries.
var ThumbSizes = []int{128, 256, 512}

// thumbSlots bounds thumbnails made at once: a grid asks for hundreds, and
// each decode holds memory and a core.
var thumbSlots = make(chan struct{}, max(1, runtime.NumCPU()))

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

// thumbnail answers a signed thumbnail URL from the disk cache, making the
// entry on a miss. Entries are named by content hash and size, so they never
// go stale: the ETag is that name and the browser may keep them for a year.
func (s *server) thumbnail(c *echo.Context) error {
	// The signature first: a stranger learns nothing, not even which sizes exist.
	name := c.Param("name")
	q := c.Request().URL.Query()
	if err := s.Lake.VerifyURL(name, q.Get("exp"), q.Get("sig")); err != nil {
		return err
	}
	size, err := validThumbSize(c.Param("size"))
	if err != nil {
		return err
	}
	f, err := s.Lake.File(c.Request().Context(), name)
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
	jpeg, err := s.thumbBytes(c.Request().Context(), f, size)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "image/jpeg", jpeg)
}

// thumbBytes returns f's thumbnail at size from the cache under ThumbDir
// (thumbs/<size>/<hash[:2]>/<hash>.jpg), making and storing it on a miss.
func (s *server) thumbBytes(ctx context.Context, f lake.File, size int) ([]byte, error) {
	var path string
	if s.ThumbDir != "" {
		path = filepath.Join(s.ThumbDir, strconv.Itoa(size), f.Blob[:2], f.Blob+".jpg")
		if b, err := os.ReadFile(path); err == nil {
			return b, nil
		}
	}
	select {
	case thumbSlots <- struct{}{}:
		defer func() { <-thumbSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b, err := makeThumb(ctx, s.Lake.Store().Path(f.Blob, f.Ext), f.Type, size)
	if err != nil || path == "" {
		return b, err
	}
	// Written whole then renamed: a reader never sees half an entry, and two
	// requests making the same entry at once both leave a complete file.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".thumb-*")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return nil, werr
	}
	return b, nil
}

// makeThumb shrinks an image with libvips (shrink-on-load) or takes a
// video's first frame, the frame its boxes of frame 0 belong to, with ffmpeg.
func makeThumb(ctx context.Context, path string, t lake.FileType, size int) ([]byte, error) {
	switch t {
	case lake.Image:
		b, err := vips.FitJPEG(path, size, 80)
		if err != nil { // libvips names the file: kept as the cause, not in the answer
			return nil, errs.Wrap(errs.UnsupportedMedia, err, "no thumbnail: the image does not decode")
		}
		return b, nil
	case lake.Video:
		scale := fmt.Sprintf("scale=w='min(%d,iw)':h='min(%d,ih)':force_original_aspect_ratio=decrease", size, size)
		var out, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-i", path, "-frames:v", "1", "-vf", scale,
			"-f", "image2pipe", "-c:v", "mjpeg", "-q:v", "4", "pipe:1")
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil || out.Len() == 0 {
			// ffmpeg names the file: kept as the cause, not in the answer.
			return nil, errs.Wrap(errs.UnsupportedMedia, fmt.Errorf("ffmpeg: %v %s", err, strings.TrimSpace(stderr.String())),
				"no poster frame: the video does not decode")
		}
		return out.Bytes(), nil
	}
	return nil, errs.New(errs.UnsupportedMedia, "", "no thumbnail for %s files", t)
}
