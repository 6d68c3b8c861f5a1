package shape

import (
	"encoding/json"
	"testing"
)

func TestEncodedMaskReadsBothCOCOForms(t *testing.T) {
	// The 4x4 "half pixel" square of TestFromRing: counts 5 2 2 2 5.
	for _, in := range []string{`{"size": [4, 4], "counts": "52203"}`, `{"size": [4, 4], "counts": [5, 2, 2, 2, 5]}`} {
		var m EncodedMask
		if err := json.Unmarshal([]byte(in), &m); err != nil || m.Counts != "52203" || m.Size != [2]int{4, 4} {
			t.Errorf("%s: %+v %v", in, m, err)
		}
		if r, err := m.RLE(); err != nil || r.Area() != 4 {
			t.Errorf("%s: RLE %v %v", in, r, err)
		}
	}
	var m EncodedMask
	if err := json.Unmarshal([]byte(`{"size": [4, 4], "counts": [5, -2]}`), &m); err == nil {
		t.Error("a negative count was read")
	}
}
