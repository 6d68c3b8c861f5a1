package shape

import (
	"math"
	"slices"
)

// upsample is rleFrPoly's scale: the outline is walked on a grid 5 times
// finer than the pixels, then sampled back at pixel centres.
const upsample = 5

// FromRing rasterises one closed ring, xy = x1, y1, x2, y2, ..., into a
// height×width mask exactly as pycocotools' rleFrPoly: a pixel is set when
// its centre lies inside the outline as traced on the 5× grid. The caller
// checks the ring first (CheckRing): coordinates are finite and within
// reach of the image.
func FromRing(xy []float64, height, width int) RLE {
	k := len(xy) / 2
	x, y := make([]int, k+1), make([]int, k+1)
	for j := range k {
		x[j] = int(upsample*xy[2*j] + .5)
		y[j] = int(upsample*xy[2*j+1] + .5)
	}
	x[k], y[k] = x[0], y[0]
	u, v := traceOutline(x, y)
	return columnRuns(u, v, height, width)
}

// traceOutline lists the points of the 5× grid along each edge of the ring,
// stepping one unit along the edge's longer axis and rounding the other
// (half up), each edge walked from its end with the smaller coordinate on
// that axis so both directions give the same points.
func traceOutline(x, y []int) (u, v []int) {
	n := 0
	for j := range len(x) - 1 {
		n += max(abs(x[j]-x[j+1]), abs(y[j]-y[j+1])) + 1
	}
	u, v = make([]int, 0, n), make([]int, 0, n)
	for j := range len(x) - 1 {
		xs, xe, ys, ye := x[j], x[j+1], y[j], y[j+1]
		dx, dy := abs(xe-xs), abs(ys-ye)
		flip := (dx >= dy && xs > xe) || (dx < dy && ys > ye)
		if flip {
			xs, xe, ys, ye = xe, xs, ye, ys
		}
		if dx >= dy {
			// dx = dy = 0 (a repeated vertex) gives one point whose v is
			// never read: its u equals its neighbours', and only changes
			// of u are sampled.
			s := 0.0
			if dx > 0 {
				s = float64(ye-ys) / float64(dx)
			}
			for d := 0; d <= dx; d++ {
				t := d
				if flip {
					t = dx - d
				}
				u = append(u, t+xs)
				v = append(v, int(float64(ys)+float64(s*float64(t))+.5)) // no fused multiply-add: C rounds the product
			}
			continue
		}
		s := float64(xe-xs) / float64(dy)
		for d := 0; d <= dy; d++ {
			t := d
			if flip {
				t = dy - d
			}
			v = append(v, t+ys)
			u = append(u, int(float64(xs)+float64(s*float64(t))+.5))
		}
	}
	return u, v
}

// columnRuns samples the traced outline where it crosses a column of pixel
// centres: each crossing toggles the mask from that row down, so sorting
// the crossings by column-major position gives the run lengths.
func columnRuns(u, v []int, height, width int) RLE {
	h := float64(height)
	pos := make([]uint32, 0, len(u)/upsample+2)
	for j := 1; j < len(u); j++ {
		if u[j] == u[j-1] {
			continue
		}
		xd := float64(u[j] - 1)
		if u[j] < u[j-1] {
			xd = float64(u[j])
		}
		xd = (xd+.5)/upsample - .5
		if math.Floor(xd) != xd || xd < 0 || xd > float64(width-1) {
			continue
		}
		yd := float64(min(v[j], v[j-1]))
		yd = (yd+.5)/upsample - .5
		if yd < 0 {
			yd = 0
		} else if yd > h {
			yd = h
		}
		yd = math.Ceil(yd)
		pos = append(pos, uint32(int(xd)*height+int(yd)))
	}
	pos = append(pos, uint32(height*width))
	slices.Sort(pos)
	var prev uint32
	for j, p := range pos {
		pos[j] -= prev
		prev = p
	}
	// Two crossings at one position cancel: their zero-length run and the
	// run after it fold into the run before.
	counts := make([]uint32, 0, len(pos))
	counts = append(counts, pos[0])
	for j := 1; j < len(pos); {
		if pos[j] > 0 {
			counts = append(counts, pos[j])
			j++
			continue
		}
		j++
		if j < len(pos) {
			counts[len(counts)-1] += pos[j]
			j++
		}
	}
	return RLE{Height: height, Width: width, Counts: counts}
}

// FromRect rasterises a box as pycocotools' rleFrBbox: the polygon of its
// four corners.
func FromRect(b Rect, height, width int) RLE {
	xe, ye := b.X+b.W, b.Y+b.H
	return FromRing([]float64{b.X, b.Y, b.X, ye, xe, ye, xe, b.Y}, height, width)
}

// Rings rasterises a polygon read even-odd: a ring inside another is a hole.
func Rings(rings [][]float64, height, width int) RLE {
	return EvenOdd(ringMasks(rings, height, width)...)
}

// RingsUnion rasterises a polygon as COCO reads one (pycocotools' annToRLE
// merges its rings): every ring's pixels are set.
func RingsUnion(rings [][]float64, height, width int) RLE {
	return Union(ringMasks(rings, height, width)...)
}

// RingsOverlap says whether two rings of a polygon share a pixel, which is
// where framelake's even-odd reading and COCO's union differ.
func RingsOverlap(rings [][]float64, height, width int) bool {
	ms := ringMasks(rings, height, width)
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			if Intersection(ms[i], ms[j]).Area() > 0 {
				return true
			}
		}
	}
	return false
}

func ringMasks(rings [][]float64, height, width int) []RLE {
	ms := make([]RLE, len(rings))
	for i, r := range rings {
		ms[i] = FromRing(r, height, width)
	}
	return ms
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}
