package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// projectRoutes are the project operations of docs/spec/rest.md (Create
// Project, Download Annotations), the project list, labels, a frame's
// annotations and the delete. A project's uploads are in uploads.go, its
// tasks in tasks.go and workspace.go, members in members.go, jobs in
// labeljobs.go, video tracks in videotask.go.
func (s *server) projectRoutes(g *echo.Group) {
	g.GET("/projects", s.projectList)
	g.POST("/projects", s.createProject)
	g.GET("/projects/:projectId", s.getProject)
	g.DELETE("/projects/:projectId", s.deleteProject)
	g.PUT("/projects/:projectId/labels/:labelName", s.putLabel)
	g.GET("/projects/:projectId/annotations", s.downloadAnnotations)
	g.PUT("/projects/:projectId/frames/:uniqueName/annotations", s.replaceFrameAnnotations)
}

func (s *server) createProject(c *echo.Context) error {
	var req struct {
		ProjectName string           `json:"projectName"`
		ContentType *float64         `json:"contentType"`
		Labels      []annotate.Label `json:"labels"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	if req.ContentType == nil {
		return errs.Invalid("contentType", "contentType is required: 1 (video) or 2 (image)")
	}
	ct, err := wholeNumber("contentType", *req.ContentType)
	if err != nil {
		return err
	}
	p, err := s.Annotate.CreateProject(c.Request().Context(), annotate.NewProject{Name: req.ProjectName,
		ContentType: annotate.ContentType(ct), Labels: req.Labels})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"projectId": p.ID})
}

func (s *server) getProject(c *echo.Context) error {
	p, err := s.Annotate.Project(c.Request().Context(), c.Param("projectId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, p)
}

// putLabel sets what a project's label declares (attributes, keypoints),
// adding the label when the project lacks it; the body is a label object,
// whose labelName, when given, is the path's.
func (s *server) putLabel(c *echo.Context) error {
	var req struct {
		Name        *string                  `json:"labelName"`
		Description *string                  `json:"labelDescription"`
		Attributes  []annotate.AttributeSpec `json:"attributes"`
		*shape.Skeleton
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	name := c.Param("labelName")
	if req.Name != nil && *req.Name != name {
		return errs.Invalid("labelName", "labelName %q is not the label of the path (%q)", *req.Name, name)
	}
	l, err := s.Annotate.PutLabel(c.Request().Context(), c.Param("projectId"), name,
		annotate.LabelChange{Description: req.Description, Attributes: req.Attributes, Skeleton: req.Skeleton})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, l)
}

// wholeNumber accepts 2 and 2.0 (clients that send every number as a double).
func wholeNumber(field string, f float64) (int, error) {
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, errs.Invalid(field, "%s must be a whole number, got %g", field, f)
	}
	return int(f), nil
}

// writeArray writes a JSON array as the database built it, [] for none.
func writeArray(w io.Writer, arr json.RawMessage) error {
	if len(arr) == 0 {
		arr = json.RawMessage("[]")
	}
	_, err := w.Write(arr)
	return err
}

func (s *server) downloadAnnotations(c *echo.Context) error {
	q := c.Request().URL.Query()
	dq := annotate.DownloadQuery{ProjectID: c.Param("projectId"), TaskIDs: multi(q["taskList"]), Labels: multi(q["labels"])}
	var err error
	if dq.PageIndex, err = intParam(q.Get("pageIndex"), "pageIndex", 0, 0, math.MaxInt32); err != nil {
		return err
	}
	if dq.PageSize, err = intParam(q.Get("pageSize"), "pageSize", annotate.DefaultDownloadPageSize, 1,
		annotate.MaxDownloadPageSize); err != nil {
		return err
	}
	d, err := s.Annotate.Download(c.Request().Context(), dq)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().WriteHeader(http.StatusOK)
	return writeDownload(c.Response(), d)
}

// writeDownload streams a Download as encoding/json would write it, but
// copies each frame's annotations (already JSON, built by the database)
// as they are: a full page is megabytes, which encoding/json would buffer
// whole and re-validate byte by byte.
func writeDownload(w io.Writer, d annotate.Download) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 1024)
	meta, err := marshalJSON(d.MetaData)
	if err != nil {
		return err
	}
	b = fmt.Appendf(b, `{"pageIndex":%d,"pageSize":%d,"taskCount":%d,"metaData":%s,"data":[`,
		d.PageIndex, d.PageSize, d.TaskCount, meta)
	for i, t := range d.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"taskId":`...)
		b = appendString(b, t.TaskID)
		b = append(b, `,"taskName":`...)
		b = appendString(b, t.TaskName)
		b = append(b, `,"frames":[`...)
		for j, f := range t.Frames {
			if j > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"frameId":%d,"uniqueName":`, f.FrameID)
			b = appendString(b, f.UniqueName)
			b = append(b, `,"url":`...)
			b = appendString(b, f.URL)
			b = fmt.Appendf(b, `,"width":%d,"height":%d,"annotations":`, f.Width, f.Height)
			if _, err := bw.Write(b); err != nil {
				return err
			}
			if err := writeArray(bw, f.Annotations); err != nil {
				return err
			}
			if _, err := bw.WriteString(`,"shapes":`); err != nil {
				return err
			}
			if err := writeArray(bw, f.Shapes); err != nil {
				return err
			}
			b = append(b[:0], '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// appendString appends s as a JSON string, escaped as the answers' encoder does.
func appendString(b []byte, s string) []byte {
	q, _ := marshalJSON(s)
	return append(b, q...)
}

// replaceFrameAnnotations takes a JSON array of the box objects of Upload
// Files with Labelling and makes them the frame's boxes in the project.
func (s *server) replaceFrameAnnotations(c *echo.Context) error {
	var boxes []annotate.Box
	if err := s.bindJSON(c, &boxes); err != nil {
		return err
	}
	if boxes == nil {
		return errs.Invalid("labels", "send a JSON array of boxes, [] to remove them all")
	}
	version, err := ifMatch(c)
	if err != nil {
		return err
	}
	res, err := s.replaceInJob(c, version, boxes) // under the jobs' rules (web/labeljobs.go)
	return s.frameEdited(c, res, err)
}

func (s *server) projectList(c *echo.Context) error {
	q := c.Request().URL.Query()
	var pq annotate.ProjectQuery
	var err error
	if pq.PageIndex, err = intParam(q.Get("pageIndex"), "pageIndex", 0, 0, math.MaxInt32); err != nil {
		return err
	}
	if pq.PageSize, err = intParam(q.Get("pageSize"), "pageSize", annotate.DefaultProjectPageSize, 1,
		annotate.MaxProjectPageSize); err != nil {
		return err
	}
	list, total, err := s.Annotate.ListProjects(c.Request().Context(), pq)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"projectCount": total, "projectList": list})
}

func (s *server) deleteProject(c *echo.Context) error {
	files, err := withFiles(c)
	if err != nil {
		return err
	}
	ctx, pid := c.Request().Context(), c.Param("projectId")
	d, err := s.Annotate.DeleteProject(ctx, pid, files)
	if err == nil { // its memberships go with it (auth keeps them: docs/team.md, Roles)
		err = s.Keys.DeleteProjectMembers(ctx, pid)
	}
	return answerDelete(c)(d, err)
}
