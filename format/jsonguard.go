package format

import (
	"io"
	"strconv"
)

// jsonGuard passes a JSON file to encoding/json's Decoder, rewriting in
// place what would stop the Decoder for the rest of the file, so that it
// costs one record instead: a bare word that is no JSON value (NaN,
// Infinity, -Infinity, as Python's json.dump writes them) and a value
// nested deeper than maxDepth (the Decoder gives up past 10,000 levels).
// Each is rewritten as a string of the same length ("NaN" as "\"x\"", an
// over-deep value as "\"xx...\""), so byte offsets, and with them the lines
// problems are reported at, stay the file's; its offset is flagged, and the
// reader refuses, as malformed, the record holding a flag. Label Studio's
// reader reads its file through it; the COCO reader, whose jsonStream finds
// each record's end itself, runs it over a record (record): every image and
// category, and the annotations its one-pass read refuses. Over the whole
// of a segmented COCO file it was a third of the reading goroutine's work.
type jsonGuard struct {
	r        io.Reader
	maxDepth int
	in       []byte
	out      []byte // rewritten, waiting to be read
	buf      []byte // what out was made in, for the next scan
	off      int64  // file offset of the next byte taken from r
	depth    int
	inString bool
	escaped  bool
	word     []byte // a bare word or number not yet ended
	long     bool   // the word was too long to hold: being rewritten, its last byte held back
	wordOff  int64
	deep     int // > 0: inside an over-deep value, at this depth within it
	deepOff  int64
	flags    []jsonFlag // in file order; taken by flagged
	err      error
}

// jsonFlag is a rewrite at a file offset.
type jsonFlag struct {
	off  int64
	deep bool // an over-deep value; else a bare word
}

// guardDepth is the deepest nesting jsonGuard passes: the Decoder's own
// limit is 10,000; the readers keep attributes to MaxAttributeDepth anyway.
const guardDepth = 64

func newJSONGuard(r io.Reader) *jsonGuard {
	return &jsonGuard{r: r, maxDepth: guardDepth, in: make([]byte, 1<<16)}
}

func (g *jsonGuard) Read(p []byte) (int, error) {
	for len(g.out) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		n, err := g.r.Read(g.in)
		g.scan(g.in[:n])
		if err != nil {
			g.endWord()
			g.err = err
		}
	}
	n := copy(p, g.out)
	g.out = g.out[n:]
	if len(g.out) == 0 {
		g.out = g.out[:0:0]
	}
	return n, nil
}

// scan rewrites b into out, which is empty when it is called, in the
// buffer the last scan used: a new one each read, zeroed and faulted in,
// cost a fifth of the guard's CPU time on a segmented COCO file.
func (g *jsonGuard) scan(b []byte) {
	out := g.buf[:0]
	for _, c := range b {
		switch {
		case g.deep > 0:
			out = g.deepByte(out, c)
		case g.inString:
			out = append(out, c)
			switch {
			case g.escaped:
				g.escaped = false
			case c == '\\':
				g.escaped = true
			case c == '"':
				g.inString = false
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
			switch {
			case g.long:
				out = append(out, 'x') // the byte held back is not the last
			case len(g.word) == 0:
				g.wordOff = g.off
				fallthrough
			default:
				g.word = append(g.word, c)
				if len(g.word) == maxWord {
					out = g.longWord(out)
				}
			}
		default:
			out = g.flushWord(out)
			switch c {
			case '"':
				g.inString = true
			case '{', '[':
				if g.depth == g.maxDepth {
					g.deep, g.deepOff = 1, g.off
					c = '"'
				} else {
					g.depth++
				}
			case '}', ']':
				g.depth--
			}
			out = append(out, c)
		}
		g.off++
	}
	g.buf, g.out = out, out
}

// deepByte rewrites a byte of an over-deep value: brackets and strings are
// followed to find its end, which closes the string its start opened.
func (g *jsonGuard) deepByte(out []byte, c byte) []byte {
	switch {
	case g.inString:
		switch {
		case g.escaped:
			g.escaped = false
		case c == '\\':
			g.escaped = true
		case c == '"':
			g.inString = false
		}
	case c == '"':
		g.inString = true
	case c == '{' || c == '[':
		g.deep++
	case c == '}' || c == ']':
		if g.deep--; g.deep == 0 {
			g.flags = append(g.flags, jsonFlag{g.deepOff, true})
			return append(out, '"')
		}
	}
	return append(out, 'x')
}

// maxWord is the longest bare word or number held whole: a longer one is
// rewritten as it streams, one byte held back for the closing quote, so a
// file of one 200 MB word costs no more memory than one of short ones.
const maxWord = 4096

// longWord starts rewriting the pending word, too long to hold, as a
// string: its opening quote and all but its last byte go out now.
func (g *jsonGuard) longWord(out []byte) []byte {
	g.flags = append(g.flags, jsonFlag{g.wordOff, false})
	out = append(out, '"')
	for range len(g.word) - 2 {
		out = append(out, 'x')
	}
	g.word, g.long = g.word[:0], true
	return out
}

// flushWord appends the pending word to out: as it is when it is a JSON
// literal or number, else rewritten and flagged.
func (g *jsonGuard) flushWord(out []byte) []byte {
	if g.long {
		g.long = false
		return append(out, '"') // in place of the byte held back
	}
	w := g.word
	if len(w) == 0 {
		return out
	}
	g.word = g.word[:0]
	if jsonScalar(w) {
		return append(out, w...)
	}
	g.flags = append(g.flags, jsonFlag{g.wordOff, false})
	if len(w) == 1 {
		return append(out, '0')
	}
	out = append(out, '"')
	for range len(w) - 2 {
		out = append(out, 'x')
	}
	return append(out, '"')
}

// record runs the guard over one record of a file, raw, from the state of
// a new guard depth levels down (its buffers kept): raw as the guard
// rewrites it, valid until the next call, and its flags, at offsets within
// raw. A reader that finds its records' ends itself (the COCO reader's
// jsonStream) asks it of the records it must judge as the guard would.
func (g *jsonGuard) record(raw []byte, depth int) ([]byte, []jsonFlag) {
	*g = jsonGuard{maxDepth: guardDepth, depth: depth, buf: g.buf[:0], word: g.word[:0], flags: g.flags[:0]}
	g.scan(raw)
	g.endWord()
	return g.out, g.flags
}

// endWord flushes a word the file ends with.
func (g *jsonGuard) endWord() { g.out = g.flushWord(g.out) }

// jsonScalar reports whether w is true, false, null or a JSON number.
func jsonScalar(w []byte) bool {
	switch string(w) {
	case "true", "false", "null":
		return true
	}
	return jsonNumber(w)
}

// flagged reports the first rewrite in [from, to) of the file, forgetting
// those before to: records are asked for in file order.
func (g *jsonGuard) flagged(from, to int64) (jsonFlag, bool) {
	var hit jsonFlag
	found := false
	i := 0
	for ; i < len(g.flags) && g.flags[i].off < to; i++ {
		if !found && g.flags[i].off >= from {
			hit, found = g.flags[i], true
		}
	}
	g.flags = g.flags[i:]
	return hit, found
}

// flagMessage says what a flag found.
func (f jsonFlag) message() string {
	if f.deep {
		return "a value nests deeper than " + strconv.Itoa(guardDepth) + " levels"
	}
	return "a value is not JSON (NaN, Infinity or a bare word)"
}
