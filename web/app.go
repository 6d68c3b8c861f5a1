package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// appRoutes serves the web app, its thumbnails and who the caller is; the
// other routes it needs are with their resources (lake_items.go,
// lake_files.go, lake_patches.go), ordinary API routes documented for
// scripts too.
func (s *server) appRoutes(e *echo.Echo, api *echo.Group) {
	e.GET(ThumbPath+":size/:name", s.thumbnail)
	api.GET("/me", s.me)
	e.RouteNotFound("/*", s.app)
}

// me tells a client which key it holds, so a page can hide what the key may not do.
func (s *server) me(c *echo.Context) error {
	k := caller(c)
	return c.JSON(http.StatusOK, map[string]any{"key": k.Key, "name": k.Name, "role": k.Role})
}

// appBox is a box as the app draws it.
type appBox struct {
	Label      string      `json:"label"`
	X          float64     `json:"x"`
	Y          float64     `json:"y"`
	W          float64     `json:"width"`
	H          float64     `json:"height"`
	Source     lake.Source `json:"source"`
	Confidence *float64    `json:"confidence,omitempty"`
	Frame      int         `json:"frame"`
	// Type is set for annotations that are not plain boxes (docs/shapes.md),
	// with their geometry (appshapes.go): a class is drawn as a chip.
	Type shape.Type `json:"type,omitempty"`
	appGeometry
}

// appItem is a file with what a grid cell or the item view shows.
type appItem struct {
	fileView
	ThumbURL string   `json:"thumbUrl,omitempty"`
	Boxes    []appBox `json:"boxes"`
	BoxCount int      `json:"boxCount"`           // of the frame(s) shown; more than len(boxes) past the inline bound
	BoxesURL string   `json:"boxesUrl,omitempty"` // where all of them page, when boxes holds fewer`
	// TrackCount is a video's tracks, of every operation (the grid's badge); absent for other files.
	TrackCount *int `json:"trackCount,omitempty"`
	// Skeletons are the declared edges of its keypoints labels, to draw them.
	Skeletons map[string][][2]string `json:"skeletons,omitempty"`
	Tags      []string               `json:"tags,omitempty"`
	Metadata  json.RawMessage        `json:"metadata,omitempty"`
}

// appItems views files with their boxes of frame (every frame when frame < 0).
func (s *server) appItems(c *echo.Context, files []lake.File, thumb, frame int) ([]appItem, error) {
	seqs := make([]int64, len(files))
	for i, f := range files {
		seqs[i] = f.Seq()
	}
	// A list inlines a bounded number of boxes a file, the item view more.
	perFile := maxInlineBoxes
	if frame < 0 {
		perFile = maxItemBoxes
	}
	boxes, counts, err := s.Lake.InlineBoxes(c.Request().Context(), seqs, frame, perFile)
	if err != nil {
		return nil, err
	}
	var videos []int64
	for _, f := range files {
		if f.Type == lake.Video {
			videos = append(videos, f.Seq())
		}
	}
	tracks, err := s.Lake.TrackCounts(c.Request().Context(), videos)
	if err != nil {
		return nil, err
	}
	views := s.viewFiles(files)
	out := make([]appItem, len(files))
	known := map[string][][2]string{}
	for i, f := range files {
		bs := make([]appBox, len(boxes[f.Seq()]))
		for j, b := range boxes[f.Seq()] {
			bs[j] = appBox{Label: b.Label, X: b.X, Y: b.Y, W: b.W, H: b.H, Source: b.Source, Confidence: b.Confidence, Frame: b.Frame}
			if b.Type != shape.Box {
				bs[j].Type, bs[j].appGeometry = b.Type, geometryOf(b, frame >= 0)
			}
		}
		skel, err := s.skeletonEdges(c.Request().Context(), boxes[f.Seq()], known)
		if err != nil {
			return nil, err
		}
		out[i] = appItem{fileView: views[i], ThumbURL: s.thumbURL(f, thumb), Boxes: bs, BoxCount: counts[f.Seq()], Skeletons: skel}
		if f.Type == lake.Video {
			n := tracks[f.Seq()]
			out[i].TrackCount = &n
		}
		if out[i].BoxCount > len(bs) {
			out[i].BoxesURL = "/api/v1/lake/files/" + url.PathEscape(f.UniqueName) + "/annotations"
		}
	}
	return out, nil
}

// Boxes inlined a file: in a list answer, and in one file's item view.
const (
	maxInlineBoxes = 100
	maxItemBoxes   = 10_000
)

// queryNumber reads an optional numeric query parameter.
func queryNumber(q url.Values, field string) (*float64, error) {
	v := q.Get(field)
	if v == "" {
		return nil, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, errs.Invalid(field, "%s must be a number, got %q", field, v)
	}
	return &f, nil
}
