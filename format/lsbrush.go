package format

import (
	"fmt"

	"github.com/framelake/framelake/lake/shape"
)

// Label Studio's brush: value.rle is a list of bytes, a bit-packed RLE
// (thi.ng's rle-pack, which Label Studio's editor writes and
// label-studio-converter's brush.py decodes) of the RGBA pixels of an
// original_width × original_height image, row by row. Bits are read most
// significant first: 32 bits the number of values, 5 bits the word size
// less one, four times 4 bits the four run-length sizes less one; then
// until every value is out, a flag bit, 2 bits picking a run-length size,
// that many bits n: n+1 values follow, one word repeated (flag 1) or n+1
// words each (flag 0). A pixel is the brush's where its alpha (the fourth
// value) is above 0, as the converter's ls_rle_to_coco_rle reads it.

// maxBrushPixels bounds a brush's image, the lake's default MaxPixels: a
// brush claiming more cannot belong to an image the lake takes.
const maxBrushPixels = 100_000_000

// maxBrushSide bounds each side too: decoding keeps a list of spans a row
// and a cursor a row, which a 1×100,000,000 claim would make gigabytes.
const maxBrushSide = 1 << 16

// bitReader reads big-endian bit fields from bytes.
type bitReader struct {
	b   []byte
	pos int // in bits
}

func (r *bitReader) read(n int) (uint32, error) {
	if r.pos+n > 8*len(r.b) {
		return 0, fmt.Errorf("the RLE ends in the middle of a field (at bit %d of %d)", r.pos, 8*len(r.b))
	}
	var v uint32
	for range n {
		v = v<<1 | uint32(r.b[r.pos>>3]>>(7-r.pos&7)&1)
		r.pos++
	}
	return v, nil
}

// lsRuns walks Label Studio's RLE, calling run for each stretch [i, j) of
// values equal to v, and returns how many values the header declares,
// which must be want unless want is negative (checked before any run). A
// run past that number is cut at it, as Label Studio's own decoder (a
// typed array that drops writes past its end) reads it.
func lsRuns(data []byte, want int, run func(i, j int, v uint32)) (int, error) {
	r := &bitReader{b: data}
	num, err := r.read(32)
	if err != nil {
		return 0, err
	}
	ws, err := r.read(5)
	if err != nil {
		return 0, err
	}
	if want >= 0 && int64(num) != int64(want) {
		return int(num), fmt.Errorf("the RLE holds %d values, not %d", num, want)
	}
	word := int(ws) + 1
	var sizes [4]int
	for k := range sizes {
		s, err := r.read(4)
		if err != nil {
			return 0, err
		}
		sizes[k] = int(s) + 1
	}
	n := int(num)
	for i := 0; i < n; {
		flag, err := r.read(1)
		if err != nil {
			return n, fmt.Errorf("the RLE ends after %d of its %d values", i, n)
		}
		k, err := r.read(2)
		if err != nil {
			return n, fmt.Errorf("the RLE ends after %d of its %d values", i, n)
		}
		l, err := r.read(sizes[k])
		if err != nil {
			return n, fmt.Errorf("the RLE ends after %d of its %d values", i, n)
		}
		j := i + 1 + int(l)
		if flag == 1 {
			v, err := r.read(word)
			if err != nil {
				return n, fmt.Errorf("the RLE ends after %d of its %d values", i, n)
			}
			run(i, min(j, n), v)
			i = j
			continue
		}
		for ; i < j; i++ {
			v, err := r.read(word)
			if err != nil {
				return n, fmt.Errorf("the RLE ends after %d of its %d values", i, n)
			}
			if i < n {
				run(i, i+1, v)
			}
		}
	}
	return n, nil
}

// lsBrushMask decodes a brush's RLE on its width × height image into the
// lake's mask: COCO's column-major RLE of the pixels whose alpha is above
// 0. It keeps the painted runs of each row, not the image's pixels, so a
// 4K brush costs its runs, not 33 MB of RGBA.
func lsBrushMask(rle []int, width, height int) (*shape.EncodedMask, error) {
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("no original_width and original_height: a brush cannot be placed without its image's size")
	}
	if width > maxBrushPixels/height || width > maxBrushSide || height > maxBrushSide {
		return nil, fmt.Errorf("a %dx%d image is over %d pixels or %d a side", width, height, maxBrushPixels, maxBrushSide)
	}
	data := make([]byte, len(rle))
	for i, v := range rle {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("rle[%d] is %d, not a byte (0-255)", i, v)
		}
		data[i] = byte(v)
	}
	rows := make([][][2]int, height) // painted [x0, x1) spans of each row, in order
	paint := func(p0, p1 int) {
		for p0 < p1 {
			y, x0 := p0/width, p0%width
			x1 := min(width, x0+p1-p0)
			if n := len(rows[y]); n > 0 && rows[y][n-1][1] == x0 {
				rows[y][n-1][1] = x1
			} else {
				rows[y] = append(rows[y], [2]int{x0, x1})
			}
			p0 += x1 - x0
		}
	}
	_, err := lsRuns(data, width*height*4, func(i, j int, v uint32) {
		// Values 4p..4p+3 are pixel p's RGBA: the alphas in [i, j) are pixels [i/4, j/4).
		if v > 0 {
			paint(i/4, j/4)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%w (4 values a pixel of the %dx%d image)", err, width, height)
	}
	r := columnRuns(rows, width, height)
	if r.Area() == 0 {
		return nil, fmt.Errorf("the brush paints no pixel")
	}
	return &shape.EncodedMask{Size: [2]int{height, width}, Counts: r.String()}, nil
}

// columnRuns turns rows of painted spans into COCO's column-major RLE,
// walking the image column by column with a cursor into each row's spans.
func columnRuns(rows [][][2]int, width, height int) shape.RLE {
	r := shape.RLE{Height: height, Width: width}
	cur := make([]int, height)
	var run uint32
	set := false
	for x := range width {
		for y := range height {
			spans := rows[y]
			for cur[y] < len(spans) && spans[cur[y]][1] <= x {
				cur[y]++
			}
			on := cur[y] < len(spans) && spans[cur[y]][0] <= x
			if on != set {
				r.Counts = append(r.Counts, run)
				run, set = 0, on
			}
			run++
		}
	}
	r.Counts = append(r.Counts, run)
	return r
}
