package web

import (
	"net/http"

	"github.com/labstack/echo/v5"
)

// selectionBody names files by a query, as the listing does: the web app
// sends "uniqueName IN (...)" for the items a person picked and the grid's
// query for "select all matching", never a list too long for one request.
type selectionBody struct {
	Query    string `json:"query"`
	ItemType string `json:"itemType"`
}

// tagSelection adds and removes tags on every file a query selects.
func (s *server) tagSelection(c *echo.Context) error {
	var b struct {
		selectionBody
		Add    []string `json:"add"`
		Remove []string `json:"remove"`
	}
	if err := s.bindJSON(c, &b); err != nil {
		return err
	}
	sel, err := b.selection()
	if err != nil {
		return err
	}
	n, err := s.Lake.TagSelection(c.Request().Context(), sel, b.Add, b.Remove)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"files": n})
}

// collectSelection adds every file a query selects to a collection, made if
// there is none of that name.
func (s *server) collectSelection(c *echo.Context) error {
	var b struct {
		selectionBody
		Collection string `json:"collection"`
	}
	if err := s.bindJSON(c, &b); err != nil {
		return err
	}
	sel, err := b.selection()
	if err != nil {
		return err
	}
	coll, added, err := s.Lake.CollectSelection(c.Request().Context(), sel, b.Collection)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"collectionId": coll.ID, "collection": coll.Name, "added": added})
}

// lakeSelectionRoutes tag or collect every file a query selects (the web
// app's grid; lake.Selection is the query).
func (s *server) lakeSelectionRoutes(g *echo.Group) {
	g.POST("/lake/selection/tags", s.tagSelection)
	g.POST("/lake/selection/collection", s.collectSelection)
}
