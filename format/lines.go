package format

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"sort"
)

// lineMarks counts the lines of a JSON file as a decoder reads it, so a
// problem found at a byte offset can be reported at its line. It keeps a
// mark (offset, lines before it) at each read, a few thousand for a file
// of a million annotations, and finds a line by reading the file again
// from the mark before it: only listed problems ask, at most MaxListed a
// kind.
type lineMarks struct {
	r          io.Reader
	path       string
	off, lines int64
	marks      []lineMark
}

type lineMark struct{ off, lines int64 }

func (m *lineMarks) Read(p []byte) (int, error) {
	m.marks = append(m.marks, lineMark{m.off, m.lines})
	n, err := m.r.Read(p)
	m.lines += int64(bytes.Count(p[:n], []byte{'\n'}))
	m.off += int64(n)
	return n, err
}

// line is the 1-based line where the value after off starts: the first
// byte at or after off that is not white space or a comma; 0 when the file
// cannot be read again.
func (m *lineMarks) line(off int64) int {
	i := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].off > off }) - 1
	if i < 0 {
		return 0
	}
	f, err := os.Open(m.path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := bufio.NewReader(io.NewSectionReader(f, m.marks[i].off, 1<<62))
	lines, pos := m.marks[i].lines, m.marks[i].off
	for {
		b, err := r.ReadByte()
		if err != nil || pos >= off && !bytes.ContainsRune([]byte(" \t\r\n,"), rune(b)) {
			return int(lines) + 1
		}
		if b == '\n' {
			lines++
		}
		pos++
	}
}
