package web

import (
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/internal/auth"
)

// userRoutes let admins add people, change their role or password, and
// disable them (docs/team.md).
func (s *server) userRoutes(api *echo.Group) {
	admin := requireRole(auth.Admin)
	api.GET("/users", s.listUsers, admin)
	api.POST("/users", s.createUser, admin)
	api.PATCH("/users/:name", s.updateUser, admin)
}

func (s *server) listUsers(c *echo.Context) error {
	users, err := s.Keys.Users(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"users": users})
}

func (s *server) createUser(c *echo.Context) error {
	var req struct {
		Name     string    `json:"name"`
		Password string    `json:"password"`
		Role     auth.Role `json:"role"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	u, err := s.Keys.CreateUser(c.Request().Context(), req.Name, req.Password, req.Role)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, u)
}

// updateUser changes a person's role, password or disabled state; a
// disabled person's sessions end at once and their keys stop.
func (s *server) updateUser(c *echo.Context) error {
	var ch auth.UserChange
	if err := s.bindJSON(c, &ch); err != nil {
		return err
	}
	u, err := s.Keys.UpdateUser(c.Request().Context(), c.Param("name"), ch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, u)
}
