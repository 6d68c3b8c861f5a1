package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// historyRoutes read the history of frames' shapes (docs/team.md).
func (s *server) historyRoutes(g *echo.Group) {
	g.GET("/lake/history", s.history)
	g.GET("/lake/history/:changeId/shapes", s.historyVersion)
}

// history lists changes, newest first: of one file (uniqueName=, and
// frame=), one person (who=), a time range (since=, until=, RFC 3339),
// limit= at most 1000.
func (s *server) history(c *echo.Context) error {
	q := c.Request().URL.Query()
	h := lake.HistoryQuery{UniqueName: q.Get("uniqueName"), Who: q.Get("who")}
	if v := q.Get("frame"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errs.Invalid("frame", "frame must be a frame number from 0, got %q", v)
		}
		h.Frame = &n
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &h.Since}, {"until", &h.Until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return errs.Invalid(p.name, "%s must be a time like 2026-11-29T10:00:00Z, got %q", p.name, v)
			}
			*p.to = t
		}
	}
	limit, err := intParam(q.Get("limit"), "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	h.Limit = limit
	changes, err := s.Lake.History(c.Request().Context(), h)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"changes": changes})
}

// historyVersion answers the frame's shapes (of the change's operation) as
// they were right after a change: what a restore would write back.
func (s *server) historyVersion(c *echo.Context) error {
	shapes, err := s.Lake.FrameVersion(c.Request().Context(), c.Param("changeId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"changeId": c.Param("changeId"), "shapes": shapes})
}
