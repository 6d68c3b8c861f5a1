package labelimport

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// boxSpill keeps the boxes the labels give, between reading them and
// storing their batch, in a temporary file rather than in memory: an import
// then holds the boxes of the batches in flight, not those of the whole
// folder (a million boxes were most of an import's live heap, and the
// garbage collector's work). A file's boxes are one or more spans of it.
type boxSpill struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	off    int64
	labels map[string]uint32
	names  []string
	poly   []byte // put's buffer for a polygon
}

// spillHeader is a box's fixed part: label number, four coordinates, line,
// relative, and the lengths of its attributes and its shape.
const spillHeader = 4 + 8*4 + 4 + 1 + 4 + 4

// span is n boxes written at off.
type span struct {
	off int64
	n   int
}

// newBoxSpill creates the spill file in dir ("" for the system's temp
// folder), hidden so that a walk of dir passes it by.
func newBoxSpill(dir string) (*boxSpill, error) {
	f, err := os.CreateTemp(dir, ".framelake-boxes-*")
	if err != nil {
		return nil, fmt.Errorf("import: a temporary file for the boxes: %w", err)
	}
	// Unlinked at once: the open file serves the import, and a killed
	// import leaves nothing behind.
	os.Remove(f.Name())
	return &boxSpill{f: f, w: bufio.NewWriterSize(f, 1<<16), labels: map[string]uint32{}}, nil
}

// close lets the file go (it has no name since newBoxSpill).
func (s *boxSpill) close() { s.f.Close() }

// put writes boxes and returns their span. Each box is its label's number,
// its four coordinates, its line, whether relative, its attributes as JSON
// (length first), and its shape as JSON (length first; none for a box).
func (s *boxSpill) put(boxes []format.Box) (span, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := span{s.off, len(boxes)}
	var buf [spillHeader]byte
	for _, b := range boxes {
		id, ok := s.labels[b.Label]
		if !ok {
			id = uint32(len(s.names))
			s.labels[b.Label] = id
			s.names = append(s.names, b.Label)
		}
		var attrs []byte
		if len(b.Attributes) > 0 {
			var err error
			if attrs, err = json.Marshal(b.Attributes); err != nil {
				return sp, err
			}
		}
		binary.LittleEndian.PutUint32(buf[0:], id)
		for i, v := range []float64{b.X, b.Y, b.W, b.H} {
			binary.LittleEndian.PutUint64(buf[4+8*i:], math.Float64bits(v))
		}
		binary.LittleEndian.PutUint32(buf[36:], uint32(b.Line))
		buf[40] = 0
		if b.Relative {
			buf[40] = 1
		}
		var geometry []byte
		if len(b.Rings) > 0 { // from format.ReadEncoded: kept as they come
			s.poly = append(append(s.poly[:0], polygonMark), b.Rings...)
			geometry = s.poly
		} else if plainPolygon(b.Geometry) {
			s.poly = appendRings(s.poly[:0], b.Polygon)
			geometry = s.poly
		} else if b.Type != "" {
			var err error
			if geometry, err = json.Marshal(b.Geometry); err != nil {
				return sp, err
			}
		}
		binary.LittleEndian.PutUint32(buf[41:], uint32(len(attrs)))
		binary.LittleEndian.PutUint32(buf[45:], uint32(len(geometry)))
		for _, p := range [][]byte{buf[:], attrs, geometry} {
			if _, err := s.w.Write(p); err != nil {
				return sp, err
			}
		}
		s.off += int64(len(buf) + len(attrs) + len(geometry))
	}
	return sp, nil
}

// get reads back the first max boxes of spans, in order.
func (s *boxSpill) get(spans []span, max int) ([]format.Box, error) {
	s.mu.Lock()
	err := s.w.Flush()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []format.Box
	var buf [spillHeader]byte
	for _, sp := range spans {
		r := bufio.NewReader(io.NewSectionReader(s.f, sp.off, math.MaxInt64-sp.off))
		for range sp.n {
			if len(out) == max {
				return out, nil
			}
			if _, err := io.ReadFull(r, buf[:]); err != nil {
				return nil, err
			}
			b := format.Box{Line: int(binary.LittleEndian.Uint32(buf[36:])), Relative: buf[40] == 1}
			s.mu.Lock()
			b.Label = s.names[binary.LittleEndian.Uint32(buf[0:])]
			s.mu.Unlock()
			b.X = math.Float64frombits(binary.LittleEndian.Uint64(buf[4:]))
			b.Y = math.Float64frombits(binary.LittleEndian.Uint64(buf[12:]))
			b.W = math.Float64frombits(binary.LittleEndian.Uint64(buf[20:]))
			b.H = math.Float64frombits(binary.LittleEndian.Uint64(buf[28:]))
			if n := binary.LittleEndian.Uint32(buf[41:]); n > 0 {
				attrs := make([]byte, n)
				if _, err := io.ReadFull(r, attrs); err != nil {
					return nil, err
				}
				if err := json.Unmarshal(attrs, &b.Attributes); err != nil {
					return nil, err
				}
			}
			if n := binary.LittleEndian.Uint32(buf[45:]); n > 0 {
				geometry := make([]byte, n)
				if _, err := io.ReadFull(r, geometry); err != nil {
					return nil, err
				}
				if geometry[0] == polygonMark {
					if b.Polygon, err = format.ReadRings(geometry[1:]); err != nil {
						return nil, err
					}
					b.Type = shape.Polygon
				} else if err := json.Unmarshal(geometry, &b.Geometry); err != nil {
					return nil, err
				}
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// polygonMark starts a polygon spilled as numbers: a million polygons of 30
// vertices took a second and a half of CPU through JSON (an eighth of a
// segmented COCO import's label work). Any other shape is JSON, which starts
// with '{'.
const polygonMark = 'P'

// plainPolygon says whether g is a polygon and nothing else, which
// appendRings keeps whole.
func plainPolygon(g shape.Geometry) bool {
	return g.Type == shape.Polygon && g.Mask == nil && g.Keypoints == nil && g.Points == nil && g.Area == nil
}

// appendRings appends polygonMark and the rings in package format's binary form.
func appendRings(b []byte, rings [][]float64) []byte {
	return format.AppendRings(append(b, polygonMark), rings)
}
