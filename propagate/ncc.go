package propagate

import "math"

// Gray is one frame in 8-bit luma, row by row.
type Gray struct {
	W, H int
	Pix  []byte
}

// at samples g at (x, y) in pixel units (pixel centres at +0.5), bilinear,
// clamped at the edges.
func (g Gray) at(x, y float64) float32 {
	x, y = x-0.5, y-0.5
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	fx, fy := float32(x-float64(x0)), float32(y-float64(y0))
	p := func(xi, yi int) float32 {
		xi, yi = min(max(xi, 0), g.W-1), min(max(yi, 0), g.H-1)
		return float32(g.Pix[yi*g.W+xi])
	}
	top := p(x0, y0)*(1-fx) + p(x0+1, y0)*fx
	bottom := p(x0, y0+1)*(1-fx) + p(x0+1, y0+1)*fx
	return top*(1-fy) + bottom*fy
}

// Box is a box in a frame's pixels: centre and size.
type Box struct{ CX, CY, W, H float64 }

// templateSide is the longer side of the template, in its own pixels: a box
// is matched at this resolution whatever its size, which bounds a step's work.
const templateSide = 32

// scales are the sizes tried at each step, relative to the last box.
var scales = [...]float64{0.96, 1, 1.04}

// ncc follows one box from frame to frame by normalised cross-correlation
// of a template (the box at templateSide resolution, its mean taken out)
// against the area around where the box last was, at three scales. The
// template drifts slowly towards what it matches well, so a turning
// object is kept without learning the background.
type ncc struct {
	tw, th int
	tmpl   []float32 // zero mean
	norm   float64   // the template's length
	box    Box
}

func newNCC(g Gray, b Box) *ncc {
	t := &ncc{box: b}
	if b.W >= b.H {
		t.tw, t.th = templateSide, max(4, int(math.Round(templateSide*b.H/b.W)))
	} else {
		t.th, t.tw = templateSide, max(4, int(math.Round(templateSide*b.W/b.H)))
	}
	t.tmpl = t.sample(g, b)
	t.normalise()
	return t
}

// sample is box b of g at the template's resolution.
func (t *ncc) sample(g Gray, b Box) []float32 {
	out := make([]float32, t.tw*t.th)
	px, py := b.W/float64(t.tw), b.H/float64(t.th)
	x0, y0 := b.CX-b.W/2, b.CY-b.H/2
	for j := range t.th {
		for i := range t.tw {
			out[j*t.tw+i] = g.at(x0+(float64(i)+0.5)*px, y0+(float64(j)+0.5)*py)
		}
	}
	return out
}

func (t *ncc) normalise() {
	var sum float64
	for _, v := range t.tmpl {
		sum += float64(v)
	}
	mean := float32(sum / float64(len(t.tmpl)))
	var sq float64
	for i := range t.tmpl {
		t.tmpl[i] -= mean
		sq += float64(t.tmpl[i]) * float64(t.tmpl[i])
	}
	t.norm = math.Sqrt(sq)
}

// step finds the box in the next frame and how sure it is (the best
// correlation, -1..1; 0 when the template has no texture to match).
func (t *ncc) step(g Gray) (Box, float64) {
	best, bestScore := t.box, -2.0
	if t.norm < 1e-3 {
		return best, 0
	}
	radius := 0.5 * max(t.box.W, t.box.H) // how far the box may move in one frame
	for _, sc := range scales {
		w, h := t.box.W*sc, t.box.H*sc
		px, py := w/float64(t.tw), h/float64(t.th)
		rx, ry := int(math.Ceil(radius/px)), int(math.Ceil(radius/py))
		ww, wh := t.tw+2*rx, t.th+2*ry
		// The search window at template resolution, sampled once a scale.
		win := make([]float32, ww*wh)
		x0, y0 := t.box.CX-w/2-float64(rx)*px, t.box.CY-h/2-float64(ry)*py
		for j := range wh {
			for i := range ww {
				win[j*ww+i] = g.at(x0+(float64(i)+0.5)*px, y0+(float64(j)+0.5)*py)
			}
		}
		dx, dy, score := t.match(win, ww, wh)
		if score > bestScore {
			bestScore = score
			best = Box{CX: x0 + (float64(dx)+float64(t.tw)/2)*px, CY: y0 + (float64(dy)+float64(t.th)/2)*py, W: w, H: h}
		}
	}
	t.box = best
	if bestScore > 0.8 { // drift towards a confident match only
		patch := t.sample(g, best)
		var sum float64
		for _, v := range patch {
			sum += float64(v)
		}
		mean := float32(sum / float64(len(patch)))
		for i := range t.tmpl {
			t.tmpl[i] = 0.9*t.tmpl[i] + 0.1*(patch[i]-mean)
		}
		t.normalise()
	}
	return best, bestScore
}

// match slides the template over the window and returns the offset with
// the highest correlation. The template has zero mean, so the patch's mean
// drops out of the product; the patch's spread comes from running sums.
func (t *ncc) match(win []float32, ww, wh int) (int, int, float64) {
	n := float64(t.tw * t.th)
	bx, by, best := 0, 0, -2.0
	for dy := 0; dy+t.th <= wh; dy++ {
		for dx := 0; dx+t.tw <= ww; dx++ {
			var cross, sum, sq float64
			for j := range t.th {
				row := win[(dy+j)*ww+dx : (dy+j)*ww+dx+t.tw]
				tr := t.tmpl[j*t.tw : (j+1)*t.tw]
				var c, s, q float32
				for i, p := range row {
					c += tr[i] * p
					s += p
					q += p * p
				}
				cross, sum, sq = cross+float64(c), sum+float64(s), sq+float64(q)
			}
			spread := sq - sum*sum/n
			if spread < 1e-6 {
				continue
			}
			if score := cross / (t.norm * math.Sqrt(spread)); score > best {
				bx, by, best = dx, dy, score
			}
		}
	}
	return bx, by, best
}
