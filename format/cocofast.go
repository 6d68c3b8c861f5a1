package format

import (
	"bytes"
	"encoding/json"
	"strings"
)

// fastAnnotation reads one COCO annotation, raw, into a in one pass, as
// json.Unmarshal would, and returns its segmentation's bytes (nil when it
// has none) and where they start in raw. It checks that raw is JSON but
// for the segmentation's bytes, whose end it finds by their strings and
// brackets, and which the caller checks as it reads them (cocoSegment). json.Unmarshal
// scanned a segmented annotation three times (its check, its decode, the
// segmentation's skip as a RawMessage) before parseRings read the numbers:
// most of the reading of a file of polygons. ok is false for anything read
// otherwise than exactly as json.Unmarshal reads it (a key in another case
// or twice, an escaped key, a value of another type, a null, a number that
// is not an int64 where one is wanted), which the caller then hands to
// json.Unmarshal for its result and its errors; a is then partly filled.
func fastAnnotation(raw []byte, a *cocoAnnotation) (seg []byte, segAt int, ok bool) {
	s := jscan{b: raw}
	if !s.expect('{') {
		return nil, 0, false
	}
	if s.expect('}') {
		s.ws()
		return nil, 0, s.i == len(raw)
	}
	var seen uint16
	for {
		key, ok := s.key()
		if !ok || !s.expect(':') {
			return nil, 0, false
		}
		s.ws()
		field := -1
		for i, name := range cocoFields {
			if key == name {
				field = i
				break
			}
			if strings.EqualFold(key, name) {
				return nil, 0, false // json.Unmarshal matches it; which one wins is its business
			}
		}
		if field >= 0 {
			if seen&(1<<field) != 0 {
				return nil, 0, false
			}
			seen |= 1 << field
		}
		switch field {
		case 0:
			ok = s.int64(&a.ID)
		case 1:
			ok = s.int64(&a.ImageID)
		case 2:
			ok = s.int64(&a.CategoryID)
		case 3:
			a.BBox, ok = s.floats()
		case 4:
			start := s.i
			if ok = s.pass() && len(bytes.TrimSpace(raw[start:s.i])) > 0; ok {
				seg, segAt = raw[start:s.i], start
			}
		case 5:
			var n int64
			ok = s.int64(&n)
			a.IsCrowd = int(n)
			ok = ok && int64(a.IsCrowd) == n
		case 6:
			ok = s.float(&a.Area)
		case 7:
			start := s.i
			if ok = s.peek() == '{' && s.value(0); ok {
				ok = json.Unmarshal(raw[start:s.i], &a.Attributes) == nil // which checks them
			}
		case 8:
			a.Keypoints, ok = s.floats()
		default:
			ok = s.value(0)
		}
		if !ok {
			return nil, 0, false
		}
		if s.expect('}') {
			s.ws()
			return seg, segAt, s.i == len(raw)
		}
		if !s.expect(',') {
			return nil, 0, false
		}
	}
}

// cocoFields are cocoAnnotation's JSON names, in fastAnnotation's order.
var cocoFields = [...]string{"id", "image_id", "category_id", "bbox", "segmentation", "iscrowd", "area", "attributes", "keypoints"}

// jscan reads JSON a token at a time, refusing (ok false) what is not
// JSON, except where pass finds a value's end.
type jscan struct {
	b []byte
	i int
}

func (s *jscan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *jscan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jscan) expect(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads an object key without escapes, as ASCII; ok false otherwise.
func (s *jscan) key() (string, bool) {
	if !s.expect('"') {
		return "", false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return string(s.b[start : s.i-1]), true
		case c == '\\' || c >= 0x80 || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// number is the bytes of the number at s; none for one of maxWord bytes
// or more, which the guard rewrites (cocoRaw.decode).
func (s *jscan) number() []byte {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		s.i++
	}
	if s.i-start >= maxWord {
		return nil
	}
	return s.b[start:s.i]
}

// int64 reads an integer in int64's range, as json does into an int64.
func (s *jscan) int64(v *int64) bool {
	b := s.number()
	if !jsonNumber(b) {
		return false
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 { // 18 digits never overflow
		return false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	*v = n
	return true
}

// float reads a number as json does into a float64.
func (s *jscan) float(v *float64) bool {
	b := s.number()
	if !jsonNumber(b) {
		return false
	}
	f, err := ParseFloat(b)
	*v = f
	return err == nil
}

// floats reads an array of numbers.
func (s *jscan) floats() ([]float64, bool) {
	if !s.expect('[') {
		return nil, false
	}
	out := []float64{}
	if s.expect(']') {
		return out, true
	}
	for {
		var f float64
		s.ws()
		if !s.float(&f) {
			return nil, false
		}
		out = append(out, f)
		if s.expect(']') {
			return out, true
		}
		if !s.expect(',') {
			return nil, false
		}
	}
}

// pass passes one value by its strings and brackets, without checking it.
func (s *jscan) pass() bool {
	s.ws()
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
			if s.i >= len(s.b) {
				s.i = len(s.b)
				return false // the string does not end
			}
			s.i++
		case '[', '{':
			depth++
			s.i++
		case ']', '}':
			if depth == 0 {
				return true // the end of the object or array holding it
			}
			depth--
			s.i++
		case ',':
			if depth == 0 {
				return true
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && (s.b[s.i-1] == '"' || s.b[s.i-1] == ']' || s.b[s.i-1] == '}') {
			return true // a string, an array or an object ended
		}
	}
	return depth == 0
}

// maxJSONDepth bounds value's recursion: a field's value at depth 0 is
// four levels into a COCO file (top object, annotations, record, value), so
// whatever the guard rewrites as nested past guardDepth fails here first,
// to be judged by the guard (cocoRaw.decode).
const maxJSONDepth = guardDepth - recordDepth - 3

// value reads one JSON value, checking it.
func (s *jscan) value(depth int) bool {
	s.ws()
	if s.i == len(s.b) || depth > maxJSONDepth {
		return false
	}
	switch c := s.b[s.i]; c {
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		if s.expect(end) {
			return true
		}
		for {
			if c == '{' && (!s.str() || !s.expect(':')) || !s.value(depth+1) {
				return false
			}
			if s.expect(end) {
				return true
			}
			if !s.expect(',') {
				return false
			}
		}
	case '"':
		return s.str()
	case 't', 'f', 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(s.b[s.i:min(len(s.b), s.i+5)]), lit) {
				s.i += len(lit)
				return true
			}
		}
		return false
	default:
		return jsonNumber(s.number())
	}
}

// str reads one JSON string, checking its characters and escapes.
func (s *jscan) str() bool {
	if !s.expect('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i == len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if s.i+4 > len(s.b) {
					return false
				}
				for _, h := range s.b[s.i : s.i+4] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// jsonNumber says whether b is a number as JSON writes one:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
