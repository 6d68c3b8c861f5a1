package web

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// lakeAnnotationRoutes set and read the boxes of lake files outside
// annotation projects: what `framelake import --url` brings in from YOLO,
// COCO, VOC, CVAT or Label Studio data.
func (s *server) lakeAnnotationRoutes(g *echo.Group) {
	g.PUT("/lake/annotations", s.setLakeAnnotations)
	g.GET("/lake/files/:uniqueName/annotations", s.fileAnnotations)
}

// importBox is a box as requests send it: the shape of Upload Files with
// Labelling, plus the frame of a video, or another shape (docs/shapes.md).
type importBox struct {
	Frame      int             `json:"frame"`
	Label      string          `json:"label"`
	X          float64         `json:"x"`
	Y          float64         `json:"y"`
	Width      float64         `json:"width"`
	Height     float64         `json:"height"`
	Attributes json.RawMessage `json:"attributes"`
	shape.Geometry
}

// setLakeAnnotations makes each listed file's human boxes from operation
// (import:<name>) exactly the boxes given, in one transaction.
func (s *server) setLakeAnnotations(c *echo.Context) error {
	var req struct {
		Operation string `json:"operation"`
		Files     []struct {
			UniqueName  string      `json:"uniqueName"`
			Annotations []importBox `json:"annotations"`
		} `json:"files"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	if req.Files == nil {
		return errs.Invalid("files", "files is required: a list of {uniqueName, annotations}")
	}
	files := make([]lake.FileBoxes, len(req.Files))
	for i, f := range req.Files {
		files[i] = lake.FileBoxes{UniqueName: f.UniqueName}
		if f.Annotations != nil { // null: not labelled; [] labelled empty (lake.SetHumanBoxes)
			files[i].Boxes = make([]lake.Box, len(f.Annotations))
		}
		for j, b := range f.Annotations {
			files[i].Boxes[j] = lake.Box{Frame: b.Frame, Label: b.Label, X: b.X, Y: b.Y, W: b.Width, H: b.Height,
				Attributes: b.Attributes, Geometry: b.Geometry}
		}
	}
	res, err := s.Lake.SetHumanBoxes(c.Request().Context(), req.Operation, files)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// fileAnnotations lists a file's boxes, human and machine, with their
// source and operation; operation= (repeatable) narrows them. They come in
// pages (pageIndex, pageSize up to lake.MaxBoxPage, the default), with
// annotationCount saying how many there are: the route a list answer's
// boxesUrl points at when it inlines fewer.
func (s *server) fileAnnotations(c *echo.Context) error {
	ctx := c.Request().Context()
	f, err := s.Lake.File(ctx, c.Param("uniqueName"))
	if err != nil {
		return err
	}
	q := c.Request().URL.Query()
	var ops []string
	if o := multi(q["operation"]); len(o) > 0 {
		ops = o
	}
	idx, err := intParam(q.Get("pageIndex"), "pageIndex", 0, 0, lake.MaxPageIndex)
	if err != nil {
		return err
	}
	size, err := intParam(q.Get("pageSize"), "pageSize", lake.MaxBoxPage, 1, lake.MaxBoxPage)
	if err != nil {
		return err
	}
	boxes, n, err := s.Lake.FileBoxPage(ctx, f.Seq(), ops, idx, size)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"uniqueName": f.UniqueName, "width": f.Width, "height": f.Height,
		"annotations": boxes, "annotationCount": n, "pageIndex": idx, "pageSize": size})
}
