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
// the lake derives it, which Fit then cuts to the image (clipDerived).
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

// clipDerived places the box a shape's bounds gave (fitShape) in the image,
// as Fit places a box a file gives: cut to the image, said once it crosses
// the edge by more than half a pixel; a shape whose bounds lie outside is
// refused. Its points stay as given (the lake takes points outside by less
// than the image's size); a polyline or keypoints may be 0 px across. A
// class's box is the frame, and without the image's size there is nothing
// to cut to. ok is false when b is refused.
func (r *Report) clipDerived(b *Box, source string, width, height int) (ok bool) {
	if b.Type == shape.Class || width <= 0 || height <= 0 {
		return true
	}
	w, h := float64(width), float64(height)
	x0, y0 := max(b.X, 0), max(b.Y, 0)
	x1, y1 := min(b.X+b.W, w), min(b.Y+b.H, h)
	flat := b.Type == shape.Polyline || b.Type == shape.Keypoints
	if x1 < x0 || y1 < y0 || !flat && (x1 == x0 || y1 == y0) {
		r.add(OutsideImage, source, b.Line, "%s %s at (%.6g,%.6g) size %.6gx%.6g is outside the %dx%d image",
			b.Label, b.Type, b.X, b.Y, b.W, b.H, width, height)
		return false
	}
	if b.X < -0.5 || b.Y < -0.5 || b.X+b.W > w+0.5 || b.Y+b.H > h+0.5 {
		r.add(Clipped, source, b.Line, "%s %s at (%.6g,%.6g) size %.6gx%.6g crosses the edge of the %dx%d image; its box clipped",
			b.Label, b.Type, b.X, b.Y, b.W, b.H, width, height)
	}
	b.X, b.Y, b.W, b.H = x0, y0, x1-x0, y1-y0
	return true
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
