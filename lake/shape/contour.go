package shape

import "math"

// Outline turns a mask into polygon rings, x1, y1, x2, y2, ..., for the
// workspace's mask-to-polygon tool: each part's outer boundary and each
// hole's boundary, traced along pixel edges (so a ring's corners sit on
// pixel corners and, read even-odd as framelake reads polygons, the rings
// at tolerance 0 cover exactly the mask's pixels), then simplified by
// Douglas–Peucker: no dropped vertex lies farther than tolerance pixels
// from the simplified ring. A ring left with fewer than 3 vertices (a speck
// or a hole smaller than the tolerance) is dropped. Parts are 8-connected,
// as OpenCV's findContours reads them; holes are therefore 4-connected.
// Rings come in raster order of their top-left pixel, parts and holes mixed.
func Outline(r RLE, tolerance float64) [][]float64 {
	if math.IsNaN(tolerance) || tolerance < 0 {
		tolerance = 0
	}
	g := newGrid(r)
	var rings [][]float64
	next := int32(1)
	for y := 1; y <= r.Height; y++ {
		for x := 1; x <= r.Width; x++ {
			i := y*g.w + x
			if g.label[i] != 0 {
				continue
			}
			fg := g.bits[i] == 1
			if !fg && g.outside[i] {
				continue
			}
			// The first pixel of a part or hole in raster order: its top-left
			// corner is a corner of its boundary, with the edge heading east.
			g.fill(i, next, fg)
			ring := g.trace(x, y, next, fg)
			next++
			if s := simplifyRing(ring, tolerance); len(s) >= 6 {
				rings = append(rings, s)
			}
		}
	}
	return rings
}

// VertexCount is the number of vertices of rings.
func VertexCount(rings [][]float64) int {
	n := 0
	for _, r := range rings {
		n += len(r) / 2
	}
	return n
}

// grid is the mask row-major with a one-pixel border of background, so the
// tracer never leaves it.
type grid struct {
	w, h    int // padded
	bits    []byte
	label   []int32 // part or hole number, 0 none yet
	outside []bool  // background 4-connected to the border: not a hole
}

func newGrid(r RLE) *grid {
	g := &grid{w: r.Width + 2, h: r.Height + 2}
	n := g.w * g.h
	g.bits, g.label, g.outside = make([]byte, n), make([]int32, n), make([]bool, n)
	pos := 0 // column-major index into the mask
	var v byte
	for _, c := range r.Counts {
		if v == 1 {
			for k := pos; k < pos+int(c); k++ {
				x, y := k/r.Height, k%r.Height
				g.bits[(y+1)*g.w+x+1] = 1
			}
		}
		pos += int(c)
		v ^= 1
	}
	// Background reachable from the border, 4-connected.
	stack := []int{0}
	g.outside[0] = true
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range g.neighbours(i, false) {
			if j >= 0 && g.bits[j] == 0 && !g.outside[j] {
				g.outside[j] = true
				stack = append(stack, j)
			}
		}
	}
	return g
}

// neighbours lists the 4 (or 8) neighbours of i, -1 past the grid.
func (g *grid) neighbours(i int, eight bool) []int {
	x, y := i%g.w, i/g.w
	out := make([]int, 0, 8)
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if (dx == 0 && dy == 0) || (!eight && dx != 0 && dy != 0) {
				continue
			}
			nx, ny := x+dx, y+dy
			if nx < 0 || ny < 0 || nx >= g.w || ny >= g.h {
				out = append(out, -1)
				continue
			}
			out = append(out, ny*g.w+nx)
		}
	}
	return out
}

// fill labels the part (8-connected foreground) or hole (4-connected
// background) that holds i.
func (g *grid) fill(i int, k int32, fg bool) {
	want := byte(0)
	if fg {
		want = 1
	}
	g.label[i] = k
	stack := []int{i}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range g.neighbours(i, fg) {
			if j >= 0 && g.label[j] == 0 && g.bits[j] == want {
				g.label[j] = k
				stack = append(stack, j)
			}
		}
	}
}

// trace walks the outer boundary of region k along pixel edges, the region
// on the right hand (y grows downwards), from the top-left corner of its
// first pixel (x, y) heading east, and returns its corners in mask pixels.
// At each corner the two pixels ahead decide: the left one in the region
// turns left (for a part, a diagonal neighbour is connected), else the
// right one in it goes straight, else the boundary turns right. For a hole
// (4-connected) a diagonal is not connected: the right one missing turns
// right first.
func (g *grid) trace(x, y int, k int32, eight bool) []float64 {
	in := func(px, py int) bool {
		return px >= 0 && py >= 0 && px < g.w && py < g.h && g.label[py*g.w+px] == k
	}
	vx, vy, dx, dy := x, y, 1, 0
	var ring []float64
	for {
		// Pixels beside the edge from (vx, vy) to (vx+dx, vy+dy), seen along it.
		rdx, rdy := -dy, dx // the right hand
		ax, ay := 2*vx+dx, 2*vy+dy
		right := in((ax+rdx)>>1, (ay+rdy)>>1)
		left := in((ax-rdx)>>1, (ay-rdy)>>1)
		ndx, ndy := dx, dy
		switch {
		case eight && left, !eight && right && left:
			ndx, ndy = dy, -dx
		case right:
		default:
			ndx, ndy = rdx, rdy
		}
		if ring != nil && vx == x && vy == y && ndx == 1 && ndy == 0 {
			// Back at the start corner (the only corner of the region that
			// the first pixel alone touches), about to retrace the first edge.
			return ring
		}
		if ndx != dx || ndy != dy || ring == nil {
			ring = append(ring, float64(vx-1), float64(vy-1))
		}
		dx, dy = ndx, ndy
		vx, vy = vx+dx, vy+dy
	}
}

// simplifyRing is Douglas–Peucker on a closed ring: split at the vertex
// farthest from the first, simplify both halves.
func simplifyRing(ring []float64, tol float64) []float64 {
	n := len(ring) / 2
	if n < 3 {
		return nil
	}
	far, best := 0, -1.0
	for i := 1; i < n; i++ {
		d := math.Hypot(ring[2*i]-ring[0], ring[2*i+1]-ring[1])
		if d > best {
			far, best = i, d
		}
	}
	keep := make([]bool, n+1)
	keep[0], keep[far], keep[n] = true, true, true
	at := func(i int) (float64, float64) { i %= n; return ring[2*i], ring[2*i+1] }
	dp(at, 0, far, tol, keep)
	dp(at, far, n, tol, keep)
	var out []float64
	for i := 0; i < n; i++ {
		if keep[i] {
			x, y := at(i)
			out = append(out, x, y)
		}
	}
	return out
}

// dp keeps, between kept vertices a and b, the farthest vertex from the
// segment ab while it lies farther than tol (iteratively: a traced ring of a
// 4K mask has tens of thousands of corners).
func dp(at func(int) (float64, float64), a, b int, tol float64, keep []bool) {
	type span struct{ a, b int }
	stack := []span{{a, b}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.b-s.a < 2 {
			continue
		}
		ax, ay := at(s.a)
		bx, by := at(s.b)
		far, best := -1, tol
		for i := s.a + 1; i < s.b; i++ {
			px, py := at(i)
			if d := segDist(px, py, ax, ay, bx, by); d > best {
				far, best = i, d
			}
		}
		if far < 0 {
			continue
		}
		keep[far] = true
		stack = append(stack, span{s.a, far}, span{far, s.b})
	}
}

// segDist is the distance from p to the segment ab.
func segDist(px, py, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	l := dx*dx + dy*dy
	if l == 0 {
		return math.Hypot(px-ax, py-ay)
	}
	t := max(0, min(1, ((px-ax)*dx+(py-ay)*dy)/l))
	return math.Hypot(px-ax-t*dx, py-ay-t*dy)
}
