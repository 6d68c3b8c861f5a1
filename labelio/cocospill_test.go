package labelio

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestParseRings: the one-pass polygon reader gives what encoding/json
// gives, and leaves to it (ok false) whatever is not an array of arrays of
// numbers that fit a float64.
func TestParseRings(t *testing.T) {
	for _, raw := range []string{
		`[[1, 2, 3.5, 4, -5e2, 6.25E-1]]`, ` [ [0,0,10,0,10,10] , [1,1,2,1,2,2] ] `, `[]`, `[[]]`, "[\n\t[1,\r\n2,3,4,5,6]\n]",
		`[[1e308, -0, 0.000001, 123456789.123456789, 1, 2]]`,
	} {
		got, ok := parseRings([]byte(raw))
		var want [][]float64
		if err := json.Unmarshal([]byte(raw), &want); err != nil || !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, encoding/json %v %v", raw, got, ok, want, err)
		}
	}
	for _, raw := range []string{`{"size": [2, 2], "counts": "04"}`, `[[1, null, 3, 4, 5, 6]]`, `[[1e999, 0, 1, 1, 2, 2]]`,
		`[["1", 2]]`, `[1, 2, 3]`, `[[1, 2]] x`, `"abc"`, `[[1, 2], 3]`} {
		if got, ok := parseRings([]byte(raw)); ok {
			t.Errorf("%q read as %v", raw, got)
		}
	}
}

// TestPolySpill: polygons come back from the spill as they went in, in any
// order.
func TestPolySpill(t *testing.T) {
	s, err := newPolySpill()
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	in := [][][]float64{{{1, 2, 3, 4, 5, 6}}, {{0.1, 0.2, 3e-9, 4, 5, 6}, {7, 8, 9, 10, 11, 12, 13, 14}}, {{}}}
	var refs []polyRef
	for _, p := range in {
		ref, err := s.put(p)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	for _, i := range []int{2, 0, 1, 1} {
		got, err := s.get(refs[i])
		if err != nil || !reflect.DeepEqual(got, in[i]) {
			t.Errorf("polygon %d: %v %v, want %v", i, got, err, in[i])
		}
	}
}
