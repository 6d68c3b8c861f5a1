package analysis

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// MaxSegmentPoints bounds the clicks of one segmentation request.
const MaxSegmentPoints = 200

// SegmentPoint is one click of a segmentation prompt in image pixels:
// Label 1 is on the object, 0 off it (SAM's convention).
type SegmentPoint struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Label int     `json:"label"`
}

// SegmentRequest asks a segmentation model for the mask of one object of a
// lake image, prompted by a box, clicks or both.
type SegmentRequest struct {
	Model      string         // registered name; "" or "default" = the system default
	UniqueName string         // the lake image, or video with Frame
	Frame      *int           // a video's frame, 0 first (as GET .../frames/{frame} serves it)
	Box        []float64      // x1, y1, x2, y2 in pixels; optional
	Points     []SegmentPoint // optional; a box or one positive point at least
}

// SegmentMask is one proposed mask, in the lake's mask form, and the model's
// confidence in it (0..1).
type SegmentMask struct {
	Mask  shape.EncodedMask `json:"mask"`
	Score float64           `json:"score"`
}

// SegmentResult is a model's answer: masks best first.
type SegmentResult struct {
	Masks []SegmentMask `json:"masks"`
	Model string        `json:"model"`
}

// segmentInput is the body every segmentation package receives
// (application/json); models/README.md documents it for package authors.
type segmentInput struct {
	Image  string         `json:"image"` // base64 of the file's bytes
	Box    []float64      `json:"box,omitempty"`
	Points []SegmentPoint `json:"points,omitempty"`
}

// segmentOutput is what a segmentation package's output_fn returns.
type segmentOutput struct {
	Masks  []shape.EncodedMask `json:"masks"`
	Scores []float64           `json:"scores"`
}

// Segment runs a segmentation model on one lake image, synchronously, on
// the model's warm worker (model_fn runs once per worker, not per request).
// A model with an endpoint of its own is called there instead.
func (s *Service) Segment(ctx context.Context, req SegmentRequest) (SegmentResult, error) {
	f, err := s.lake.File(ctx, req.UniqueName)
	if err != nil {
		return SegmentResult{}, err
	}
	switch {
	case f.Type == lake.Video && req.Frame == nil:
		return SegmentResult{}, errs.Invalid("frame", "%s is a video: give the frame to segment", req.UniqueName)
	case f.Type == lake.Image && req.Frame != nil:
		return SegmentResult{}, errs.Invalid("frame", "%s is an image; frame is for videos", req.UniqueName)
	case f.Type != lake.Image && f.Type != lake.Video:
		return SegmentResult{}, errs.Invalid("uniqueName", "%s is not an image or a video", req.UniqueName)
	}
	if err := checkPrompt(req, f.Width, f.Height); err != nil {
		return SegmentResult{}, err
	}
	m, _, err := s.resolveModel(ctx, Segmentation, req.Model)
	if err != nil {
		return SegmentResult{}, err
	}
	platform := Local
	if m.Endpoint != "" {
		platform = AWS
	}
	r, err := s.runnerFor(m, platform)
	if err != nil {
		return SegmentResult{}, err
	}
	if platform == AWS {
		defer r.Close()
	}
	img, err := s.segmentImage(ctx, f, req.Frame)
	if err != nil {
		return SegmentResult{}, err
	}
	body, err := json.Marshal(segmentInput{Image: base64.StdEncoding.EncodeToString(img), Box: req.Box, Points: req.Points})
	if err != nil {
		return SegmentResult{}, err
	}
	resp, err := r.Invoke(ctx, Request{Body: body, ContentType: "application/json"})
	if err != nil {
		return SegmentResult{}, err
	}
	masks, err := readSegmentOutput(resp.Body, f.Width, f.Height)
	if err != nil {
		return SegmentResult{}, &ModelError{Model: m.Name, Stage: "output",
			Msg: "output_fn's answer breaks the segmentation contract: " + err.Error()}
	}
	return SegmentResult{Masks: masks, Model: m.Name}, nil
}

// segmentImage is the file's own bytes (the package decodes them, so a
// JPEG is not decoded and encoded again here), or the video frame as JPEG
// through the lake's frame cache the workspace's player fills.
func (s *Service) segmentImage(ctx context.Context, f lake.File, frame *int) ([]byte, error) {
	if frame != nil {
		if *frame < 0 {
			return nil, errs.Invalid("frame", "frame %d: frames count from 0", *frame)
		}
		return s.lake.VideoFrame(ctx, f, *frame, 0)
	}
	path, release, err := s.lake.Store().Local(ctx, f.Blob, f.Ext)
	if err != nil {
		return nil, err
	}
	defer release()
	return os.ReadFile(path)
}

// checkPrompt refuses prompts that cannot mean an object of a w×h image
// (0 when the lake does not know the size).
func checkPrompt(req SegmentRequest, w, h int) error {
	inside := func(x, y float64) bool {
		return !math.IsNaN(x) && !math.IsNaN(y) && x >= 0 && y >= 0 &&
			(w == 0 || x <= float64(w)) && (h == 0 || y <= float64(h))
	}
	positive := false
	if len(req.Points) > MaxSegmentPoints {
		return errs.Invalid("points", "%d points; at most %d", len(req.Points), MaxSegmentPoints)
	}
	for i, p := range req.Points {
		switch {
		case p.Label != 0 && p.Label != 1:
			return errs.Invalid("points", "points[%d].label is %d; use 1 (on the object) or 0 (off it)", i, p.Label)
		case !inside(p.X, p.Y):
			return errs.Invalid("points", "points[%d] (%g, %g) is outside the %dx%d image", i, p.X, p.Y, w, h)
		}
		positive = positive || p.Label == 1
	}
	if req.Box == nil {
		if !positive {
			return errs.Invalid("box", "give a box or at least one positive point (label 1)")
		}
		return nil
	}
	b := req.Box
	switch {
	case len(b) != 4:
		return errs.Invalid("box", "box has %d numbers; give [x1, y1, x2, y2]", len(b))
	case !inside(b[0], b[1]) || !inside(b[2], b[3]):
		return errs.Invalid("box", "box %v reaches outside the %dx%d image", b, w, h)
	case b[2]-b[0] < 1 || b[3]-b[1] < 1:
		return errs.Invalid("box", "box %v is empty: x2 must exceed x1 and y2 exceed y1 by a pixel at least", b)
	}
	return nil
}

// readSegmentOutput checks a package's answer: masks of the image's size
// whose counts cover it, a score each (1 when the package gives none).
func readSegmentOutput(b []byte, w, h int) ([]SegmentMask, error) {
	var out segmentOutput
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("not {\"masks\": [...], \"scores\": [...]}: %v", err)
	}
	if len(out.Scores) != 0 && len(out.Scores) != len(out.Masks) {
		return nil, fmt.Errorf("%d masks but %d scores", len(out.Masks), len(out.Scores))
	}
	masks := make([]SegmentMask, len(out.Masks))
	for i, em := range out.Masks {
		if (w > 0 && em.Size[1] != w) || (h > 0 && em.Size[0] != h) {
			return nil, fmt.Errorf("masks[%d] is %dx%d (size is [height, width]); the image is %dx%d",
				i, em.Size[1], em.Size[0], w, h)
		}
		if _, err := em.RLE(); err != nil {
			return nil, fmt.Errorf("masks[%d]: %v", i, err)
		}
		score := 1.0
		if len(out.Scores) > 0 {
			score = out.Scores[i]
		}
		if math.IsNaN(score) || score < 0 || score > 1 {
			return nil, fmt.Errorf("scores[%d] is %g; scores are 0..1", i, score)
		}
		masks[i] = SegmentMask{Mask: em, Score: score}
	}
	sort.SliceStable(masks, func(i, j int) bool { return masks[i].Score > masks[j].Score })
	return masks, nil
}
