package vector

import "math"

// frame is a 2D similarity (a turn or mirror, a scale and a shift):
// p' = M p + T with M = [A B; C D].
type frame struct{ A, B, C, D, Tx, Ty float64 }

func (f frame) apply(p [2]float64) [2]float64 {
	return [2]float64{f.A*p[0] + f.B*p[1] + f.Tx, f.C*p[0] + f.D*p[1] + f.Ty}
}

// transform moves a layout into frame f, so points placed later land in it.
func (l *layout) transform(f frame) {
	for i, p := range l.Pos {
		l.Pos[i] = f.apply(p)
	}
	a := l.Axes
	l.Axes = [4]float64{f.A*a[0] + f.B*a[2], f.A*a[1] + f.B*a[3], f.C*a[0] + f.D*a[2], f.C*a[1] + f.D*a[3]}
}

// fitFrame returns the frame that puts a new map (xy of seqs) where the old
// one was: the least-squares similarity over the files on both, trying the
// map and its mirror image. With fewer than three such files it instead
// centres the map in [-1, 1]², the drawing's default view.
func fitFrame(seqs []int64, xy [][2]float64, old map[int64][2]float64) frame {
	var a, b [][2]float64
	for i, seq := range seqs {
		if o, ok := old[seq]; ok {
			a, b = append(a, xy[i]), append(b, o)
		}
	}
	if len(a) < 3 {
		return fitBox(xy)
	}
	ca, cb := centroid(a), centroid(b)
	best, bestErr := frame{}, math.Inf(1)
	for _, mirror := range []float64{1, -1} {
		var sxx, sxy, norm float64
		for i := range a {
			ax, ay := a[i][0]-ca[0], mirror*(a[i][1]-ca[1])
			bx, by := b[i][0]-cb[0], b[i][1]-cb[1]
			sxx += ax*bx + ay*by
			sxy += ax*by - ay*bx
			norm += ax*ax + ay*ay
		}
		if norm == 0 {
			return fitBox(xy)
		}
		th := math.Atan2(sxy, sxx)
		s := (sxx*math.Cos(th) + sxy*math.Sin(th)) / norm
		cs, sn := s*math.Cos(th), s*math.Sin(th)
		f := frame{A: cs, B: -sn * mirror, C: sn, D: cs * mirror}
		f.Tx = cb[0] - (f.A*ca[0] + f.B*ca[1])
		f.Ty = cb[1] - (f.C*ca[0] + f.D*ca[1])
		var e float64
		for i := range a {
			p := f.apply(a[i])
			e += (p[0]-b[i][0])*(p[0]-b[i][0]) + (p[1]-b[i][1])*(p[1]-b[i][1])
		}
		if e < bestErr {
			best, bestErr = f, e
		}
	}
	return best
}

func centroid(ps [][2]float64) [2]float64 {
	var c [2]float64
	for _, p := range ps {
		c[0] += p[0]
		c[1] += p[1]
	}
	return [2]float64{c[0] / float64(len(ps)), c[1] / float64(len(ps))}
}

// fitBox centres xy in [-0.9, 0.9]² keeping its aspect.
func fitBox(xy [][2]float64) frame {
	if len(xy) == 0 {
		return frame{A: 1, D: 1}
	}
	lo, hi := xy[0], xy[0]
	for _, p := range xy {
		lo = [2]float64{min(lo[0], p[0]), min(lo[1], p[1])}
		hi = [2]float64{max(hi[0], p[0]), max(hi[1], p[1])}
	}
	span := max(hi[0]-lo[0], hi[1]-lo[1])
	s := 1.0
	if span > 0 {
		s = 1.8 / span
	}
	return frame{A: s, D: s, Tx: -s * (lo[0] + hi[0]) / 2, Ty: -s * (lo[1] + hi[1]) / 2}
}
