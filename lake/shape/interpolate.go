package shape

import "math"

// Between is a pair of a track's keyframes made ready to interpolate: the
// work that depends only on the two shapes (resampling rings and chains to
// matched vertices, finding which vertex of one answers which of the other)
// is done once, so each frame between them costs a linear blend.
//
// How each type moves between keyframes (issue 34, after CVAT):
//   - box: each of x, y, width and height linearly;
//   - polygon: ring by ring (rings matched by position), both rings resampled
//     to the larger vertex count at even arc-length steps, the second turned
//     to run the same way round as the first and rotated to the start that
//     lies closest to the first's vertices, then blended vertex by vertex;
//   - polyline: as a ring, without rotation, reversed when that lies closer;
//   - keypoints: point by point, by name; a point labelled on one side only
//     is not labelled between (v 0), a labelled one takes the smaller v;
//   - anything else (a mask, rings that do not pair, a change of type)
//     holds the first keyframe until the second.
type Between struct {
	a, b   Geometry
	ra, rb Rect
	rings  [][2][]float64 // polygon: each ring of a and its match in b
	chain  [2][]float64   // polyline
	kps    [][2]Keypoint  // keypoints paired by name
	hold   bool
}

// NewBetween prepares keyframes a (box ra) and b (box rb).
func NewBetween(a, b Geometry, ra, rb Rect) *Between {
	p := &Between{a: a, b: b, ra: ra, rb: rb}
	switch {
	case a.Type != b.Type:
		p.hold = true
	case a.Type == Polygon && len(a.Polygon) == len(b.Polygon):
		for i := range a.Polygon {
			ra, rb := matchRing(a.Polygon[i], b.Polygon[i])
			p.rings = append(p.rings, [2][]float64{ra, rb})
		}
	case a.Type == Polyline:
		p.chain[0], p.chain[1] = matchChain(a.Points, b.Points)
	case a.Type == Keypoints:
		p.kps = pairKeypoints(a.Keypoints, b.Keypoints)
	case a.Type == Box || a.Type == "" || a.Type == Class:
	default:
		p.hold = true
	}
	return p
}

// At is the shape at t in [0, 1] (0 the first keyframe, 1 the second) and
// its box. A held shape is the first keyframe's until t reaches 1.
func (p *Between) At(t float64) (Geometry, Rect) {
	if t >= 1 {
		return p.b, p.rb
	}
	if p.hold || t <= 0 {
		return p.a, p.ra
	}
	g := Geometry{Type: p.a.Type}
	switch p.a.Type {
	case Polygon:
		g.Polygon = make([][]float64, len(p.rings))
		for i, r := range p.rings {
			g.Polygon[i] = lerpFlat(r[0], r[1], t)
		}
	case Polyline:
		g.Points = lerpFlat(p.chain[0], p.chain[1], t)
	case Keypoints:
		g.Keypoints = make([]Keypoint, len(p.kps))
		for i, k := range p.kps {
			g.Keypoints[i] = lerpKeypoint(k[0], k[1], t)
		}
	default:
		return g, LerpRect(p.ra, p.rb, t)
	}
	return g, g.Bounds()
}

// LerpRect blends two boxes: each of x, y, width and height linearly.
func LerpRect(a, b Rect, t float64) Rect {
	return Rect{X: lerp(a.X, b.X, t), Y: lerp(a.Y, b.Y, t), W: lerp(a.W, b.W, t), H: lerp(a.H, b.H, t)}
}

func lerp(a, b, t float64) float64 { return a + (b-a)*t }

func lerpFlat(a, b []float64, t float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = lerp(a[i], b[i], t)
	}
	return out
}

func lerpKeypoint(a, b Keypoint, t float64) Keypoint {
	if a.V == 0 || b.V == 0 {
		return Keypoint{Name: a.Name}
	}
	return Keypoint{Name: a.Name, X: lerp(a.X, b.X, t), Y: lerp(a.Y, b.Y, t), V: min(a.V, b.V)}
}

// pairKeypoints pairs points by name in a's order, then b's points a lacks.
func pairKeypoints(a, b []Keypoint) [][2]Keypoint {
	byName := make(map[string]Keypoint, len(b))
	for _, k := range b {
		byName[k.Name] = k
	}
	out := make([][2]Keypoint, 0, max(len(a), len(b)))
	seen := make(map[string]bool, len(a))
	for _, k := range a {
		seen[k.Name] = true
		out = append(out, [2]Keypoint{k, byName[k.Name]}) // absent in b: v 0
	}
	for _, k := range b {
		if !seen[k.Name] {
			out = append(out, [2]Keypoint{{Name: k.Name}, k})
		}
	}
	return out
}

// matchRing resamples two closed rings to one vertex count and pairs their
// vertices: b runs the same way round as a, starting at the rotation whose
// vertices lie closest (least squared distance) to a's.
func matchRing(a, b []float64) ([]float64, []float64) {
	n := max(len(a), len(b)) / 2
	ra, rb := resample(a, n, true), resample(b, n, true)
	if (signedArea(ra) < 0) != (signedArea(rb) < 0) {
		rb = reversed(rb)
	}
	best, bestD := 0, math.Inf(1)
	for s := range n {
		d := 0.0
		for i := 0; i < n && d < bestD; i++ {
			j := (i + s) % n
			dx, dy := ra[2*i]-rb[2*j], ra[2*i+1]-rb[2*j+1]
			d += dx*dx + dy*dy
		}
		if d < bestD {
			best, bestD = s, d
		}
	}
	rot := make([]float64, 2*n)
	for i := range n {
		j := (i + best) % n
		rot[2*i], rot[2*i+1] = rb[2*j], rb[2*j+1]
	}
	return ra, rot
}

// matchChain resamples two open chains to one vertex count, b reversed when
// its ends lie closer to a's the other way.
func matchChain(a, b []float64) ([]float64, []float64) {
	n := max(len(a), len(b)) / 2
	ra, rb := resample(a, n, false), resample(b, n, false)
	last := 2 * (n - 1)
	same := dist2(ra[0], ra[1], rb[0], rb[1]) + dist2(ra[last], ra[last+1], rb[last], rb[last+1])
	swapped := dist2(ra[0], ra[1], rb[last], rb[last+1]) + dist2(ra[last], ra[last+1], rb[0], rb[1])
	if swapped < same {
		rb = reversed(rb)
	}
	return ra, rb
}

func dist2(x0, y0, x1, y1 float64) float64 { return (x0-x1)*(x0-x1) + (y0-y1)*(y0-y1) }

// resample places n points at even arc-length steps along xy (closed: back
// to the first vertex; open: from the first to the last), starting at the
// first vertex. A chain that already has n points keeps them.
func resample(xy []float64, n int, closed bool) []float64 {
	k := len(xy) / 2
	if k == n || k < 2 {
		return append([]float64(nil), xy...)
	}
	edges := k - 1
	if closed {
		edges = k
	}
	lengths := make([]float64, edges)
	total := 0.0
	for e := range edges {
		i, j := e, (e+1)%k
		lengths[e] = math.Sqrt(dist2(xy[2*i], xy[2*i+1], xy[2*j], xy[2*j+1]))
		total += lengths[e]
	}
	steps := n
	if !closed {
		steps = n - 1
	}
	out := make([]float64, 0, 2*n)
	e, walked := 0, 0.0
	for p := range n {
		at := total * float64(p) / float64(steps)
		for e < edges-1 && walked+lengths[e] < at {
			walked += lengths[e]
			e++
		}
		f := 0.0
		if lengths[e] > 0 {
			f = min(1, (at-walked)/lengths[e])
		}
		i, j := e, (e+1)%k
		out = append(out, lerp(xy[2*i], xy[2*j], f), lerp(xy[2*i+1], xy[2*j+1], f))
	}
	return out
}

func signedArea(xy []float64) float64 {
	k := len(xy) / 2
	s := 0.0
	for i := range k {
		j := (i + 1) % k
		s += xy[2*i]*xy[2*j+1] - xy[2*j]*xy[2*i+1]
	}
	return s / 2
}

func reversed(xy []float64) []float64 {
	k := len(xy) / 2
	out := make([]float64, len(xy))
	for i := range k {
		out[2*i], out[2*i+1] = xy[2*(k-1-i)], xy[2*(k-1-i)+1]
	}
	return out
}
