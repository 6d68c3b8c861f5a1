package web

import (
	"math"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// deleteRoutes are the project list and the deletes. Each delete answers
// what it removed and what it kept (lake.Deleted); deleting needs a write
// key (roleByMethod). The semantics are the domain packages' (lake, dataset,
// annotate package comments).
func (s *server) deleteRoutes(g *echo.Group) {
	g.GET("/projects", s.projectList)
	g.DELETE("/projects/:projectId", s.deleteProject)
	g.DELETE("/lake/files/:uniqueName", s.deleteFile)
	g.DELETE("/lake/collections/:collectionId", s.deleteCollection)
	g.DELETE("/datasets/:datasetGroupId", s.deleteDataset)
	g.DELETE("/dataset-versions/:datasetVersionId", s.deleteDatasetVersion)
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

// withFiles reads the files query parameter of the deletes that take one.
func withFiles(c *echo.Context) (bool, error) {
	raw := c.QueryParam("files")
	if raw == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, errs.Invalid("files", "files must be true or false, got %q", raw)
	}
	return v, nil
}

func (s *server) deleteFile(c *echo.Context) error {
	return answerDelete(c)(s.Lake.DeleteFile(c.Request().Context(), c.Param("uniqueName")))
}

func (s *server) deleteCollection(c *echo.Context) error {
	files, err := withFiles(c)
	if err != nil {
		return err
	}
	return answerDelete(c)(s.Lake.DeleteCollection(c.Request().Context(), c.Param("collectionId"), files))
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

func (s *server) deleteDataset(c *echo.Context) error {
	return answerDelete(c)(s.Datasets.DeleteDataset(c.Request().Context(), c.Param("datasetGroupId")))
}

func (s *server) deleteDatasetVersion(c *echo.Context) error {
	return answerDelete(c)(s.Datasets.DeleteVersion(c.Request().Context(), c.Param("datasetVersionId")))
}

// answerDelete sends a delete's counts, or its error.
func answerDelete(c *echo.Context) func(lake.Deleted, error) error {
	return func(d lake.Deleted, err error) error {
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, d)
	}
}
