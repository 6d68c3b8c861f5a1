package shape

import (
	"context"
	"fmt"
	"slices"
)

// Skeleton is what a keypoints label declares: its point names in order (the
// order COCO's files and evaluation use), the skeleton's edges, the pairs a
// horizontal flip swaps (left_eye with right_eye), and the per-point sigmas
// of OKS (COCO's kpt_oks_sigmas; empty when not declared).
type Skeleton struct {
	Names  []string    `json:"keypoints"`
	Edges  [][2]string `json:"skeleton,omitempty"`
	Flip   [][2]string `json:"flipPairs,omitempty"`
	Sigmas []float64   `json:"sigmas,omitempty"`
}

// SkeletonOf finds the declared skeleton of a label; nil (and no error)
// when the label declares none. Domain packages that need declarations
// (evaluation's sigmas, augmentation's flip pairs, exports' categories)
// take one from whoever composes them, so they never import where labels
// are declared.
type SkeletonOf func(ctx context.Context, label string) (*Skeleton, error)

// COCOPerson is COCO's person: its 17 keypoints, skeleton, left/right pairs
// and the sigmas pycocotools uses by default (cocoeval.py Params).
var COCOPerson = Skeleton{
	Names: []string{"nose", "left_eye", "right_eye", "left_ear", "right_ear",
		"left_shoulder", "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist",
		"left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle"},
	Edges: [][2]string{
		{"left_ankle", "left_knee"}, {"left_knee", "left_hip"}, {"right_ankle", "right_knee"},
		{"right_knee", "right_hip"}, {"left_hip", "right_hip"}, {"left_shoulder", "left_hip"},
		{"right_shoulder", "right_hip"}, {"left_shoulder", "right_shoulder"}, {"left_shoulder", "left_elbow"},
		{"right_shoulder", "right_elbow"}, {"left_elbow", "left_wrist"}, {"right_elbow", "right_wrist"},
		{"left_eye", "right_eye"}, {"nose", "left_eye"}, {"nose", "right_eye"}, {"left_eye", "left_ear"},
		{"right_eye", "right_ear"}, {"left_ear", "left_shoulder"}, {"right_ear", "right_shoulder"},
	},
	Flip: [][2]string{{"left_eye", "right_eye"}, {"left_ear", "right_ear"}, {"left_shoulder", "right_shoulder"},
		{"left_elbow", "right_elbow"}, {"left_wrist", "right_wrist"}, {"left_hip", "right_hip"},
		{"left_knee", "right_knee"}, {"left_ankle", "right_ankle"}},
	Sigmas: []float64{.026, .025, .025, .035, .035, .079, .079, .072, .072, .062, .062, .107, .107, .087, .087, .089, .089},
}

// Check checks a declaration: names unique and non-empty, edges and flip
// pairs between declared names (a point flips with one other at most), and
// one positive sigma per name when sigmas are given.
func (s Skeleton) Check() error {
	if len(s.Names) == 0 {
		return fmt.Errorf("keypoints: declare at least one point name")
	}
	for i, n := range s.Names {
		if n == "" {
			return fmt.Errorf("keypoints[%d] is empty", i)
		}
		if slices.Index(s.Names, n) != i {
			return fmt.Errorf("keypoints[%d]: %q is declared twice", i, n)
		}
	}
	for i, e := range s.Edges {
		if err := s.pair(e); err != nil {
			return fmt.Errorf("skeleton[%d]: %w", i, err)
		}
	}
	flipped := map[string]bool{}
	for i, p := range s.Flip {
		if err := s.pair(p); err != nil {
			return fmt.Errorf("flipPairs[%d]: %w", i, err)
		}
		for _, n := range p {
			if flipped[n] {
				return fmt.Errorf("flipPairs[%d]: %q is in two pairs", i, n)
			}
			flipped[n] = true
		}
	}
	if len(s.Sigmas) > 0 && len(s.Sigmas) != len(s.Names) {
		return fmt.Errorf("sigmas: %d values for %d keypoints", len(s.Sigmas), len(s.Names))
	}
	for i, v := range s.Sigmas {
		if !(v > 0) || v > 10 {
			return fmt.Errorf("sigmas[%d] is %v: a sigma is above 0 and at most 10", i, v)
		}
	}
	return nil
}

func (s Skeleton) pair(p [2]string) error {
	for _, n := range p {
		if !slices.Contains(s.Names, n) {
			return fmt.Errorf("%q is not a declared keypoint", n)
		}
	}
	if p[0] == p[1] {
		return fmt.Errorf("%q is paired with itself", p[0])
	}
	return nil
}

// SigmasOr is the declared sigmas, else COCO's person sigmas when the names
// are COCO's 17 in order, else nil: OKS then has no sigmas to use.
func (s Skeleton) SigmasOr() []float64 {
	if len(s.Sigmas) > 0 {
		return s.Sigmas
	}
	if slices.Equal(s.Names, COCOPerson.Names) {
		return COCOPerson.Sigmas
	}
	return nil
}

// FlipName is the name a point takes after a horizontal flip: its pair's
// other name, or its own when it has no pair.
func (s Skeleton) FlipName(name string) string {
	for _, p := range s.Flip {
		switch name {
		case p[0]:
			return p[1]
		case p[1]:
			return p[0]
		}
	}
	return name
}
