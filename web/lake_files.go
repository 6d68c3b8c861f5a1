package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"mime"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// lakeFileRoutes are the routes of /lake/files/{uniqueName}: upload, read
// (what the web app's item view shows, on api: any key reads it), metadata
// and delete. Its annotations are in lake_annotations.go, its tracks and
// video frames in tracks.go.
func (s *server) lakeFileRoutes(rest, api *echo.Group) {
	rest.POST("/lake/files", s.uploadFiles)
	api.GET("/lake/files/:uniqueName", s.lakeFile)
	rest.PATCH("/lake/files/:uniqueName/metadata", s.patchFileMetadata)
	rest.DELETE("/lake/files/:uniqueName", s.deleteFile)
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
// optional collectionName, metadata, collectionMetadata and skipExisting
// fields. Files that fail their checks are listed as rejected; a single-file
// upload that is rejected fails with the reason as its error instead.
func (s *server) uploadFiles(c *echo.Context) error {
	form, err := s.readForm(c, map[string]bool{"collectionName": true, "metadata": true, "skipExisting": true,
		"collectionMetadata": true}, map[string]bool{"files": true})
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
	if err := withCollectionMetadata(&opt, form.values["collectionMetadata"]); err != nil {
		return err
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

// withCollectionMetadata merges an upload's collectionMetadata into its
// collection in the transaction that stores the files, so the two land
// together; when no file is stored, nothing changes.
func withCollectionMetadata(opt *lake.AddOptions, raw string) error {
	if raw == "" {
		return nil
	}
	if opt.Collection == "" {
		return errs.Invalid("collectionMetadata", "collectionMetadata needs collectionName: it is stored on that collection")
	}
	patch := json.RawMessage(raw)
	if err := lake.CheckCollectionMetadata("collectionMetadata", patch); err != nil {
		return err
	}
	name := opt.Collection
	opt.InTx = func(ctx context.Context, tx *sql.Tx, _ []lake.File) error {
		return lake.PatchCollectionMetadataTx(ctx, tx, name, patch)
	}
	return nil
}

// fileMetadataView and collectionMetadataView answer a metadata patch with
// the object it changed and all of its metadata after the merge.
type fileMetadataView struct {
	ID         string          `json:"id"`
	UniqueName string          `json:"uniqueName"`
	Name       string          `json:"name"`
	Metadata   json.RawMessage `json:"metadata"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// patchFileMetadata merges a JSON merge patch (RFC 7396) into a file's metadata.
func (s *server) patchFileMetadata(c *echo.Context) error {
	patch, err := s.readPatch(c)
	if err != nil {
		return err
	}
	f, err := s.Lake.PatchFileMetadata(c.Request().Context(), c.Param("uniqueName"), patch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, fileMetadataView{ID: f.ID, UniqueName: f.UniqueName, Name: f.Name,
		Metadata: f.Metadata, UpdatedAt: f.UpdatedAt})
}

// readPatch reads a metadata patch body: application/merge-patch+json (RFC
// 7396's type) or application/json. The lake checks that it is a JSON object.
func (s *server) readPatch(c *echo.Context) (json.RawMessage, error) {
	return s.readBody(c, "application/merge-patch+json", "application/json")
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
	ctx := c.Request().Context()
	if to, err := s.Lake.MediaRedirect(ctx, f); err != nil {
		return err
	} else if to != "" {
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.Redirect(http.StatusFound, to)
	}
	rc, err := s.Lake.OpenMedia(ctx, f)
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

func (s *server) deleteFile(c *echo.Context) error {
	return answerDelete(c)(s.Lake.DeleteFile(c.Request().Context(), c.Param("uniqueName")))
}

// lakeFile is one file with its thumbnail URL, tags, metadata and every box.
func (s *server) lakeFile(c *echo.Context) error {
	ctx := c.Request().Context()
	f, err := s.Lake.File(ctx, c.Param("uniqueName"))
	if err != nil {
		return err
	}
	items, err := s.appItems(c, []lake.File{f}, 512, -1)
	if err != nil {
		return err
	}
	d, err := s.Lake.FileDetails(ctx, f.UniqueName, map[string]bool{"Tags": true})
	if err != nil {
		return err
	}
	it := items[0]
	it.Tags, _ = d["Tags"].([]string)
	it.Metadata = f.Metadata
	return c.JSON(http.StatusOK, it)
}
