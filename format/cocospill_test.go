package format

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
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
		got, ok := parseRings([]byte(raw), nil)
		var want [][]float64
		if err := json.Unmarshal([]byte(raw), &want); err != nil || !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, encoding/json %v %v", raw, got, ok, want, err)
		}
	}
	for _, raw := range []string{`{"size": [2, 2], "counts": "04"}`, `[[1, null, 3, 4, 5, 6]]`, `[[1e999, 0, 1, 1, 2, 2]]`,
		`[["1", 2]]`, `[1, 2, 3]`, `[[1, 2]] x`, `"abc"`, `[[1, 2], 3]`} {
		if got, ok := parseRings([]byte(raw), nil); ok {
			t.Errorf("%q read as %v", raw, got)
		}
	}
}

// TestRingsCodec: rings come back from AppendRings' form exact, whether
// kept as hundredths or as float64s (more decimals, -0, NaN, infinities,
// numbers past 2^40, an empty ring), and kept as hundredths in under a third of
// the bytes; a form cut short or with bytes after it is refused.
func TestRingsCodec(t *testing.T) {
	big := math.Ldexp(1, 41)
	for _, rings := range [][][]float64{
		{{10.25, 20.5, 639.99, 479.01, -3.07, 0, 1e9, 7}},
		{{0.1, 0.2, 0.3, 0.7, 123.45, 2.675}, {1.001, 2, 3, 4, 5, 6}},
		{{math.Copysign(0, -1), 1, 2, 3, 4, 5}},
		{{math.NaN(), 1, math.Inf(1), 2, math.Inf(-1), 3}},
		{{big, big + 0.5, -big, 1, 2, 3}},
		{{}, {1, 2, 3, 4, 5, 6}},
		{},
	} {
		b := AppendRings(nil, rings)
		got, err := ReadRings(b)
		if err != nil || len(got) != len(rings) {
			t.Fatalf("%v: %v %v", rings, got, err)
		}
		for i := range rings {
			if len(got[i]) != len(rings[i]) {
				t.Fatalf("%v: %v", rings, got)
			}
			for j, v := range rings[i] {
				if math.Float64bits(got[i][j]) != math.Float64bits(v) {
					t.Errorf("%v: ring %d number %d came back %v", rings, i, j, got[i][j])
				}
			}
		}
		for _, cut := range [][]byte{b[:len(b)-1], append(b[:len(b):len(b)], 0)} {
			if len(rings) > 0 {
				if r, err := ReadRings(cut); err == nil {
					t.Errorf("%v: %d bytes of %d read as %v", rings, len(cut), len(b), r)
				}
			}
		}
	}
	ring := make([]float64, 60) // 30 vertices on a circle of radius 100
	for i := range ring {
		a := 2 * math.Pi * float64(i/2) / 30
		ring[i] = math.Round((200+100*[]float64{math.Cos(a), math.Sin(a)}[i%2])*100) / 100
	}
	if n := len(AppendRings(nil, [][]float64{ring})); n > 8*len(ring)/3 {
		t.Errorf("a ring of 30 vertices in hundredths takes %d bytes, against %d as float64s", n, 8*len(ring))
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

// TestPolySpillWindows: reads served from the spill's window, across its
// edges, and a polygon larger than a window, come back exact in order and
// shuffled.
func TestPolySpillWindows(t *testing.T) {
	s, err := newPolySpill()
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	var in [][][]float64
	var refs []polyRef
	for i := range 3000 {
		n := 6 + 2*(i%40)
		if i == 1500 {
			n = 3 * spillWindow / 8 // 3 windows of bytes
		}
		ring := make([]float64, n)
		for j := range ring {
			ring[j] = float64(i) + float64(j)/8
		}
		ref, err := s.put([][]float64{ring})
		if err != nil {
			t.Fatal(err)
		}
		in, refs = append(in, [][]float64{ring}), append(refs, ref)
	}
	order := make([]int, 0, 2*len(in))
	for i := range in {
		order = append(order, i)
	}
	for i := range in {
		order = append(order, (i*7919)%len(in)) // 7919 is prime: every index, shuffled
	}
	for _, i := range order {
		got, err := s.get(refs[i])
		if err != nil || !reflect.DeepEqual(got, in[i]) {
			t.Fatalf("polygon %d: %v, got %d numbers", i, err, len(got))
		}
	}
}

// TestReadEncodedEqualsRead: ReadEncoded gives what Read gives, but for a
// polygon of one ring, which comes as its spilled bytes; rings that
// overlap (read as a mask), two rings, keypoints over a polygon and a
// mask come as Read gives them.
func TestReadEncodedEqualsRead(t *testing.T) {
	dir := t.TempDir()
	doc := `{"images": [{"id": 1, "file_name": "a.jpg", "width": 64, "height": 48}],
"categories": [{"id": 1, "name": "car", "keypoints": ["a", "b"]}, {"id": 2, "name": "bus"}],
"annotations": [
{"id": 1, "image_id": 1, "category_id": 2, "bbox": [1, 2, 30, 20], "area": 300.5, "segmentation": [[1.25, 2, 31, 2, 31, 22.75, 1, 22]]},
{"id": 2, "image_id": 1, "category_id": 2, "segmentation": [[0.333, 0, 10, 0, 10, 10]]},
{"id": 3, "image_id": 1, "category_id": 2, "bbox": [0, 0, 20, 20], "segmentation": [[0, 0, 20, 0, 20, 20, 0, 20], [5, 5, 10, 5, 10, 10]]},
{"id": 4, "image_id": 1, "category_id": 2, "bbox": [0, 0, 30, 30], "segmentation": [[0, 0, 20, 0, 20, 20], [10, 10, 30, 10, 30, 30]]},
{"id": 5, "image_id": 1, "category_id": 1, "bbox": [0, 0, 9, 9], "keypoints": [1, 2, 2, 3, 4, 1], "segmentation": [[0, 0, 9, 0, 9, 9]]},
{"id": 6, "image_id": 1, "category_id": 2, "bbox": [0, 0, 2, 2], "segmentation": {"size": [48, 64], "counts": [0, 4, 3068]}}
]}`
	for name, body := range map[string]string{"annotations.json": doc, "a.jpg": "x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func(read func(context.Context, string, Format, Caps, func(Item) error) (*Report, error)) []Box {
		var boxes []Box
		if _, err := read(context.Background(), dir, COCO, Caps{}, func(it Item) error {
			boxes = append(boxes, it.Boxes...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return boxes
	}
	want, got := readAll(ReadWith), readAll(ReadEncoded)
	encoded := 0
	for i := range got {
		if got[i].Rings != nil {
			encoded++
			rings, err := ReadRings(got[i].Rings)
			if err != nil || got[i].Polygon != nil {
				t.Fatalf("box %d: %v %v", i, err, got[i].Polygon)
			}
			got[i].Polygon, got[i].Rings = rings, nil
		}
	}
	if encoded != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d encoded; ReadEncoded\n%+v\nRead\n%+v", encoded, got, want)
	}
}
