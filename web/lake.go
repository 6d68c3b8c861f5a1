package web

import (
	"encoding/json"
	"mime"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

func (s *server) lakeRoutes(g *echo.Group) {
	g.POST("/lake/files", s.uploadFiles)
	s.lakeFunctions()
}

// fileView is a stored file as the API shows it.
type fileView struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	UniqueName string    `json:"uniqueName"`
	URL        string    `json:"url"`
	Type       string    `json:"type"`
	FileSize   int64     `json:"fileSize"`
	Width      int       `json:"width,omitempty"`
	Height     int       `json:"height,omitempty"`
	FrameCount int       `json:"frameCount,omitempty"`
	FrameRate  float64   `json:"frameRate,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
}

func (s *server) viewFiles(fs []lake.File) []fileView {
	out := make([]fileView, len(fs))
	for i, f := range fs {
		out[i] = fileView{ID: f.ID, Name: f.Name, UniqueName: f.UniqueName, URL: s.Lake.URL(f), Type: string(f.Type),
			FileSize: f.Size, Width: f.Width, Height: f.Height, FrameCount: f.FrameCount, FrameRate: f.FrameRate,
			CreatedAt: f.CreatedAt}
	}
	return out
}

type uploadResult struct {
	Stored   []fileView       `json:"stored"`
	Skipped  []fileView       `json:"skipped"`
	Rejected []lake.Rejection `json:"rejected"`
}

// uploadFiles stores the files parts of a multipart form in the lake, with
// optional collectionName, metadata and skipExisting fields. Files that fail
// their checks are listed as rejected; a single-file upload that is rejected
// fails with the reason as its error instead.
func (s *server) uploadFiles(c *echo.Context) error {
	form, err := s.readForm(c, map[string]bool{"collectionName": true, "metadata": true, "skipExisting": true},
		map[string]bool{"files": true})
	if err != nil {
		return err
	}
	defer form.close()
	if len(form.files) == 0 {
		return errs.Invalid("files", "files is required: send one or more files parts")
	}
	opt := lake.AddOptions{Collection: form.values["collectionName"]}
	switch v := form.values["skipExisting"]; v {
	case "true":
		opt.SkipExisting = true
	case "", "false":
	default:
		return errs.Invalid("skipExisting", "skipExisting must be true or false, got %q", v)
	}
	if m := form.values["metadata"]; m != "" {
		opt.Metadata = json.RawMessage(m)
	}
	ups := make([]lake.Upload, len(form.files))
	for i, f := range form.files {
		ups[i] = lake.Upload{Name: f.name, Open: f.open}
	}
	res, err := s.Lake.Add(c.Request().Context(), opt, ups)
	if err != nil {
		return err
	}
	if len(ups) == 1 && len(res.Rejected) == 1 {
		r := res.Rejected[0]
		return errs.New(r.Code, "files", "%q: %s", r.Name, r.Reason)
	}
	return c.JSON(http.StatusOK, uploadResult{Stored: s.viewFiles(res.Stored), Skipped: s.viewFiles(res.Skipped),
		Rejected: nonNil(res.Rejected)})
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// media serves a file's bytes for a signed URL, with ranges (video seeking)
// and conditional requests on the content hash.
func (s *server) media(c *echo.Context) error {
	name := c.Param("name")
	q := c.Request().URL.Query()
	if err := s.Lake.VerifyURL(name, q.Get("exp"), q.Get("sig")); err != nil {
		return err
	}
	f, err := s.Lake.File(c.Request().Context(), name)
	if err != nil {
		return err
	}
	rc, err := s.Lake.OpenMedia(f)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := c.Response().Header()
	h.Set("Content-Type", f.MIME)
	h.Set("ETag", `"`+f.Blob+`"`)
	h.Set("Cache-Control", "private, max-age=3600")
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": f.Name}))
	http.ServeContent(c.Response(), c.Request(), f.Name, f.UpdatedAt, rc)
	return nil
}
