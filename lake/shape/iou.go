package shape

// RectIoU is pycocotools' bbIou for one pair: the intersection over the
// union, or over the detection's area when the ground truth is a crowd
// region; 0 when the boxes do not overlap.
func RectIoU(d, g Rect, crowd bool) float64 {
	w := min(d.X+d.W, g.X+g.W) - max(d.X, g.X)
	if w <= 0 {
		return 0
	}
	h := min(d.Y+d.H, g.Y+g.H) - max(d.Y, g.Y)
	if h <= 0 {
		return 0
	}
	i := w * h
	u := d.W*d.H + g.W*g.H - i
	if crowd {
		u = d.W * d.H
	}
	return i / u
}

// Prepared is a mask with what every comparison needs worked out once: its
// box, its area and its set runs as [start, end) positions.
type Prepared struct {
	RLE   RLE
	Box   Rect
	Area  int
	spans []uint32
}

// Prepare measures r for IoU.
func Prepare(r RLE) *Prepared {
	p := &Prepared{RLE: r, Box: r.Bounds(), spans: make([]uint32, 0, len(r.Counts))}
	var pos uint32
	for i, c := range r.Counts {
		if i%2 == 1 && c > 0 {
			p.spans = append(p.spans, pos, pos+c)
			p.Area += int(c)
		}
		pos += c
	}
	return p
}

// IoU is pycocotools' rleIou for one pair, d the detection and g the ground
// truth: 0 when their boxes do not overlap, -1 when the masks' sizes
// differ, else the pixels both set over the pixels either sets, or over the
// detection's pixels when g is a crowd region.
func (d *Prepared) IoU(g *Prepared, crowd bool) float64 {
	if RectIoU(d.Box, g.Box, crowd) <= 0 {
		return 0
	}
	if d.RLE.Height != g.RLE.Height || d.RLE.Width != g.RLE.Width {
		return -1
	}
	i := overlap(d.spans, g.spans)
	if i == 0 {
		return 0
	}
	u := d.Area + g.Area - i
	if crowd {
		u = d.Area
	}
	return float64(i) / float64(u)
}

// IoU is rleIou for one pair of masks; see Prepared.IoU, which saves the
// measuring when one mask meets many.
func IoU(d, g RLE, crowd bool) float64 { return Prepare(d).IoU(Prepare(g), crowd) }

// overlap counts the positions two sorted span lists share. Only the set
// runs are walked, not the runs of zeros between them: the union is the
// two areas less this count.
func overlap(a, b []uint32) int {
	n := 0
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ae, be := a[i+1], b[j+1]
		if s, e := max(a[i], b[j]), min(ae, be); e > s {
			n += int(e - s)
		}
		if ae < be {
			i += 2
		} else {
			j += 2
		}
	}
	return n
}
