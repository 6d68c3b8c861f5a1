package web

import (
	"math"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
)

func (s *server) taskList(c *echo.Context) error {
	q := c.Request().URL.Query()
	tq := annotate.TaskQuery{ProjectID: q.Get("projectId")}
	if tq.ProjectID == "" {
		return errs.Invalid("projectId", "projectId is required")
	}
	var err error
	if tq.PageIndex, err = intParam(q.Get("pageIndex"), "pageIndex", 0, 0, math.MaxInt32); err != nil {
		return err
	}
	if tq.PageSize, err = intParam(q.Get("pageSize"), "pageSize", annotate.DefaultTaskPageSize, 1,
		annotate.MaxTaskPageSize); err != nil {
		return err
	}
	tasks, total, err := s.Annotate.Tasks(c.Request().Context(), tq)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"taskCount": total, "taskList": tasks})
}

func (s *server) getTask(c *echo.Context) error {
	t, err := s.Annotate.Task(c.Request().Context(), c.Param("taskId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

// taskRoutes are docs/spec/rest.md's Get Task List and a task; making,
// updating and working in tasks is in workspace.go.
func (s *server) taskRoutes(g *echo.Group) {
	g.GET("/tasks", s.taskList)
	g.GET("/tasks/:taskId", s.getTask)
}
