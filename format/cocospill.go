package format

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
)

// polySpill holds a COCO file's polygons between reading the file and
// emitting their images, in a temporary file, not in memory: COCO lists the
// annotations after the images, in any order, so an image's shapes are only
// known once the whole file is read. A million polygons of 30 vertices are
// 500 MB as float64 slices; here they cost 12 bytes each in memory.
type polySpill struct {
	f    *os.File
	w    *bufio.Writer
	off  int64
	buf  []byte
	read bool // flushed for reading; nothing is written after
	// win holds the spill's bytes from winOff: one read serves the
	// polygons written after the one asked for, which an image's usually are.
	win    []byte
	winOff int64
}

// spillWindow is how much of the spill one read brings in at least. Small
// enough that polygons asked for in no order cost about what a read each did.
const spillWindow = 16 << 10

// polyRef is where one polygon is in the spill; n 0 is none.
type polyRef struct {
	off int64
	n   uint32
}

// newPolySpill creates the spill in the system's temp folder, unlinked at
// once: the open file serves the read and a killed import leaves nothing.
func newPolySpill() (*polySpill, error) {
	f, err := os.CreateTemp("", ".framelake-coco-polygons-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the COCO polygons: %w", err)
	}
	os.Remove(f.Name())
	return &polySpill{f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
}

func (s *polySpill) close() { s.f.Close() }

// put writes rings as their count, then each ring's length and numbers.
func (s *polySpill) put(rings [][]float64) (polyRef, error) {
	b := AppendRings(s.buf[:0], rings)
	s.buf = b
	ref := polyRef{s.off, uint32(len(b))}
	if _, err := s.w.Write(b); err != nil {
		return ref, fmt.Errorf("spilling a COCO polygon: %w", err)
	}
	s.off += int64(len(b))
	return ref, nil
}

// get reads the rings at ref back.
func (s *polySpill) get(ref polyRef) ([][]float64, error) {
	b, err := s.bytes(ref)
	if err != nil {
		return nil, err
	}
	return ReadRings(b)
}

// bytes gives the rings at ref in AppendRings' form, valid until the next
// read of the spill.
func (s *polySpill) bytes(ref polyRef) ([]byte, error) {
	if !s.read {
		if err := s.w.Flush(); err != nil {
			return nil, fmt.Errorf("spilling COCO polygons: %w", err)
		}
		s.read = true
	}
	end := ref.off + int64(ref.n)
	if ref.off < s.winOff || end > s.winOff+int64(len(s.win)) {
		n := min(max(int64(ref.n), spillWindow), s.off-ref.off)
		if cap(s.win) < int(n) {
			s.win = make([]byte, n)
		}
		s.win, s.winOff = s.win[:n], ref.off
		if _, err := s.f.ReadAt(s.win, ref.off); err != nil {
			s.win = s.win[:0]
			return nil, fmt.Errorf("reading a spilled COCO polygon: %w", err)
		}
	}
	return s.win[ref.off-s.winOff : end-s.winOff], nil
}

// oneRing says whether b, rings in AppendRings' form, holds one ring.
func oneRing(b []byte) bool { return len(b) >= 4 && binary.LittleEndian.Uint32(b) == 1 }

// take gives an empty slice of capacity n from arena's room (a new slice
// when arena is nil); a full arena is replaced by a larger one.
func take(arena *[]float64, n int) []float64 {
	if arena == nil {
		return make([]float64, 0, n)
	}
	a := *arena
	if cap(a)-len(a) < n {
		a = make([]float64, 0, max(n, 2*cap(a), 1<<12))
	}
	*arena = a[:len(a)+n]
	return a[len(a) : len(a) : len(a)+n]
}

// AppendRings appends rings in a compact binary form, what ReadRings
// reads: their count, then each ring's length, its kind and its numbers.
// A ring whose numbers are all hundredths (COCO writes two decimals) is
// kept as varints of each number's change in hundredths from the same
// axis's number before: a 30-vertex polygon is about 130 bytes, not 480,
// and the spills of a million of them (here and in labelimport) write and
// read a quarter as much. Any other ring keeps its float64s. Both come back
// exact.
func AppendRings(b []byte, rings [][]float64) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(rings)))
	for _, r := range rings {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r)))
		if hundredths(r) {
			b = append(b, ringHundredths)
			var prev [2]int64
			for i, v := range r {
				n := int64(math.Round(v * 100))
				b = binary.AppendVarint(b, n-prev[i&1])
				prev[i&1] = n
			}
			continue
		}
		b = append(b, ringFloats)
		for _, v := range r {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// A ring's kind in AppendRings' form.
const (
	ringFloats     = 0
	ringHundredths = 1
)

// hundredths says whether every number of r is n/100 for an integer n
// that float64 holds exactly, as float64(n)/100 gives it back (not -0).
func hundredths(r []float64) bool {
	for _, v := range r {
		if !(math.Abs(v) < 1<<40) || v == 0 && math.Signbit(v) {
			return false
		}
		if float64(int64(math.Round(v*100)))/100 != v {
			return false
		}
	}
	return true
}

// ReadRings reads what AppendRings wrote, all of b.
func ReadRings(b []byte) ([][]float64, error) {
	bad := fmt.Errorf("a spilled polygon does not read back")
	if len(b) < 4 {
		return nil, bad
	}
	rings := make([][]float64, binary.LittleEndian.Uint32(b))
	b = b[4:]
	for i := range rings {
		if len(b) < 5 {
			return nil, bad
		}
		n, kind := int(binary.LittleEndian.Uint32(b)), b[4]
		if b = b[5:]; len(b) < n || kind == ringFloats && len(b) < 8*n { // a number takes a byte at least
			return nil, bad
		}
		r := make([]float64, n)
		switch kind {
		case ringFloats:
			for j := range r {
				r[j] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:]))
			}
			b = b[8*n:]
		case ringHundredths:
			var prev [2]int64
			for j := range r {
				d, k := binary.Varint(b)
				if k <= 0 {
					return nil, bad
				}
				prev[j&1] += d
				r[j], b = float64(prev[j&1])/100, b[k:]
			}
		default:
			return nil, bad
		}
		rings[i] = r
	}
	if len(b) != 0 {
		return nil, bad
	}
	return rings, nil
}

// parseRings reads raw as COCO's polygons [[x, y, ...], ...] in one pass,
// where json.Unmarshal scans it twice and then decodes it (most of a
// segmented COCO file's reading); ok is false for anything else (an RLE, a
// string, a number past float64, what is not JSON), which the caller then
// reads with encoding/json and its errors: ok says raw is JSON. The rings'
// numbers go in arena while it has room (nil: none), a new one made when
// it has not: a batch's polygons share one, reused once they are spilled.
func parseRings(raw []byte, arena *[]float64) (rings [][]float64, ok bool) {
	i := 0
	skip := func() {
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
			i++
		}
	}
	expect := func(c byte) bool {
		skip()
		if i < len(raw) && raw[i] == c {
			i++
			return true
		}
		return false
	}
	if !expect('[') {
		return nil, false
	}
	if expect(']') {
		return [][]float64{}, true
	}
	for {
		if !expect('[') {
			return nil, false
		}
		ring := take(arena, numbersIn(raw[i:]))
		if !expect(']') {
			for {
				skip()
				start := i
				for i < len(raw) && (raw[i] >= '0' && raw[i] <= '9' || raw[i] == '-' || raw[i] == '+' || raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E') {
					i++
				}
				if i-start >= maxWord || !jsonNumber(raw[start:i]) { // the guard rewrites a word of maxWord
					return nil, false
				}
				v, ok := decimal(raw[start:i])
				if !ok {
					f, err := strconv.ParseFloat(string(raw[start:i]), 64)
					if start == i || err != nil {
						return nil, false
					}
					v = f
				}
				ring = append(ring, v)
				if expect(']') {
					break
				}
				if !expect(',') {
					return nil, false
				}
			}
		}
		rings = append(rings, ring)
		if expect(']') {
			skip()
			return rings, i == len(raw)
		}
		if !expect(',') {
			return nil, false
		}
	}
}

// numbersIn counts the numbers of the ring raw starts in (its commas up to
// the closing bracket, plus one), so the ring is made once at its size.
func numbersIn(raw []byte) int {
	end := bytes.IndexByte(raw, ']')
	if end < 0 {
		return 0
	}
	return bytes.Count(raw[:end], []byte{','}) + 1
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// ParseFloat is strconv.ParseFloat(string(b), 64), a plain decimal read
// by decimal without a string made or strconv's generality: a MOT gt.txt
// of 900,000 lines has 8 numbers on each.
func ParseFloat(b []byte) (float64, error) {
	if v, ok := decimal(b); ok {
		return v, nil
	}
	return strconv.ParseFloat(string(b), 64)
}

// decimal reads a plain decimal ([-]digits[.digits], at most 15
// significant digits and 22 decimals), as polygons are written, without
// strconv's generality: its digits as an integer divided by a power of ten,
// both exact in a float64, is the correctly rounded value, so it equals
// strconv.ParseFloat's. ok is false for anything else, which the caller
// hands to strconv.
func decimal(b []byte) (v float64, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var mant uint64
	digits, sig, frac, dot := 0, 0, 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if mant > 0 {
				sig++ // leading zeros do not count
			}
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || sig > 15 || frac >= len(pow10) || (dot && frac == 0) || b[0] == '.' {
		return 0, false
	}
	v = float64(mant) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}
