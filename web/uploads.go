package web

import (
	"errors"
	"math"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
)

func (s *server) initializeUpload(c *echo.Context) error {
	var req struct {
		CollectionName string   `json:"collectionName"`
		TotalFileCount *float64 `json:"totalFileCount"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	if req.CollectionName == "" {
		return errs.Invalid("collectionName", "collectionName is required")
	}
	if req.TotalFileCount == nil {
		return errs.Invalid("totalFileCount", "totalFileCount is required: the number of frames to upload, at least 1")
	}
	n, err := wholeNumber("totalFileCount", *req.TotalFileCount)
	if err != nil {
		return err
	}
	sess, err := s.Annotate.InitializeUpload(c.Request().Context(), c.Param("projectId"), req.CollectionName, n)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		UploadID       string `json:"uploadId"`
		LastSequenceID int    `json:"lastSequenceId"`
	}{sess.ID, sess.LastSequenceID})
}

// uploadFrame is Upload Files with Labelling: a multipart form with one
// files part, an optional sequenceNo and the frame's boxes as labels JSON.
func (s *server) uploadFrame(c *echo.Context) error {
	ctx := c.Request().Context()
	uploadID := c.Param("uploadId")
	if _, err := s.Annotate.Session(ctx, uploadID); err != nil {
		return err // before reading what may be a large body
	}
	form, err := s.readForm(c, map[string]bool{"sequenceNo": true, "labels": true}, map[string]bool{"files": true})
	if err != nil {
		return err
	}
	defer form.close()
	if len(form.files) != 1 {
		return errs.Invalid("files", "send exactly one files part (one frame), got %d", len(form.files))
	}
	raw, ok := form.values["labels"]
	if !ok {
		return errs.Invalid("labels", "labels is required: a JSON array of boxes, [] for none")
	}
	boxes, err := decodeBoxes(raw)
	if err != nil {
		return err
	}
	fr := annotate.Frame{Name: form.files[0].name, Open: form.files[0].open, Boxes: boxes}
	if v, ok := form.values["sequenceNo"]; ok {
		if v == "" {
			return errs.Invalid("sequenceNo", "sequenceNo is empty: leave the field out for one past the last received")
		}
		n, err := intParam(v, "sequenceNo", 0, 0, math.MaxInt32)
		if err != nil {
			return err
		}
		fr.SequenceNo = &n
	}
	res, err := s.Annotate.UploadFrame(ctx, uploadID, fr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, frameResultView{Success: true, UniqueName: res.UniqueName, SequenceNo: res.SequenceNo})
}

// frameResultView answers Upload Files with Labelling, fields in docs/spec/rest.md's order.
type frameResultView struct {
	Success    bool           `json:"success"`
	UniqueName string         `json:"uniqueName"`
	SequenceNo int            `json:"sequenceNo"`
	Task       *annotate.Task `json:"task,omitempty"`    // the frame's task, after an annotator's change
	Version    int            `json:"version,omitempty"` // the frame's version after an annotator's change
}

// decodeBoxes reads a labels value strictly; every error names the labels field.
func decodeBoxes(raw string) ([]annotate.Box, error) {
	var boxes []annotate.Box
	err := decodeStrict([]byte(raw), &boxes)
	var e *errs.Error
	switch {
	case err == nil && boxes == nil:
		return nil, errs.Invalid("labels", "labels must be a JSON array of boxes, [] for none")
	case errors.As(err, &e):
		msg := e.Message
		if e.Field != "" && e.Field != "labels" {
			msg = "box field " + e.Field + ": " + msg
		}
		return nil, errs.Invalid("labels", "labels: %s", msg)
	case err != nil:
		return nil, errs.Invalid("labels", "labels: %v", err)
	}
	return boxes, nil
}

// uploadRoutes are docs/spec/rest.md's Initialize Upload and Upload Files
// with Labelling: a project's upload session and its files.
func (s *server) uploadRoutes(g *echo.Group) {
	g.POST("/projects/:projectId/uploads", s.initializeUpload)
	g.POST("/uploads/:uploadId/files", s.uploadFrame)
}
