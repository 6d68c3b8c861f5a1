package web

import (
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
)

// commentRoutes serve comments pinned to frames and shapes (docs/team.md
// "Comments"): reviewers write them, annotators read and resolve them.
func (s *server) commentRoutes(g *echo.Group) {
	g.POST("/projects/:projectId/frames/:uniqueName/comments", s.addComment)
	g.GET("/projects/:projectId/frames/:uniqueName/comments", s.frameComments)
	g.GET("/tasks/:taskId/jobs/:number/comments", s.jobComments)
	g.PATCH("/comments/:commentId", s.resolveComment)
}

// addComment takes {"text", "shapeId"?, "frame"?, "job"?}. Reviewers
// comment, and annotators too (a question on a frame of their job).
func (s *server) addComment(c *echo.Context) error {
	var req struct {
		Text    string   `json:"text"`
		ShapeID string   `json:"shapeId"`
		Frame   *float64 `json:"frame"`
		Job     *float64 `json:"job"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	pid := c.Param("projectId")
	if err := s.projectAccess(c, pid, NeedReview); err != nil {
		if err := s.projectAccess(c, pid, NeedAnnotate); err != nil {
			return err
		}
	}
	nc := annotate.NewComment{Text: req.Text, ShapeID: req.ShapeID}
	for _, f := range []struct {
		name string
		v    *float64
		to   **int
	}{{"frame", req.Frame, &nc.Frame}, {"job", req.Job, &nc.Job}} {
		if f.v == nil {
			continue
		}
		n, err := wholeNumber(f.name, *f.v)
		if err != nil {
			return err
		}
		*f.to = &n
	}
	cm, err := s.Annotate.AddComment(c.Request().Context(), pid, c.Param("uniqueName"), nc, s.userName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cm)
}

func (s *server) frameComments(c *echo.Context) error {
	pid := c.Param("projectId")
	if err := s.projectAccess(c, pid, NeedView); err != nil {
		return err
	}
	cs, err := s.Annotate.FrameComments(c.Request().Context(), pid, c.Param("uniqueName"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"comments": cs})
}

func (s *server) jobComments(c *echo.Context) error {
	if _, err := s.taskAccess(c, NeedView); err != nil {
		return err
	}
	n, err := jobNumber(c)
	if err != nil {
		return err
	}
	cs, err := s.Annotate.JobComments(c.Request().Context(), c.Param("taskId"), n)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"comments": cs})
}

// resolveComment takes {"resolved": true|false}: the annotator of the
// comment's job or a reviewer (annotate.ResolveComment decides).
func (s *server) resolveComment(c *echo.Context) error {
	var req struct {
		Resolved *bool `json:"resolved"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	if req.Resolved == nil {
		return errs.Invalid("resolved", "resolved (true or false) is required")
	}
	pid, err := s.Annotate.CommentProject(c.Request().Context(), c.Param("commentId"))
	if err != nil {
		return err
	}
	m, err := s.member(c, pid)
	if err != nil {
		return err
	}
	cm, err := s.Annotate.ResolveComment(c.Request().Context(), c.Param("commentId"), *req.Resolved, m)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cm)
}
