package web

import (
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/labelimport"
)

// importArchive takes a zip, tar or tar.gz archive of labelled data, as a
// multipart "file" part or as the raw body (fields then in the query), and
// queues the job that imports it; the job's result is import --json's summary.
func (s *server) importArchive(c *echo.Context) error {
	r := c.Request()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	fields := []string{"format", "collection", "project", "metadata", "name"}
	var body io.Reader
	values := map[string]string{}
	if mt == "multipart/form-data" {
		allowed := map[string]bool{}
		for _, f := range fields {
			allowed[f] = true
		}
		form, err := s.readForm(c, allowed, map[string]bool{"file": true})
		if err != nil {
			return err
		}
		defer form.close()
		if len(form.files) != 1 {
			return errs.Invalid("file", "send one file part: the archive (zip, tar or tar.gz), got %d", len(form.files))
		}
		rc, err := form.files[0].open()
		if err != nil {
			return err
		}
		defer rc.Close()
		values, body = form.values, rc
		if values["name"] == "" {
			values["name"] = form.files[0].name
		}
	} else {
		q := r.URL.Query()
		for _, f := range fields {
			values[f] = q.Get(f)
		}
		body = http.MaxBytesReader(c.Response(), r.Body, s.opt.MaxUploadBytes)
	}
	jobID, err := s.Imports.Enqueue(r.Context(), labelimport.Request{Format: values["format"],
		Collection: values["collection"], Project: values["project"], Metadata: values["metadata"],
		Name: values["name"]}, body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"jobId": jobID})
}

// lakeImportRoutes start an archive import into the lake as a job.
func (s *server) lakeImportRoutes(g *echo.Group) {
	g.POST("/lake/imports", s.importArchive)
}
