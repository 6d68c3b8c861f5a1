package web

import (
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
)

// memberRoutes let curators and admins say who annotates and who reviews a
// project (docs/team.md "Roles"). They sit beside the rest group's project
// routes under the same rule (projectRoutes: curate).
func (s *server) memberRoutes(api *echo.Group) {
	rule := s.roleByMethod
	api.GET("/projects/:projectId/members", s.listMembers, rule)
	api.PUT("/projects/:projectId/members/:name", s.putMember, rule)
	api.DELETE("/projects/:projectId/members/:name", s.deleteMember, rule)
}

func (s *server) listMembers(c *echo.Context) error {
	ctx := c.Request().Context()
	pid := c.Param("projectId")
	if _, err := s.Annotate.Project(ctx, pid); err != nil {
		return err
	}
	ms, err := s.Keys.Members(ctx, pid)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"members": ms})
}

// putMember makes a person a member of the project: {"role": "annotator"}
// or "reviewer"; with no role, the person's own when it is one of them.
func (s *server) putMember(c *echo.Context) error {
	var req struct {
		Role auth.Role `json:"role"`
	}
	if c.Request().ContentLength != 0 {
		if err := s.bindJSON(c, &req); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	pid := c.Param("projectId")
	if _, err := s.Annotate.Project(ctx, pid); err != nil {
		return err
	}
	m, err := s.Keys.SetMember(ctx, pid, c.Param("name"), req.Role)
	if errs.Is(err, errs.NotFound) {
		return errs.New(errs.NotFound, "name", "no user %q: create them first (POST /api/v1/users)", c.Param("name"))
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, m)
}

func (s *server) deleteMember(c *echo.Context) error {
	if err := s.Keys.RemoveMember(c.Request().Context(), c.Param("projectId"), c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
