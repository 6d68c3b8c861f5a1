package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/evaluate/tracking"
	"github.com/framelake/framelake/format/trackio"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
	"github.com/framelake/framelake/propagate"
)

// maxTracksBody bounds a PUT of tracks: a MOT gt.txt of 18,000 frames with
// 50 objects each is about 40 MB.
const maxTracksBody = 256 << 20

// trackRoutes read and write a video's tracks (docs/tracks.md).
func (s *server) trackRoutes(g *echo.Group) {
	g.GET("/lake/files/:uniqueName/tracks", s.getTracks)
	g.PUT("/lake/files/:uniqueName/tracks", s.putTracks)
	g.GET("/lake/files/:uniqueName/tracks/metrics", s.trackMetrics)
	g.GET("/lake/files/:uniqueName/frames/:frame", s.videoFrame)
	g.PUT("/lake/files/:uniqueName/tracks/:number", s.putTrack)
	g.DELETE("/lake/files/:uniqueName/tracks/:number", s.deleteTrack)
	g.POST("/lake/files/:uniqueName/tracks/:number/propagate", s.propagateTrack)
	s.videoTaskRoutes(g)
}

// propagateTrack queues a job that extends a box track from one of its
// keyframes with the classical tracker: {"from", "backward", "every",
// "minScore", "maxFrames"}; the job's result says where it stopped and why.
func (s *server) propagateTrack(c *echo.Context) error {
	req, err := s.readPropagation(c)
	if err != nil {
		return err
	}
	return s.startPropagation(c, req)
}

// readPropagation reads a propagation's body, the path's video and track
// number, and operation=.
func (s *server) readPropagation(c *echo.Context) (propagate.Request, error) {
	n, op, err := trackNumber(c)
	if err != nil {
		return propagate.Request{}, err
	}
	var req propagate.Request
	if err := s.bindJSON(c, &req); err != nil {
		return req, err
	}
	req.UniqueName, req.Operation, req.Number = c.Param("uniqueName"), op, n
	req.Editor = nil // the project's route sets it, never a body
	return req, nil
}

func (s *server) startPropagation(c *echo.Context, req propagate.Request) error {
	if s.Propagate == nil {
		return errs.New(errs.Unavailable, "", "propagation is not available in this server")
	}
	id, err := s.Propagate.Propagate(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"jobId": id})
}

// trackNumber reads the :number of a track route and its operation=.
func trackNumber(c *echo.Context) (int, string, error) {
	n, err := strconv.Atoi(c.Param("number"))
	if err != nil || n < 0 {
		return 0, "", errs.Invalid("number", "a track's number is a whole number from 0, got %q", c.Param("number"))
	}
	return n, c.Request().URL.Query().Get("operation"), nil
}

// putTrack replaces (or adds) one track of an operation, leaving its other
// tracks: {"label", "keyframes", "outside"}; the number is the path's.
func (s *server) putTrack(c *echo.Context) error {
	t, op, err := s.readTrack(c)
	if err != nil {
		return err
	}
	got, err := s.Lake.SetTrack(c.Request().Context(), c.Param("uniqueName"), lake.Human, op, t)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toTrackJSON(got))
}

// readTrack reads one track's body, numbered by the path, and operation=.
func (s *server) readTrack(c *echo.Context) (lake.Track, string, error) {
	n, op, err := trackNumber(c)
	if err != nil {
		return lake.Track{}, "", err
	}
	var req trackJSON
	if err := s.bindJSON(c, &req); err != nil {
		return lake.Track{}, "", err
	}
	req.Number = n
	return req.track(), op, nil
}

func (s *server) deleteTrack(c *echo.Context) error {
	n, op, err := trackNumber(c)
	if err != nil {
		return err
	}
	if err := s.Lake.DeleteTrack(c.Request().Context(), c.Param("uniqueName"), op, n); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// videoFrame answers one frame of a video as a JPEG, decoded exactly by the
// stored frame rate (size= bounds its longer side): what the workspace
// shows of a lake video, stepping a frame at a time.
func (s *server) videoFrame(c *echo.Context) error {
	ctx := c.Request().Context()
	f, err := s.Lake.File(ctx, c.Param("uniqueName"))
	if err != nil {
		return err
	}
	return s.answerVideoFrame(c, f)
}

// answerVideoFrame answers frame :frame of video f (size= bounds its
// longer side).
func (s *server) answerVideoFrame(c *echo.Context, f lake.File) error {
	ctx := c.Request().Context()
	n, err := strconv.Atoi(c.Param("frame"))
	if err != nil {
		return errs.Invalid("frame", "frame must be a frame number from 0, got %q", c.Param("frame"))
	}
	size, err := intParam(c.Request().URL.Query().Get("size"), "size", 0, 0, lake.MaxFrameSize)
	if err != nil {
		return err
	}
	b, err := s.Lake.VideoFrame(ctx, f, n, size)
	if err != nil {
		return err
	}
	// A frame of a blob never changes: the browser may keep it.
	c.Response().Header().Set("Cache-Control", "private, max-age=86400")
	return c.Blob(http.StatusOK, "image/jpeg", b)
}

// keyframeJSON is a keyframe as the API writes it: the annotation's fields
// without the track's label, source and operation.
type keyframeJSON struct {
	Frame      int             `json:"frame"`
	X          float64         `json:"x"`
	Y          float64         `json:"y"`
	Width      float64         `json:"width"`
	Height     float64         `json:"height"`
	Confidence *float64        `json:"confidence,omitempty"`
	Attributes json.RawMessage `json:"attributes,omitempty"`
	shape.Geometry
}

type trackJSON struct {
	ID         string         `json:"id,omitempty"` // read only, as are type, source, operation and the span
	Number     int            `json:"number"`
	Label      string         `json:"label"`
	Type       shape.Type     `json:"type,omitempty"`
	Source     lake.Source    `json:"source,omitempty"`
	Operation  string         `json:"operation,omitempty"`
	Keyframes  []keyframeJSON `json:"keyframes"`
	Outside    []int          `json:"outside"`
	FirstFrame int            `json:"firstFrame"`
	LastFrame  int            `json:"lastFrame"`
}

func toTrackJSON(t lake.Track) trackJSON {
	out := trackJSON{ID: t.ID, Number: t.Number, Label: t.Label, Type: t.Type, Source: t.Source, Operation: t.Operation,
		Outside: t.Outside, FirstFrame: t.FirstFrame, LastFrame: t.LastFrame, Keyframes: make([]keyframeJSON, len(t.Keyframes))}
	for i, k := range t.Keyframes {
		out.Keyframes[i] = keyframeJSON{Frame: k.Frame, X: k.X, Y: k.Y, Width: k.W, Height: k.H, Confidence: k.Confidence,
			Attributes: k.Attributes, Geometry: k.Geometry}
	}
	return out
}

func (t trackJSON) track() lake.Track {
	out := lake.Track{Number: t.Number, Label: t.Label, Outside: t.Outside, Keyframes: make([]lake.Box, len(t.Keyframes))}
	for i, k := range t.Keyframes {
		out.Keyframes[i] = lake.Box{Frame: k.Frame, X: k.X, Y: k.Y, W: k.Width, H: k.Height, Confidence: k.Confidence,
			Attributes: k.Attributes, Geometry: k.Geometry}
	}
	return out
}

// getTracks answers a video's tracks as JSON, or as MOT's gt.txt with
// format=mot, or CVAT for video 1.1 XML with format=cvat; with frame=N, the shapes of every track on frame N
// (keyframes and interpolated). operation= (repeatable) narrows them.
func (s *server) getTracks(c *echo.Context) error {
	var ops []string
	if o := multi(c.Request().URL.Query()["operation"]); len(o) > 0 {
		ops = o
	}
	return s.answerTracks(c, c.Param("uniqueName"), ops)
}

// answerTracks answers the video's tracks of operations ops (all when nil)
// as getTracks describes.
func (s *server) answerTracks(c *echo.Context, name string, ops []string) error {
	ctx := c.Request().Context()
	q := c.Request().URL.Query()
	if raw := q.Get("frame"); raw != "" {
		frame, err := strconv.Atoi(raw)
		if err != nil || frame < 0 {
			return errs.Invalid("frame", "frame must be a frame number from 0, got %q", raw)
		}
		shapes, err := s.Lake.FrameTracks(ctx, name, frame, ops)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"uniqueName": name, "frame": frame, "shapes": shapes})
	}
	tracks, err := s.Lake.Tracks(ctx, name, ops)
	if err != nil {
		return err
	}
	switch q.Get("format") {
	case "", "json":
	case "mot":
		c.Response().Header().Set(echo.HeaderContentType, "text/plain; charset=utf-8")
		c.Response().WriteHeader(http.StatusOK)
		return trackio.WriteMOT(c.Response(), tracks)
	case "cvat":
		f, err := s.Lake.File(ctx, name)
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderContentType, "application/xml; charset=utf-8")
		c.Response().WriteHeader(http.StatusOK)
		return trackio.WriteCVAT(c.Response(), tracks, trackio.VideoInfo{Frames: f.FrameCount, Width: f.Width, Height: f.Height})
	default:
		return errs.Invalid("format", "format must be json, mot or cvat, got %q", q.Get("format"))
	}
	out := make([]trackJSON, len(tracks))
	for i, t := range tracks {
		out[i] = toTrackJSON(t)
	}
	return c.JSON(http.StatusOK, map[string]any{"uniqueName": name, "tracks": out})
}

// putTracks makes the video's tracks from an operation exactly those sent
// (human): JSON {"operation", "tracks"}, or with format=mot a gt.txt body
// (label= names rows without a class), format=cvat a CVAT for video XML or
// format=labelstudio a Label Studio JSON export (its videorectangles), and
// operation in the query.
func (s *server) putTracks(c *echo.Context) error {
	if c.QueryParam("format") == "mot" {
		return s.importMOT(c)
	}
	op, tracks, err := s.readTracks(c)
	if err != nil {
		return err
	}
	if err := s.setTracks(c, c.Param("uniqueName"), op, tracks, nil); err != nil {
		return err
	}
	return answerTracksPut(c, tracks)
}

// answerTracksPut says how many tracks and keyframes a PUT of tracks wrote.
func answerTracksPut(c *echo.Context, tracks []lake.Track) error {
	keyframes := 0
	for _, t := range tracks {
		keyframes += len(t.Keyframes)
	}
	return c.JSON(http.StatusOK, map[string]any{"tracks": len(tracks), "keyframes": keyframes})
}

// readTracks reads a PUT of tracks (see putTracks) and its operation.
func (s *server) readTracks(c *echo.Context) (string, []lake.Track, error) {
	ctx := c.Request().Context()
	q := c.Request().URL.Query()
	var op string
	var tracks []lake.Track
	switch q.Get("format") {
	case "", "json":
		var req struct {
			Operation string      `json:"operation"`
			Tracks    []trackJSON `json:"tracks"`
		}
		if err := s.bindJSON(c, &req); err != nil {
			return "", nil, err
		}
		if req.Tracks == nil {
			return "", nil, errs.Invalid("tracks", "tracks is required: a list of {number, label, keyframes, outside}")
		}
		op = req.Operation
		for _, t := range req.Tracks {
			tracks = append(tracks, t.track())
		}
	case "mot", "cvat", "labelstudio":
		body, err := readTracksFile(c)
		if err != nil {
			return "", nil, err
		}
		switch q.Get("format") {
		case "cvat":
			if tracks, err = trackio.ReadCVAT(bytes.NewReader(body)); err != nil {
				return "", nil, errs.Invalid("body", "CVAT XML %v", err)
			}
		case "labelstudio":
			f, err := s.Lake.File(ctx, c.Param("uniqueName"))
			if err != nil {
				return "", nil, err
			}
			if tracks, err = trackio.ReadLabelStudioVideo(bytes.NewReader(body), f.Name, f.Width, f.Height); err != nil {
				return "", nil, errs.Invalid("body", "Label Studio export: %v", err)
			}
		default:
			if tracks, err = trackio.ReadMOT(bytes.NewReader(body), motLabel(c)); err != nil {
				return "", nil, errs.Invalid("body", "gt.txt %v", err)
			}
		}
		op = q.Get("operation")
	default:
		return "", nil, errs.Invalid("format", "format must be json, mot, cvat or labelstudio, got %q", q.Get("format"))
	}
	return op, tracks, nil
}

// readTracksFile reads a PUT's tracks file, at most maxTracksBody.
func readTracksFile(c *echo.Context) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxTracksBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxTracksBody {
		return nil, errs.New(errs.TooLarge, "", "a tracks file is at most %d MiB", maxTracksBody>>20)
	}
	return body, nil
}

// motLabel is the label of a gt.txt's rows without a class (label=).
func motLabel(c *echo.Context) string {
	if l := c.QueryParam("label"); l != "" {
		return l
	}
	return "object"
}

// importMOT is the lake's PUT of a gt.txt: read and written as box tracks
// (lake.ImportBoxTracks), the same rows and refusals as any other format's
// tracks without a lake.Box a keyframe (a MOT file is a million of them).
func (s *server) importMOT(c *echo.Context) error {
	body, err := readTracksFile(c)
	if err != nil {
		return err
	}
	tracks, err := trackio.ReadMOTBoxes(bytes.NewReader(body), motLabel(c))
	if err != nil {
		return errs.Invalid("body", "gt.txt %v", err)
	}
	if err := s.Lake.ImportBoxTracks(c.Request().Context(), c.Param("uniqueName"), lake.Human, c.QueryParam("operation"), tracks); err != nil {
		return err
	}
	keyframes := 0
	for _, t := range tracks {
		keyframes += len(t.Keys)
	}
	return c.JSON(http.StatusOK, map[string]any{"tracks": len(tracks), "keyframes": keyframes})
}

// trackMetrics scores the tracks of one operation (predicted=, a model run
// or a tracker's import) against another's (truth=) on the video: CLEAR
// MOT, identity and HOTA, label by label and over all labels ("").
func (s *server) trackMetrics(c *echo.Context) error {
	ctx := c.Request().Context()
	name, q := c.Param("uniqueName"), c.Request().URL.Query()
	truth, predicted := q.Get("truth"), q.Get("predicted")
	if truth == "" || predicted == "" {
		return errs.Invalid("truth", "truth and predicted name the operations whose tracks are compared")
	}
	f, err := s.Lake.File(ctx, name)
	if err != nil {
		return err
	}
	gt, err := s.Lake.Tracks(ctx, name, []string{truth})
	if err != nil {
		return err
	}
	tr, err := s.Lake.Tracks(ctx, name, []string{predicted})
	if err != nil {
		return err
	}
	res, err := tracking.ByLabel([]tracking.Video{{Truth: gt, Tracker: tr, Frames: f.FrameCount, Width: f.Width, Height: f.Height}})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"uniqueName": name, "truth": truth, "predicted": predicted, "labels": res})
}

// setTracks makes the video's tracks of op exactly tracks, as a PUT of
// them: an edit kept in the frames' history, or with format= an import,
// which is not (as an image label import is not); guard, when not nil, is
// asked inside the write.
func (s *server) setTracks(c *echo.Context, name, op string, tracks []lake.Track, guard lake.TrackGuard) error {
	if c.QueryParam("format") != "" && c.QueryParam("format") != "json" {
		return s.Lake.ImportTracksIf(c.Request().Context(), name, lake.Human, op, tracks, guard)
	}
	return s.Lake.SetTracksIf(c.Request().Context(), name, lake.Human, op, tracks, guard)
}
