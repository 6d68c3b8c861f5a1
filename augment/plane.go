package augment

import (
	"bytes"
	"math"
	"slices"

	"github.com/framelake/framelake/lake/shape"
)

// plane is a mask on its way through a chain: a W x H canvas (the image's)
// of which only the window of w x h pixels at (x0, y0) is held, as bytes of
// 0 and 1, column-major like COCO's RLE; everything outside it is 0. The
// window starts as the mask's box, so each step costs the mask's pixels, not
// the frame's: one pass over them, where moving runs would split them at
// every column anyway.
type plane struct {
	W, H         int
	x0, y0, w, h int
	bits         []byte
}

// decodePlane is r's pixels in the window of its box.
func decodePlane(r shape.RLE) *plane {
	p := &plane{W: r.Width, H: r.Height}
	b := r.Bounds()
	p.x0, p.y0, p.w, p.h = int(b.X), int(b.Y), int(b.W), int(b.H)
	p.bits = make([]byte, p.w*p.h)
	at := 0
	for i, c := range r.Counts {
		end := at + int(c)
		for i%2 == 1 && at < end { // a set run, column by column
			x, y := at/p.H, at%p.H
			n := min(end-at, p.H-y)
			run := p.bits[(x-p.x0)*p.h+y-p.y0:][:n]
			for k := range run {
				run[k] = 1
			}
			at += n
		}
		at = end
	}
	return p
}

// flip mirrors the plane in place.
func (p *plane) flip(vertical bool) {
	if vertical {
		p.y0 = p.H - p.y0 - p.h
		for x := range p.w {
			slices.Reverse(p.bits[x*p.h : (x+1)*p.h])
		}
		return
	}
	p.x0 = p.W - p.x0 - p.w
	tmp := make([]byte, p.h)
	for x := range p.w / 2 {
		a, b := p.bits[x*p.h:(x+1)*p.h], p.bits[(p.w-1-x)*p.h:(p.w-x)*p.h]
		copy(tmp, a)
		copy(a, b)
		copy(b, tmp)
	}
}

// turn is the plane turned clockwise by quarter * 90°; pixel (x, y) goes
// where the image's does.
func (p *plane) turn(quarter int) *plane {
	if quarter == 2 { // column-major, a half turn reverses the whole window
		p.x0, p.y0 = p.W-p.x0-p.w, p.H-p.y0-p.h
		slices.Reverse(p.bits)
		return p
	}
	w, h := p.w, p.h
	out := &plane{W: p.H, H: p.W, w: h, h: w, bits: make([]byte, len(p.bits))}
	if quarter == 1 { // (x, y) -> (H-1-y, x)
		out.x0, out.y0 = p.H-p.y0-h, p.x0
	} else { // (x, y) -> (y, W-1-x)
		out.x0, out.y0 = p.y0, p.W-p.x0-w
	}
	for x := range w {
		for y, v := range p.bits[x*h : (x+1)*h] {
			if v == 0 {
				continue
			}
			if quarter == 1 {
				out.bits[(h-1-y)*w+x] = 1
			} else {
				out.bits[y*w+w-1-x] = 1
			}
		}
	}
	return out
}

// crop is the part of the plane under the cw x ch window at (cx, cy), made
// in place: the window's columns move down the array, never past where
// they are read from.
func (p *plane) crop(cx, cy, cw, ch int) *plane {
	ix0, iy0 := max(p.x0, cx), max(p.y0, cy)
	ix1, iy1 := min(p.x0+p.w, cx+cw), min(p.y0+p.h, cy+ch)
	if ix1 <= ix0 || iy1 <= iy0 {
		ix1, iy1 = ix0, iy0
	}
	w, h := ix1-ix0, iy1-iy0
	for i := range w {
		copy(p.bits[i*h:(i+1)*h], p.bits[(ix0-p.x0+i)*p.h+iy0-p.y0:])
	}
	p.W, p.H, p.bits = cw, ch, p.bits[:w*h]
	p.x0, p.y0, p.w, p.h = ix0-cx, iy0-cy, w, h
	return p
}

// affine warps the plane through m onto its canvas, nearest neighbour:
// each output pixel takes the bit under its centre mapped back through m's
// inverse, the map the image's bilinear warp samples with. Only the output
// pixels within the moved window are visited.
func (p *plane) affine(m affine2) *plane {
	fx0, fy0 := float64(p.x0), float64(p.y0)
	fw, fh := float64(p.w), float64(p.h)
	xs, ys := [4]float64{}, [4]float64{}
	xs[0], ys[0] = m.apply(fx0, fy0)
	xs[1], ys[1] = m.apply(fx0+fw, fy0)
	xs[2], ys[2] = m.apply(fx0, fy0+fh)
	xs[3], ys[3] = m.apply(fx0+fw, fy0+fh)
	lx, hx := minmax(xs)
	ly, hy := minmax(ys)
	x0, x1 := max(0, int(math.Floor(lx))-1), min(p.W, int(math.Ceil(hx))+1)
	y0, y1 := max(0, int(math.Floor(ly))-1), min(p.H, int(math.Ceil(hy))+1)
	if x1 <= x0 || y1 <= y0 || p.w == 0 {
		x1, y1 = x0, y0
	}
	out := &plane{W: p.W, H: p.H, x0: x0, y0: y0, w: x1 - x0, h: y1 - y0}
	out.bits = make([]byte, out.w*out.h)
	det := m.a*m.d - m.b*m.c
	ia, ib, ic, id := m.d/det, -m.b/det, -m.c/det, m.a/det
	dy0 := float64(y0) + 0.5 - m.cy
	for X := x0; X < x1; X++ {
		dx := float64(X) + 0.5 - m.cx
		col := out.bits[(X-x0)*out.h : (X-x0+1)*out.h]
		// The source point, in the window's coordinates, steps by (ib, id)
		// a row; at or above 0 truncation is the floor.
		sx, sy := ia*dx+ib*dy0+m.cx-fx0, ic*dx+id*dy0+m.cy-fy0
		for i := range col {
			if sx >= 0 && sy >= 0 && sx < fw && sy < fh {
				col[i] = p.bits[int(sx)*p.h+int(sy)]
			}
			sx, sy = sx+ib, sy+id
		}
	}
	return out
}

// area counts the set pixels, run by run (bytes.IndexByte skips empty
// stretches many bytes at a time).
func (p *plane) area() float64 {
	n := 0
	rest := p.bits
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, 1)
		if i < 0 {
			break
		}
		rest = rest[i:]
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			j = len(rest)
		}
		n += j
		rest = rest[j:]
	}
	return float64(n)
}

// encode is the plane as an RLE of its whole canvas.
func (p *plane) encode() shape.RLE {
	r := shape.RLE{Height: p.H, Width: p.W}
	var cur byte
	run := 0
	emit := func(v byte, n int) {
		if n == 0 {
			return
		}
		if v != cur {
			r.Counts = append(r.Counts, uint32(run))
			cur, run = v, 0
		}
		run += n
	}
	if p.w == 0 || p.h == 0 {
		emit(0, p.W*p.H)
	} else {
		emit(0, p.x0*p.H)
		for x := range p.w {
			emit(0, p.y0)
			col, want := p.bits[x*p.h:(x+1)*p.h], byte(1)
			for len(col) > 0 {
				n := bytes.IndexByte(col, want)
				if n < 0 {
					n = len(col)
				}
				emit(want^1, n)
				col, want = col[n:], want^1
			}
			emit(0, p.H-p.y0-p.h)
		}
		emit(0, (p.W-p.x0-p.w)*p.H)
	}
	r.Counts = append(r.Counts, uint32(run))
	return r
}
