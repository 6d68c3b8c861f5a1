// Package agreement measures how far annotators agree when the same frames
// are given to two or more of them (issue 35, docs/team.md), and merges
// what they drew into one answer.
//
//   - Shapes: two annotators' shapes on a frame are paired label by label
//     at the highest total IoU (the assignment SciPy's linear_sum_assignment
//     finds), a pair counting when its IoU is at least Options.IoU (0.5); mask
//     IoU when both have pixels, box IoU otherwise. Their F1 is 2·pairs /
//     (shapes of one + shapes of the other): 1 when both drew the same, 1 when
//     both drew nothing. A frame's F1 is the mean over its pairs of
//     annotators; a label's F1 and the overall F1 pool pairs and frames
//     (2·Σpairs / Σshapes).
//   - Classes (a label on the whole frame): Cohen's kappa when every frame
//     was classed by the same two people, Fleiss' kappa otherwise (raters may
//     differ from frame to frame; every frame needs the same number of them,
//     frames with another number are left out and counted). "No class" is a
//     category of its own. Per class, the same kappa one against the rest
//     (every rating recoded as that class or not), the usual per-category
//     kappa.
//   - Frames whose F1 is under Options.Threshold are listed for review.
//   - Consensus keeps a shape where more than half of a frame's annotators
//     drew it (matched as above): the mean of their boxes, and for masks the
//     pixels more than half of them painted.
package agreement

import (
	"fmt"

	"github.com/framelake/framelake/lake/shape"
)

// Shape is one annotator's shape on a frame: its label, box, and pixels
// when it has them (a polygon's or a mask's).
type Shape struct {
	Annotator string
	Label     string
	Box       shape.Rect
	Mask      *shape.RLE
}

// Frame is what its annotators gave one frame: shapes, and each annotator's
// class of the frame ("" for none). Annotators lists everyone who labelled
// it, so one who drew nothing counts as disagreeing with one who drew.
type Frame struct {
	Key        string
	Annotators []string
	Shapes     []Shape
	Classes    map[string]string
}

// Options tune the measure.
type Options struct {
	IoU       float64 // a pair of shapes matches from this IoU; default 0.5
	Threshold float64 // frames under this F1 go to review; default 0.8
}

// Result is the agreement of a set of frames.
type Result struct {
	F1      float64            `json:"f1"`
	ByLabel map[string]float64 `json:"byLabel"`
	Frames  []FrameResult      `json:"frames"`
	Review  []string           `json:"review"` // keys of frames under the threshold
	Kappa   *Kappa             `json:"kappa,omitempty"`
}

// FrameResult is one frame's agreement.
type FrameResult struct {
	Key string  `json:"key"`
	F1  float64 `json:"f1"`
}

// Kappa is the chance-corrected agreement on frame classes.
type Kappa struct {
	Kind    string  `json:"kind"` // "cohen" or "fleiss"
	Value   float64 `json:"value"`
	Frames  int     `json:"frames"`
	Skipped int     `json:"skipped"` // frames left out: another number of raters
	// ByLabel is the kappa of each class one against the rest: the same
	// kind of kappa over the ratings recoded as that class or not.
	ByLabel map[string]float64 `json:"byLabel"`
}

func (o *Options) defaults() {
	if o.IoU == 0 {
		o.IoU = 0.5
	}
	if o.Threshold == 0 {
		o.Threshold = 0.8
	}
}

func (f Frame) check() error {
	if len(f.Annotators) < 2 {
		return fmt.Errorf("frame %s: %d annotators; agreement needs two or more", f.Key, len(f.Annotators))
	}
	known := map[string]bool{}
	for _, a := range f.Annotators {
		if known[a] {
			return fmt.Errorf("frame %s: annotator %q is listed twice", f.Key, a)
		}
		known[a] = true
	}
	for _, s := range f.Shapes {
		if !known[s.Annotator] {
			return fmt.Errorf("frame %s: a shape of %q, who is not among its annotators", f.Key, s.Annotator)
		}
	}
	return nil
}
