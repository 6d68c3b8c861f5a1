package format

import (
	"fmt"
	"slices"

	"github.com/framelake/framelake/lake/shape"
)

// isShape says whether b is more than a box.
func isShape(b Box) bool { return b.Type != "" && b.Type != shape.Box }

// fitShape places b's shape on a width×height image (0 when unknown): a
// relative shape becomes pixels, and the shape is checked as the lake will
// check it, so a bad one is a problem of its file, not a refused batch.
// derived says that b gave no box: its box is then the shape's bounds, as
// the lake derives it, which Fit then cuts to the image (cutToImage).
func fitShape(b *Box, width, height int) (derived bool, err error) {
	t, err := shape.ParseType(string(b.Type))
	if err != nil {
		return false, err
	}
	if b.Relative {
		if width <= 0 || height <= 0 {
			return false, fmt.Errorf("the image's size is unknown, so relative coordinates cannot be placed")
		}
		scaleShape(&b.Geometry, float64(width), float64(height))
	}
	if err := b.Geometry.Check(width, height); err != nil || (b.W > 0 && b.H > 0) {
		return false, err
	}
	// No box given: the shape's bounds, as the lake derives them.
	r := b.Geometry.Bounds()
	if t == shape.Class {
		r = shape.Rect{W: float64(max(width, 0)), H: float64(max(height, 0))}
	}
	if t == shape.Polygon && (r.W <= 0 || r.H <= 0) {
		// All its points on one row or column: nothing to label (the fuzzer
		// found YOLO's "0 0 0 0 0 0 0", a polygon of one point three times).
		return false, fmt.Errorf("encloses no area: its points are %gx%g px across", r.W, r.H)
	}
	b.X, b.Y, b.W, b.H = r.X, r.Y, r.W, r.H
	return true, nil
}

// scaleShape turns fractions of the image into pixels, in copies: the
// item's shape stays as read, so it can be fitted again.
func scaleShape(g *shape.Geometry, w, h float64) {
	g.Polygon = slices.Clone(g.Polygon)
	for i, r := range g.Polygon {
		g.Polygon[i] = slices.Clone(r)
	}
	g.Points, g.Keypoints = slices.Clone(g.Points), slices.Clone(g.Keypoints)
	scale := func(xy []float64) {
		for i := range xy {
			if i%2 == 0 {
				xy[i] *= w
			} else {
				xy[i] *= h
			}
		}
	}
	for _, r := range g.Polygon {
		scale(r)
	}
	scale(g.Points)
	for i := range g.Keypoints {
		g.Keypoints[i].X *= w
		g.Keypoints[i].Y *= h
	}
}
