package format

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// TestJSONGuardReadSizes: the guard, which rewrites each read into the
// buffer the read before used, gives for a COCO file with every kind of
// rewrite in it (NaN, -Infinity, bad numbers, a 5,000-byte number, an
// over-deep value, escaped quotes in strings) the bytes and flags it gives
// one byte at a time, with reads of every size from 1 to 70 (so words,
// strings and values are cut at every place) and with one read of it all.
func TestJSONGuardReadSizes(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`{"images": [{"id": 1, "file_name": "a \"quoted\" \\ name.jpg", "width": 640}], "annotations": [`)
	for i := range 40 {
		if i > 0 {
			doc.WriteString(", ")
		}
		fmt.Fprintf(&doc, `{"id": %d, "bbox": [%d.5, -2.25e-3, 1E+2, 0], "segmentation": [[1.25, 2, 3.5, 4, 5, 6.75]], "iscrowd": false, "x": null}`, i, i)
	}
	doc.WriteString(`, {"id": NaN, "area": -Infinity, "bbox": [1.2.3, 01, 1e400, -, +1], "w": ` + strings.Repeat("7", 5000) + `}`)
	doc.WriteString(`, {"id": 99, "attributes": ` + strings.Repeat(`{"a": [`, 40) + `"x]}"` + strings.Repeat(`]}`, 40) + `}`)
	doc.WriteString(`], "categories": [{"id": 1, "name": "été \u00e9"}]}`)
	in := doc.String()
	read := func(r io.Reader) ([]byte, []jsonFlag) {
		g := newJSONGuard(r)
		out, err := io.ReadAll(g)
		if err != nil {
			t.Fatal(err)
		}
		return out, g.flags
	}
	want, wantFlags := read(iotest.OneByteReader(strings.NewReader(in)))
	if len(want) != len(in) || len(wantFlags) < 6 {
		t.Fatalf("one byte at a time: %d bytes of %d, %d flags", len(want), len(in), len(wantFlags))
	}
	for size := 1; size <= 70; size++ {
		got, flags := read(&readsOf{s: in, n: size})
		if !bytes.Equal(got, want) || !slices.Equal(flags, wantFlags) {
			t.Fatalf("reads of %d bytes: %d flags %v, want %v; output differs: %v", size, len(flags), flags, wantFlags, !bytes.Equal(got, want))
		}
	}
	if got, flags := read(strings.NewReader(in)); !bytes.Equal(got, want) || !slices.Equal(flags, wantFlags) {
		t.Fatal("one read of the whole differs")
	}
}

// readsOf reads s n bytes at a time.
type readsOf struct {
	s string
	n int
}

func (c *readsOf) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
