package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonStream walks a JSON document a value at a time, holding only the
// value being read: a COCO file's top-level object and its arrays, whose
// elements it hands over as their bytes. It checks the structure it walks
// (brackets, commas, colons); it finds where a value ends by its strings
// and brackets alone, and whoever decodes the value's bytes checks them
// (json.Unmarshal, json.Valid). json.Decoder scanned each annotation twice
// (its read, then its RawMessage's skip) before the annotation was decoded:
// with a check on the decoding goroutine instead, a segmented COCO file's
// reading lost a third of the work on the goroutine that reads.
type jsonStream struct {
	r    io.Reader
	buf  []byte
	i    int   // the next byte of buf not read
	base int64 // the file offset of buf[0]
	err  error // r's last, once it gave one
}

// syntaxError is a JSON file's structure broken at a byte offset.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// errOffset is where err happened in the file, when it says.
func errOffset(err error) (int64, bool) {
	var se *syntaxError
	if errors.As(err, &se) {
		return se.off, true
	}
	return 0, false
}

func newJSONStream(r io.Reader) *jsonStream {
	return &jsonStream{r: r, buf: make([]byte, 0, 1<<16)}
}

// offset is the file offset of the next byte not read.
func (s *jsonStream) offset() int64 { return s.base + int64(s.i) }

// fill reads more of r into buf, keeping buf[keep:] (keep <= s.i), and
// says by how much buf's indexes moved down; ok is false at the end of r.
func (s *jsonStream) fill(keep int) (moved int, ok bool) {
	if s.err != nil {
		return 0, false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:])
		s.buf, s.base, s.i, moved = s.buf[:n], s.base+int64(keep), s.i-keep, keep
	}
	if len(s.buf) == cap(s.buf) {
		s.buf = append(s.buf, make([]byte, cap(s.buf))...)[:len(s.buf)]
	}
	for {
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.err = err
			return moved, n > 0
		}
		if n > 0 {
			return moved, true
		}
	}
}

// readErr is what stopped the stream at its end: r's error, or a file that
// ends inside a value.
func (s *jsonStream) readErr() error {
	if s.err != nil && s.err != io.EOF {
		return s.err
	}
	return io.ErrUnexpectedEOF
}

// peek skips white space and gives the next byte, not reading it; ok is
// false at the end of the file.
func (s *jsonStream) peek() (byte, bool) {
	for {
		for ; s.i < len(s.buf); s.i++ {
			if c := s.buf[s.i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return c, true
			}
		}
		if _, ok := s.fill(s.i); !ok {
			return 0, false
		}
	}
}

// expect reads c, after white space; what stands there instead is a
// syntax error, named as reading what.
func (s *jsonStream) expect(c byte, what string) error {
	got, ok := s.peek()
	if !ok {
		return s.readErr()
	}
	if got != c {
		return s.unexpected(got, what)
	}
	s.i++
	return nil
}

func (s *jsonStream) unexpected(c byte, what string) error {
	return &syntaxError{s.offset(), fmt.Sprintf("invalid character %s %s", strconv.QuoteRune(rune(c)), what)}
}

// value reads one value after white space and gives its bytes, which stay
// valid until the next read, and its file offset. A string's, an array's
// or an object's end is found by its quotes and brackets; another value
// runs to the next white space or structural character.
func (s *jsonStream) value() ([]byte, int64, error) {
	c, ok := s.peek()
	if !ok {
		return nil, 0, s.readErr()
	}
	switch c {
	case ',', ':', ']', '}':
		return nil, 0, s.unexpected(c, "looking for beginning of value")
	}
	start, j, depth := s.i, s.i+1, 0
	inString, scalar := c == '"', false
	switch c {
	case '{', '[':
		depth = 1
	case '"':
	default:
		scalar = true
	}
	for {
		// j may stand one past the end, after a backslash that ended the bytes read.
		for b := s.buf; j < len(b); {
			switch {
			case scalar:
				for j < len(b) && !valueStops[b[j]] {
					j++
				}
				if j < len(b) {
					return s.took(start, j)
				}
			case inString:
				for j < len(b) && !stringStops[b[j]] {
					j++
				}
				if j == len(b) {
					break
				}
				if b[j] == '\\' {
					j += 2
					continue
				}
				j, inString = j+1, false
				if depth == 0 {
					return s.took(start, j)
				}
			default:
				for j < len(b) && !bracketStops[b[j]] {
					j++
				}
				if j == len(b) {
					break
				}
				switch b[j] {
				case '"':
					inString = true
				case '{', '[':
					depth++
				default:
					if depth--; depth == 0 {
						return s.took(start, j+1)
					}
				}
				j++
			}
		}
		moved, ok := s.fill(start)
		start, j = start-moved, j-moved
		if !ok {
			if scalar && j > start {
				return s.took(start, j) // a bare value that ends the file
			}
			return nil, 0, s.readErr()
		}
	}
}

// The bytes value stops at: inside an array or object, quotes and
// brackets; inside a string, its end and escapes; after another value's
// start, white space and structural characters. The rest is passed over
// a byte at a time without a decision: most of a COCO file is numbers.
var bracketStops, stringStops, valueStops = stops(`"{}[]`), stops(`"\`), stops(" \t\n\r,:[]{}\"")

func stops(chars string) (t [256]bool) {
	for _, c := range []byte(chars) {
		t[c] = true
	}
	return t
}

func (s *jsonStream) took(start, end int) ([]byte, int64, error) {
	s.i = end
	return s.buf[start:end], s.base + int64(start), nil
}

// key reads an object's key and its colon.
func (s *jsonStream) key() (string, error) {
	c, ok := s.peek()
	if !ok {
		return "", s.readErr()
	}
	if c != '"' {
		return "", s.unexpected(c, "looking for beginning of object key string")
	}
	raw, off, err := s.value()
	if err != nil {
		return "", err
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", &syntaxError{off, fmt.Sprintf("an object key is not a JSON string: %v", err)}
	}
	return k, s.expect(':', "after object key")
}

// elements calls fn with each element of the array at s, its bytes (valid
// during the call) and where it starts.
func (s *jsonStream) elements(fn func(raw []byte, off int64) error) error {
	return s.list('[', ']', "array", "array element", func() error {
		raw, off, err := s.value()
		if err != nil {
			return err
		}
		return fn(raw, off)
	})
}

// members calls fn with each key of the object at s; fn reads its value.
func (s *jsonStream) members(fn func(key string) error) error {
	return s.list('{', '}', "object", "object key:value pair", func() error {
		k, err := s.key()
		if err != nil {
			return err
		}
		return fn(k)
	})
}

// list reads open, items separated by commas, and close: an array or an
// object, named by what in its errors.
func (s *jsonStream) list(open, close byte, what, item string, each func() error) error {
	if err := s.expect(open, "looking for beginning of "+what); err != nil {
		return err
	}
	if c, ok := s.peek(); ok && c == close {
		s.i++
		return nil
	}
	for {
		if err := each(); err != nil {
			return err
		}
		c, ok := s.peek()
		if !ok {
			return s.readErr()
		}
		s.i++
		switch c {
		case close:
			return nil
		case ',':
		default:
			s.i--
			return s.unexpected(c, "after "+item)
		}
	}
}

// checkJSON says where raw, read at off, is not JSON, as a syntaxError at
// the byte that breaks it (json's Offset counts the bytes read with it).
func checkJSON(raw []byte, off int64) error {
	if json.Valid(raw) {
		return nil
	}
	var v any
	err := json.Unmarshal(raw, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &syntaxError{off + max(se.Offset-1, 0), se.Error()}
	}
	return &syntaxError{off, fmt.Sprintf("not JSON: %v", err)}
}
