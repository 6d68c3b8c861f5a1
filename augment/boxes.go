package augment

import (
	"math"

	"github.com/framelake/framelake/lake/shape"
)

// tracked is a box on its way through a chain: where it is now and how much
// of it is still visible (the product of what each step left).
type tracked struct {
	box     Box
	visible float64
	mask    *plane          // a mask's pixels while the chain runs
	area    float64         // the mask's set pixels at the last clip
	moved   bool            // the mask was cropped or warped since
	skel    *shape.Skeleton // whose flip pairs a horizontal flip swaps
}

// affine2 maps (x, y) to (a(x-cx) + b(y-cy) + cx, c(x-cx) + d(y-cy) + cy):
// a linear map about the canvas centre (cx, cy), which stays put.
type affine2 struct{ a, b, c, d, cx, cy float64 }

func (m affine2) apply(x, y float64) (float64, float64) {
	dx, dy := x-m.cx, y-m.cy
	return m.a*dx + m.b*dy + m.cx, m.c*dx + m.d*dy + m.cy
}

// rotation turns counter-clockwise on screen (y points down) by deg degrees.
func rotation(deg float64, w, h int) affine2 {
	s, c := math.Sincos(deg * math.Pi / 180)
	return affine2{c, s, -s, c, float64(w) / 2, float64(h) / 2}
}

func shear(vertical bool, deg float64, w, h int) affine2 {
	t := math.Tan(deg * math.Pi / 180)
	if vertical {
		return affine2{1, 0, t, 1, float64(w) / 2, float64(h) / 2}
	}
	return affine2{1, t, 0, 1, float64(w) / 2, float64(h) / 2}
}

// moveAffine replaces each box by the box enclosing its four mapped corners;
// a shape's vertices are mapped and its mask warped (its box is its own
// again at the next clip).
func moveAffine(boxes []tracked, m affine2) {
	for i := range boxes {
		t := &boxes[i]
		t.mapPoints(m.apply)
		if t.mask != nil {
			t.mask, t.moved = t.mask.affine(m), true
		}
		b := &t.box
		xs, ys := [4]float64{}, [4]float64{}
		xs[0], ys[0] = m.apply(b.X, b.Y)
		xs[1], ys[1] = m.apply(b.X+b.W, b.Y)
		xs[2], ys[2] = m.apply(b.X, b.Y+b.H)
		xs[3], ys[3] = m.apply(b.X+b.W, b.Y+b.H)
		x0, x1 := minmax(xs)
		y0, y1 := minmax(ys)
		b.X, b.Y, b.W, b.H = x0, y0, x1-x0, y1-y0
	}
}

func minmax(v [4]float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// moveFlip mirrors boxes within a w x h image.
func moveFlip(boxes []tracked, vertical bool, w, h int) {
	for i := range boxes {
		boxes[i].flipShape(vertical, w, h)
		b := &boxes[i].box
		if vertical {
			b.Y = float64(h) - b.Y - b.H
		} else {
			b.X = float64(w) - b.X - b.W
		}
	}
}

// moveTurn turns boxes of a w x h image clockwise by quarter * 90 degrees.
func moveTurn(boxes []tracked, quarter, w, h int) {
	W, H := float64(w), float64(h)
	for i := range boxes {
		boxes[i].turnShape(quarter, w, h)
		b := &boxes[i].box
		switch quarter {
		case 1: // (x, y) -> (H - y, x)
			b.X, b.Y, b.W, b.H = H-b.Y-b.H, b.X, b.H, b.W
		case 2:
			b.X, b.Y = W-b.X-b.W, H-b.Y-b.H
		case 3: // (x, y) -> (y, W - x)
			b.X, b.Y, b.W, b.H = b.Y, W-b.X-b.W, b.H, b.W
		}
	}
}

// moveShift moves boxes by (-left, -top), as a crop at (left, top) does,
// to a w x h window: a mask is cut to it.
func moveShift(boxes []tracked, left, top, w, h int) {
	dx, dy := float64(left), float64(top)
	for i := range boxes {
		t := &boxes[i]
		t.mapPoints(func(x, y float64) (float64, float64) { return x - dx, y - dy })
		if t.mask != nil {
			t.mask, t.moved = t.mask.crop(left, top, w, h), true
		}
		boxes[i].box.X -= float64(left)
		boxes[i].box.Y -= float64(top)
	}
}

// clip cuts boxes to the w x h image, lowers their visible fraction by what
// was cut, and drops those whose fraction falls below minVisible or that have
// no area left. A shape is cut as a shape (clipShape); its box follows at
// the end of the chain.
func clip(boxes []tracked, w, h int, minVisible float64) []tracked {
	kept := boxes[:0]
	for _, t := range boxes {
		if isShape(t.box) {
			if t.clipShape(w, h) && t.visible >= minVisible {
				kept = append(kept, t)
			}
			continue
		}
		b := t.box
		area := b.W * b.H
		x0, y0 := max(b.X, 0), max(b.Y, 0)
		x1, y1 := min(b.X+b.W, float64(w)), min(b.Y+b.H, float64(h))
		if x1 <= x0 || y1 <= y0 || area <= 0 {
			continue
		}
		t.visible *= (x1 - x0) * (y1 - y0) / area
		if t.visible < minVisible {
			continue
		}
		t.box.X, t.box.Y, t.box.W, t.box.H = x0, y0, x1-x0, y1-y0
		kept = append(kept, t)
	}
	return kept
}
