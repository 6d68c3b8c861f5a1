package web

import (
	"math"
	"net/http"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// assistRoutes serve the workspace's drawing assists (docs/assists.md):
// masks from a box and clicks by the segmentation model, and a mask's
// simplified polygon. Both write nothing; they need a write key, as the
// workspace they serve does.
func (s *server) assistRoutes(g *echo.Group) {
	g.POST("/assist/segment", s.assistSegment)
	g.POST("/assist/polygon", s.assistPolygon)
}

// segmentBody is POST /assist/segment's body.
type segmentBody struct {
	UniqueName string                  `json:"uniqueName"`
	Frame      *int                    `json:"frame"`
	Box        []float64               `json:"box"`
	Points     []analysis.SegmentPoint `json:"points"`
	ModelName  string                  `json:"model_name"`
}

// assistSegment runs the segmentation model (model_name, else the default)
// on a lake image or video frame and answers its masks, best first, with
// the milliseconds the server spent.
func (s *server) assistSegment(c *echo.Context) error {
	start := time.Now()
	svc, err := s.analysisService()
	if err != nil {
		return err
	}
	var b segmentBody
	if err := s.bindJSON(c, &b); err != nil {
		return err
	}
	if b.UniqueName == "" {
		return errs.Invalid("uniqueName", "uniqueName is required: the lake image (or video, with frame) to segment")
	}
	res, err := svc.Segment(c.Request().Context(), analysis.SegmentRequest{Model: b.ModelName, UniqueName: b.UniqueName,
		Frame: b.Frame, Box: b.Box, Points: b.Points})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"masks": res.Masks, "model": res.Model,
		"ms": float64(time.Since(start).Microseconds()) / 1000})
}

// MaxPolygonTolerance bounds the simplification tolerance, in pixels.
const MaxPolygonTolerance = 1000

// polygonBody is POST /assist/polygon's body.
type polygonBody struct {
	Mask      *shape.EncodedMask `json:"mask"`
	Tolerance *float64           `json:"tolerance"`
}

// assistPolygon answers a mask's polygon rings (parts and holes, read
// even-odd) simplified to a tolerance in pixels, and its vertex count.
func (s *server) assistPolygon(c *echo.Context) error {
	var b polygonBody
	if err := s.bindJSON(c, &b); err != nil {
		return err
	}
	if b.Mask == nil {
		return errs.Invalid("mask", "mask is required: {\"size\": [height, width], \"counts\": COCO RLE}")
	}
	tol := 1.0
	if b.Tolerance != nil {
		tol = *b.Tolerance
	}
	if math.IsNaN(tol) || tol < 0 || tol > MaxPolygonTolerance {
		return errs.Invalid("tolerance", "tolerance %g: give pixels from 0 to %d", tol, MaxPolygonTolerance)
	}
	if b.Mask.Size[0] <= 0 || b.Mask.Size[1] <= 0 || int64(b.Mask.Size[0])*int64(b.Mask.Size[1]) > maxAssistPixels {
		return errs.Invalid("mask", "mask size %v: give [height, width], at most %d pixels", b.Mask.Size, maxAssistPixels)
	}
	r, err := b.Mask.RLE()
	if err != nil {
		return errs.Invalid("mask", "mask: %v", err)
	}
	rings := shape.Outline(r, tol)
	if rings == nil {
		rings = [][]float64{}
	}
	return c.JSON(http.StatusOK, map[string]any{"polygon": rings, "vertices": shape.VertexCount(rings)})
}

// maxAssistPixels bounds a mask the polygon route traces: 100 Mpx, past any
// frame the lake serves (the tracer holds a few bytes a pixel).
const maxAssistPixels = 100 << 20
