package format

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestJSONGuard: what would stop the Decoder is rewritten at the same
// length into valid JSON and flagged at its offset; valid JSON, strings
// holding such words included, passes unchanged; read a byte at a time
// (words and values split across reads) it gives the same.
func TestJSONGuard(t *testing.T) {
	long := strings.Repeat("N", 10000)
	deep := strings.Repeat("[", 70) + `"a\"]"` + strings.Repeat("]", 70)
	for _, tc := range []struct {
		in    string
		flags []int64
	}{
		{`{"a": [1, -2.5e-3, true, null, "NaN \" Infinity"]}`, nil},
		{`[NaN, -Infinity, 1e400, 1.2.3]`, []int64{1, 6, 24}},
		{`[` + long + `, 1]`, []int64{1}},
		{`{"x": ` + deep + `, "y": 2}`, []int64{6 + 63}},
		{`[N]`, []int64{1}},
		{`NaN`, []int64{0}},
	} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			g := newJSONGuard(r)
			out, err := io.ReadAll(g)
			if err != nil || len(out) != len(tc.in) || !json.Valid(out) {
				t.Fatalf("%.60q: %v, %d bytes of %d, valid %v: %.80q", tc.in, err, len(out), len(tc.in), json.Valid(out), out)
			}
			if len(tc.flags) == 0 && string(out) != tc.in {
				t.Errorf("%.60q changed: %.80q", tc.in, out)
			}
			var offs []int64
			for _, f := range g.flags {
				offs = append(offs, f.off)
			}
			if len(offs) != len(tc.flags) || len(offs) > 0 && offs[0] != tc.flags[0] {
				t.Errorf("%.60q: flags %v, want %v", tc.in, offs, tc.flags)
			}
		}
	}
}
