package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/lake"
)

type collectionMetadataView struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	ContentType lake.CollectionType `json:"contentType"`
	Metadata    json.RawMessage     `json:"metadata"`
	UpdatedAt   time.Time           `json:"updatedAt"`
}

// patchCollectionMetadata merges a JSON merge patch into a collection's metadata.
func (s *server) patchCollectionMetadata(c *echo.Context) error {
	patch, err := s.readPatch(c)
	if err != nil {
		return err
	}
	col, err := s.Lake.PatchCollectionMetadata(c.Request().Context(), c.Param("collectionId"), patch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, collectionMetadataView{ID: col.ID, Name: col.Name, ContentType: col.Type,
		Metadata: col.Metadata, UpdatedAt: col.UpdatedAt})
}

func (s *server) deleteCollection(c *echo.Context) error {
	files, err := withFiles(c)
	if err != nil {
		return err
	}
	return answerDelete(c)(s.Lake.DeleteCollection(c.Request().Context(), c.Param("collectionId"), files))
}

// lakeCollectionRoutes are the routes of /lake/collections/{collectionId}.
func (s *server) lakeCollectionRoutes(g *echo.Group) {
	g.PATCH("/lake/collections/:collectionId/metadata", s.patchCollectionMetadata)
	g.DELETE("/lake/collections/:collectionId", s.deleteCollection)
}
