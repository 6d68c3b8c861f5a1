package shape

import (
	"fmt"
	"strings"
)

// Area is the number of pixels set (rleArea).
func (r RLE) Area() int {
	n := 0
	for i := 1; i < len(r.Counts); i += 2 {
		n += int(r.Counts[i])
	}
	return n
}

// Bounds is the box of the set pixels in whole pixels, as rleToBbox gives
// it: a run that wraps from one column into the next spans the whole
// height. An empty mask has a zero box.
func (r RLE) Bounds() Rect {
	h := uint32(r.Height)
	m := len(r.Counts) / 2 * 2
	if m == 0 || h == 0 {
		return Rect{}
	}
	xs, ys, xe, ye := uint32(r.Width), h, uint32(0), uint32(0)
	var cc, xp uint32
	for j := 0; j < m; j++ {
		cc += r.Counts[j]
		t := cc - uint32(j%2)
		y := t % h
		x := (t - y) / h
		if j%2 == 0 {
			xp = x
		} else if xp < x {
			ys, ye = 0, h-1
		}
		xs, xe = min(xs, x), max(xe, x)
		ys, ye = min(ys, y), max(ye, y)
	}
	return Rect{X: float64(xs), Y: float64(ys), W: float64(xe - xs + 1), H: float64(ye - ys + 1)}
}

// Check reports an RLE whose counts do not cover Height×Width exactly.
func (r RLE) Check() error {
	if r.Height <= 0 || r.Width <= 0 {
		return fmt.Errorf("mask size %dx%d: height and width must be positive", r.Height, r.Width)
	}
	var sum uint64
	for _, c := range r.Counts {
		sum += uint64(c)
	}
	if want := uint64(r.Height) * uint64(r.Width); sum != want {
		return fmt.Errorf("mask counts sum to %d, not height×width = %d×%d = %d", sum, r.Height, r.Width, want)
	}
	return nil
}

// Decode returns the mask as Height×Width bytes of 0 and 1, column-major.
func (r RLE) Decode() []byte {
	out := make([]byte, 0, r.Height*r.Width)
	var v byte
	for _, c := range r.Counts {
		for range c {
			out = append(out, v)
		}
		v ^= 1
	}
	return out
}

// Encode makes an RLE of a column-major bitmap (any non-zero byte is set).
func Encode(bits []byte, height, width int) RLE {
	r := RLE{Height: height, Width: width}
	var run uint32
	var prev byte
	for _, b := range bits[:height*width] {
		if b != 0 {
			b = 1
		}
		if b != prev {
			r.Counts = append(r.Counts, run)
			run, prev = 0, b
		}
		run++
	}
	r.Counts = append(r.Counts, run)
	return r
}

// String is COCO's compressed form of the counts (rleToString): each count,
// past the first two as the difference from the count two before, in
// groups of 5 bits, least significant first, each group a character from
// '0' (48) up with 0x20 set while more groups follow.
func (r RLE) String() string {
	var s strings.Builder
	s.Grow(len(r.Counts) * 2)
	for i, c := range r.Counts {
		x := int64(c)
		if i > 2 {
			x -= int64(r.Counts[i-2])
		}
		for more := true; more; {
			ch := byte(x & 0x1f)
			x >>= 5
			if ch&0x10 != 0 {
				more = x != -1
			} else {
				more = x != 0
			}
			if more {
				ch |= 0x20
			}
			s.WriteByte(ch + 48)
		}
	}
	return s.String()
}

// ParseString reads COCO's compressed counts (rleFrString) for a mask of
// height×width, and checks that they cover it.
func ParseString(s string, height, width int) (RLE, error) {
	r := RLE{Height: height, Width: width, Counts: make([]uint32, 0, len(s)/2)}
	for p := 0; p < len(s); {
		var x int64
		for k := 0; ; k++ {
			if p >= len(s) {
				return RLE{}, fmt.Errorf("mask counts end inside a number")
			}
			if s[p] < 48 || s[p] > 48+63 || k > 6 {
				return RLE{}, fmt.Errorf("mask counts: character %d (%q) is not COCO's compressed RLE", p, s[p])
			}
			c := int64(s[p] - 48)
			x |= (c & 0x1f) << (5 * k)
			p++
			if c&0x20 == 0 {
				if c&0x10 != 0 {
					x |= -1 << (5 * (k + 1))
				}
				break
			}
		}
		if m := len(r.Counts); m > 2 {
			x += int64(r.Counts[m-2])
		}
		if x < 0 || x > 1<<32-1 {
			return RLE{}, fmt.Errorf("mask counts: count %d is %d, out of range", len(r.Counts), x)
		}
		r.Counts = append(r.Counts, uint32(x))
	}
	return r, r.Check()
}

// op combines two pixel values in a merge.
type op func(a, b bool) bool

var (
	union     op = func(a, b bool) bool { return a || b }
	intersect op = func(a, b bool) bool { return a && b }
	xor       op = func(a, b bool) bool { return a != b }
)

// Union is the pixels set in any of rs (pycocotools' merge), nil when rs is empty.
func Union(rs ...RLE) RLE { return mergeAll(rs, union) }

// Intersection is the pixels set in every one of rs.
func Intersection(rs ...RLE) RLE { return mergeAll(rs, intersect) }

// EvenOdd is the pixels set in an odd number of rs.
func EvenOdd(rs ...RLE) RLE { return mergeAll(rs, xor) }

func mergeAll(rs []RLE, f op) RLE {
	if len(rs) == 0 {
		return RLE{}
	}
	out := rs[0]
	for _, r := range rs[1:] {
		out = merge(out, r, f)
	}
	return out
}

// merge walks two run lists at once, as rleMerge does, emitting a run each
// time the combined value changes. Masks of different sizes merge to the
// empty mask, as in pycocotools.
func merge(a, b RLE, f op) RLE {
	if a.Height != b.Height || a.Width != b.Width {
		return RLE{}
	}
	out := RLE{Height: a.Height, Width: a.Width, Counts: make([]uint32, 0, len(a.Counts)+len(b.Counts))}
	if len(a.Counts) == 0 || len(b.Counts) == 0 {
		return out
	}
	ca, cb := a.Counts[0], b.Counts[0]
	ia, ib := 1, 1
	var va, vb, v bool
	var cc uint32
	for ct := uint32(1); ct > 0; {
		c := min(ca, cb)
		cc += c
		ca -= c
		if ca == 0 && ia < len(a.Counts) {
			ca, va = a.Counts[ia], !va
			ia++
		}
		cb -= c
		if cb == 0 && ib < len(b.Counts) {
			cb, vb = b.Counts[ib], !vb
			ib++
		}
		ct = ca + cb
		vp := v
		v = f(va, vb)
		if v != vp || ct == 0 {
			out.Counts = append(out.Counts, cc)
			cc = 0
		}
	}
	return out
}
