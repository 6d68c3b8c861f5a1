package augment

import (
	"math"
	"slices"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// A shape (Box.Geometry: polygon, polyline, keypoints, mask) moves with the
// pixels as its box's corners do: every vertex goes through the same map.
// A mask is decoded once per chain to a bit plane (plane.go), moved with
// the image and encoded again at the end.

// isShape reports whether b carries a shape that moves vertex by vertex
// (or pixel by pixel) rather than as a rectangle.
func isShape(b Box) bool {
	switch b.Type {
	case shape.Polygon, shape.Polyline, shape.Keypoints, shape.Mask:
		return true
	}
	return false
}

// checkShape rejects a shape no transform can make sense of (not finite,
// too few points, a mask whose counts do not decode).
func checkShape(i int, b Box) error {
	if !isShape(b) {
		return nil
	}
	if err := b.Geometry.Check(0, 0); err != nil {
		return errs.Invalid("boxes", "box %d: %v", i, err)
	}
	return nil
}

// startShape copies b's shape for one chain (the caller's stays as it is)
// and decodes its mask; the mask must be of the w x h image's size.
func startShape(t *tracked, w, h int, opt Options) error {
	g := &t.box.Geometry
	g.Area = nil
	g.Polygon = slices.Clone(g.Polygon)
	for i := range g.Polygon {
		g.Polygon[i] = slices.Clone(g.Polygon[i])
	}
	g.Points = slices.Clone(g.Points)
	g.Keypoints = slices.Clone(g.Keypoints)
	switch g.Type {
	case shape.Keypoints:
		t.skel = skeletonFor(t.box, opt.Skeletons)
	case shape.Mask:
		r, err := g.Mask.RLE()
		if err != nil {
			return errs.Invalid("boxes", "mask of %q: %v", t.box.Label, err)
		}
		if r.Height != h || r.Width != w {
			return errs.Invalid("boxes", "mask of %q is %dx%d (size [%d, %d]); the image is %dx%d",
				t.box.Label, r.Width, r.Height, r.Height, r.Width, w, h)
		}
		t.mask = decodePlane(r)
		t.area = float64(r.Area())
		g.Mask = nil
	}
	return nil
}

// skeletonFor is the declaration whose flip pairs a horizontal flip swaps:
// the label's, else COCO's person when every point is named as one of its
// 17, else none.
func skeletonFor(b Box, declared map[string]*shape.Skeleton) *shape.Skeleton {
	if s := declared[b.Label]; s != nil {
		return s
	}
	for _, k := range b.Keypoints {
		if !slices.Contains(shape.COCOPerson.Names, k.Name) {
			return nil
		}
	}
	return &shape.COCOPerson
}

// mapPoints moves every vertex of t's shape through f.
func (t *tracked) mapPoints(f func(x, y float64) (float64, float64)) {
	g := &t.box.Geometry
	for _, r := range g.Polygon {
		mapFlat(r, f)
	}
	mapFlat(g.Points, f)
	for i := range g.Keypoints {
		k := &g.Keypoints[i]
		if k.V > 0 {
			k.X, k.Y = f(k.X, k.Y)
		}
	}
}

func mapFlat(xy []float64, f func(x, y float64) (float64, float64)) {
	for i := 0; i+1 < len(xy); i += 2 {
		xy[i], xy[i+1] = f(xy[i], xy[i+1])
	}
}

// flipShape mirrors t's shape in a w x h image. A horizontal flip swaps
// the keypoints' names by the skeleton's flip pairs; a vertical one keeps
// them (see the package comment).
func (t *tracked) flipShape(vertical bool, w, h int) {
	W, H := float64(w), float64(h)
	if vertical {
		t.mapPoints(func(x, y float64) (float64, float64) { return x, H - y })
	} else {
		t.mapPoints(func(x, y float64) (float64, float64) { return W - x, y })
		if t.skel != nil {
			for i := range t.box.Keypoints {
				k := &t.box.Keypoints[i]
				k.Name = t.skel.FlipName(k.Name)
			}
		}
	}
	if t.mask != nil {
		t.mask.flip(vertical)
	}
}

// turnShape turns t's shape in a w x h image clockwise by quarter * 90°.
func (t *tracked) turnShape(quarter, w, h int) {
	W, H := float64(w), float64(h)
	switch quarter {
	case 1:
		t.mapPoints(func(x, y float64) (float64, float64) { return H - y, x })
	case 2:
		t.mapPoints(func(x, y float64) (float64, float64) { return W - x, H - y })
	case 3:
		t.mapPoints(func(x, y float64) (float64, float64) { return y, W - x })
	}
	if t.mask != nil {
		t.mask = t.mask.turn(quarter)
	}
}

// clipShape cuts t's shape to the w x h image and multiplies its visible
// fraction by the share of its measure kept (a polygon's area, a
// polyline's length, a mask's pixels, keypoints' labelled points). It
// reports false when nothing is left.
func (t *tracked) clipShape(w, h int) bool {
	g := &t.box.Geometry
	W, H := float64(w), float64(h)
	var before, after float64
	switch g.Type {
	case shape.Polygon:
		var kept [][]float64
		for _, r := range g.Polygon {
			before += math.Abs(ringArea(r))
			if c := clipRing(r, W, H); len(c) >= 6 {
				after += math.Abs(ringArea(c))
				kept = append(kept, c)
			}
		}
		g.Polygon = kept
		if len(kept) == 0 {
			return false
		}
	case shape.Polyline:
		before = lineLength(g.Points)
		g.Points = clipLine(g.Points, W, H)
		if len(g.Points) < 4 {
			return false
		}
		after = lineLength(g.Points)
	case shape.Keypoints:
		for i := range g.Keypoints {
			k := &g.Keypoints[i]
			if k.V == 0 {
				continue
			}
			before++
			if k.X < 0 || k.Y < 0 || k.X > W || k.Y > H {
				k.X, k.Y, k.V = 0, 0, 0 // COCO's unlabelled point
				continue
			}
			after++
		}
		if after == 0 {
			return false
		}
	case shape.Mask:
		if !t.moved {
			return true // not cut since it was counted: all of it is there
		}
		before, after = t.area, t.mask.area()
		t.area, t.moved = after, false
		if after == 0 {
			return false
		}
	}
	if before > 0 {
		t.visible *= after / before
	}
	return true
}

// finishShape writes a moved shape back into its box: the mask encoded, the
// box the shape's own (as the lake derives it), the area measured as the
// lake measures it (a polygon's pixels, a mask's, keypoints' box; a
// polyline has none).
func (t *tracked) finishShape(w, h int) {
	g := &t.box.Geometry
	var r shape.RLE
	if t.mask != nil {
		r = t.mask.encode()
		g.Mask = &shape.EncodedMask{Size: [2]int{r.Height, r.Width}, Counts: r.String()}
	}
	box := g.Bounds()
	t.box.X, t.box.Y, t.box.W, t.box.H = box.X, box.Y, box.W, box.H
	var area float64
	switch g.Type {
	case shape.Polyline:
		return
	case shape.Polygon:
		area = float64(shape.Rings(g.Polygon, h, w).Area())
	case shape.Mask:
		area = float64(r.Area())
	case shape.Keypoints:
		area = box.W * box.H
	}
	g.Area = &area
}

// ringArea is a ring's signed shoelace area.
func ringArea(r []float64) float64 {
	n := len(r) / 2
	var s float64
	for i := range n {
		j := (i + 1) % n
		s += r[2*i]*r[2*j+1] - r[2*j]*r[2*i+1]
	}
	return s / 2
}

// clipRing is Sutherland–Hodgman of one ring against [0, W] x [0, H]:
// what of the ring lies in the image, with the cut edges along its border.
func clipRing(r []float64, W, H float64) []float64 {
	type edge struct {
		in  func(x, y float64) bool
		cut func(ax, ay, bx, by float64) (float64, float64)
	}
	atX := func(ax, ay, bx, by, x float64) (float64, float64) { return x, ay + (by-ay)*(x-ax)/(bx-ax) }
	atY := func(ax, ay, bx, by, y float64) (float64, float64) { return ax + (bx-ax)*(y-ay)/(by-ay), y }
	edges := [4]edge{
		{func(x, _ float64) bool { return x >= 0 }, func(ax, ay, bx, by float64) (float64, float64) { return atX(ax, ay, bx, by, 0) }},
		{func(x, _ float64) bool { return x <= W }, func(ax, ay, bx, by float64) (float64, float64) { return atX(ax, ay, bx, by, W) }},
		{func(_, y float64) bool { return y >= 0 }, func(ax, ay, bx, by float64) (float64, float64) { return atY(ax, ay, bx, by, 0) }},
		{func(_, y float64) bool { return y <= H }, func(ax, ay, bx, by float64) (float64, float64) { return atY(ax, ay, bx, by, H) }},
	}
	in := r
	for _, e := range edges {
		n := len(in) / 2
		if n == 0 {
			return nil
		}
		allIn := true
		for i := range n {
			allIn = allIn && e.in(in[2*i], in[2*i+1])
		}
		if allIn {
			continue
		}
		var out []float64
		for i := range n {
			ax, ay := in[2*((i+n-1)%n)], in[2*((i+n-1)%n)+1]
			bx, by := in[2*i], in[2*i+1]
			aIn, bIn := e.in(ax, ay), e.in(bx, by)
			if aIn != bIn {
				x, y := e.cut(ax, ay, bx, by)
				out = append(out, x, y)
			}
			if bIn {
				out = append(out, bx, by)
			}
		}
		in = out
	}
	return in
}

// clipLine cuts a polyline to [0, W] x [0, H] (Liang–Barsky on each
// segment) and keeps the longest of the pieces left inside: a polyline is
// one annotation, and the longest piece is most of what it marked.
func clipLine(xy []float64, W, H float64) []float64 {
	var best, cur []float64
	flush := func() {
		if len(cur) >= 4 && lineLength(cur) > lineLength(best) {
			best = cur
		}
		cur = nil
	}
	for i := 0; i+3 < len(xy); i += 2 {
		ax, ay, bx, by := xy[i], xy[i+1], xy[i+2], xy[i+3]
		t0, t1, ok := liangBarsky(ax, ay, bx, by, W, H)
		if !ok {
			flush()
			continue
		}
		sx, sy := ax+t0*(bx-ax), ay+t0*(by-ay)
		ex, ey := ax+t1*(bx-ax), ay+t1*(by-ay)
		if len(cur) == 0 || t0 > 0 {
			flush()
			cur = append(cur, sx, sy)
		}
		cur = append(cur, ex, ey)
		if t1 < 1 {
			flush()
		}
	}
	flush()
	return best
}

// liangBarsky is the part [t0, t1] of segment a→b inside [0, W] x [0, H].
func liangBarsky(ax, ay, bx, by, W, H float64) (t0, t1 float64, ok bool) {
	t0, t1 = 0, 1
	dx, dy := bx-ax, by-ay
	for _, c := range [4][2]float64{{-dx, ax}, {dx, W - ax}, {-dy, ay}, {dy, H - ay}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return 0, 0, false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = max(t0, t)
		} else {
			t1 = min(t1, t)
		}
	}
	return t0, t1, t0 <= t1
}

func lineLength(xy []float64) float64 {
	var s float64
	for i := 0; i+3 < len(xy); i += 2 {
		s += math.Hypot(xy[i+2]-xy[i], xy[i+3]-xy[i+1])
	}
	return s
}
