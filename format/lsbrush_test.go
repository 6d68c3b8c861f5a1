package format

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// TestLSRunsPublishedVector decodes the bytes label-studio-converter's
// tests/test_brush.py (Apache-2.0) gets from encode_rle for a list with
// repeated and single values: the decoder must give that list back.
func TestLSRunsPublishedVector(t *testing.T) {
	data := []byte{0, 0, 0, 18, 57, 27, 252, 96, 32, 1, 0, 6, 0, 40, 0, 192, 3, 128, 17, 56, 32}
	want := []uint32{1, 1, 1, 1, 2, 3, 5, 6, 7, 8, 4, 4, 4, 4, 4, 4, 4, 4}
	got := make([]uint32, 18)
	n, err := lsRuns(data, -1, func(i, j int, v uint32) {
		for k := i; k < j; k++ {
			got[k] = v
		}
	})
	if err != nil || n != 18 || !slices.Equal(got, want) {
		t.Fatalf("decoded %v (%d values, %v), want %v", got, n, err, want)
	}
}

// lsEncode is Label Studio's RLE of values as its converter's encode_rle
// writes it for runs (word size 8, run sizes 3, 4, 8, 16 bits), every
// stretch of equal values as repeated runs of at most 2^16, so long
// stretches exercise the 16-bit size.
func lsEncode(values []byte) []int {
	var bits []byte
	put := func(v, n int) {
		for k := n - 1; k >= 0; k-- {
			bits = append(bits, byte(v>>k&1))
		}
	}
	put(len(values), 32)
	put(7, 5)
	for _, s := range []int{3, 4, 8, 16} {
		put(s-1, 4)
	}
	for i := 0; i < len(values); {
		j := i
		for j < len(values) && values[j] == values[i] && j-i < 1<<16 {
			j++
		}
		put(1, 1)
		put(3, 2)
		put(j-i-1, 16)
		put(int(values[i]), 8)
		i = j
	}
	for len(bits)%8 != 0 {
		bits = append(bits, 0)
	}
	out := make([]int, len(bits)/8)
	for i := range out {
		for _, b := range bits[8*i : 8*i+8] {
			out[i] = out[i]<<1 | int(b)
		}
	}
	return out
}

// rgba is a width × height RGBA image, row by row, every pixel red with
// alpha 0 except painted ones (alpha a): colour without alpha is no brush.
func rgba(width, height int, a byte, painted ...[2]int) []byte {
	v := make([]byte, 4*width*height)
	for p := range width * height {
		v[4*p] = 200
	}
	for _, xy := range painted {
		v[4*(xy[1]*width+xy[0])+3] = a
	}
	return v
}

// TestLSBrushMask: painted pixels (alpha above 0) become the mask,
// column-major as COCO's; a brush covering a whole 300x300 image (runs
// past 2^16 values) is all set.
func TestLSBrushMask(t *testing.T) {
	painted := [][2]int{{1, 0}, {2, 0}, {4, 3}, {0, 2}}
	m, err := lsBrushMask(lsEncode(rgba(5, 4, 255, painted...)), 5, 4)
	if err != nil {
		t.Fatal(err)
	}
	bits := make([]byte, 20)
	for _, xy := range painted {
		bits[xy[0]*4+xy[1]] = 1
	}
	if want := shape.Encode(bits, 4, 5).String(); m.Size != [2]int{4, 5} || m.Counts != want {
		t.Errorf("mask %+v, want counts %q", m, want)
	}
	// Alpha 1 counts, as the converter's alpha > 0.
	if m, err := lsBrushMask(lsEncode(rgba(5, 4, 1, [2]int{3, 3})), 5, 4); err != nil || m.Counts != shape.Encode(
		[]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, 4, 5).String() {
		t.Errorf("alpha 1: %+v %v", m, err)
	}
	all := make([]byte, 4*300*300)
	for i := range all {
		all[i] = 255
	}
	m, err = lsBrushMask(lsEncode(all), 300, 300)
	if r, _ := m.RLE(); err != nil || r.Area() != 90000 {
		t.Errorf("whole image: %+v %v", m, err)
	}
}

// TestLSBrushHostile: a brush that does not decode on its image is a
// problem of its file and task naming what is wrong; the task's other
// shapes are imported.
func TestLSBrushHostile(t *testing.T) {
	good := lsEncode(rgba(5, 4, 255, [2]int{1, 1}))
	cases := map[string]struct {
		rle  []int
		w, h int
		want string
	}{
		"truncated":   {good[:len(good)-3], 5, 4, "the RLE ends"},
		"other size":  {good, 6, 4, "holds 80 values, not 96"},
		"not bytes":   {append([]int{300}, good[1:]...), 5, 4, "rle[0] is 300"},
		"no size":     {good, 0, 0, "without its image's size"},
		"huge":        {good, 100000, 100000, "over 100000000 pixels"},
		"tall":        {good, 1, 100000000, "or 65536 a side"},
		"empty":       {lsEncode(rgba(5, 4, 0)), 5, 4, "paints no pixel"},
		"header only": {[]int{0, 0, 0, 80, 56}, 5, 4, "the RLE ends"},
	}
	for name, c := range cases {
		dir := t.TempDir()
		res := []map[string]any{
			{"type": "brushlabels", "original_width": c.w, "original_height": c.h,
				"value": map[string]any{"format": "rle", "rle": c.rle, "brushlabels": []string{"road"}}},
			{"type": "choices", "value": map[string]any{"choices": []string{"night"}}},
		}
		doc, _ := json.Marshal([]any{map[string]any{"id": 7, "data": map[string]any{"image": "/data/upload/1/a.jpg"},
			"annotations": []any{map[string]any{"result": res}}}})
		os.WriteFile(filepath.Join(dir, "export.json"), doc, 0o644)
		os.WriteFile(filepath.Join(dir, "a.jpg"), []byte("x"), 0o644)
		var items []Item
		rep, err := Read(context.Background(), dir, LabelStudio, func(it Item) error { items = append(items, it); return nil })
		if err != nil || len(items) != 1 || len(items[0].Boxes) != 1 || items[0].Boxes[0].Type != shape.Class {
			t.Errorf("%s: items %+v, %v", name, items, err)
			continue
		}
		p := fmt.Sprint(rep.Problems)
		if rep.Counts[Malformed] != 1 || !strings.Contains(p, "export.json") || !strings.Contains(p, "task 7: road brush") ||
			!strings.Contains(p, c.want) {
			t.Errorf("%s: problems %v, want one naming export.json, task 7 and %q", name, rep.Problems, c.want)
		}
	}
}

// TestLSBrushRead: a brush in an export reads as a mask the lake takes:
// Fit checks it on the image and gives it its pixels' box and area. A
// brush labelled by a separate Labels tag (type "labels" with an rle) too.
func TestLSBrushRead(t *testing.T) {
	dir := t.TempDir()
	rle, _ := json.Marshal(lsEncode(rgba(5, 4, 255, [2]int{1, 1}, [2]int{2, 1}, [2]int{2, 2})))
	doc := `[{"id":1,"data":{"image":"/data/upload/3/0a1b2c3d-a.jpg"},"annotations":[{"result":[{"type":"brushlabels",` +
		`"original_width":5,"original_height":4,"value":{"format":"rle","rle":` + string(rle) + `,"brushlabels":["road","lane"]}},` +
		`{"type":"labels","original_width":5,"original_height":4,"value":{"rle":` + string(rle) + `,"labels":["kerb"]}}]}]}]`
	os.WriteFile(filepath.Join(dir, "export.json"), []byte(doc), 0o644)
	os.WriteFile(filepath.Join(dir, "a.jpg"), []byte("x"), 0o644)
	var items []Item
	rep, err := Read(context.Background(), dir, Auto, func(it Item) error { items = append(items, it); return nil })
	if err != nil || rep.Format != LabelStudio || len(items) != 1 {
		t.Fatalf("%v %v %+v", err, rep, items)
	}
	bs := rep.Fit(items[0], 5, 4)
	if len(bs) != 2 || bs[0].Type != shape.Mask || bs[0].Label != "road" || bs[0].Attributes["labels"] != "road,lane" ||
		bs[1].Type != shape.Mask || bs[1].Label != "kerb" || bs[1].Mask.Counts != bs[0].Mask.Counts {
		t.Fatalf("boxes %+v, problems %v", bs, rep.Problems)
	}
	r, _ := bs[0].Mask.RLE()
	if b := bs[0]; b.X != 1 || b.Y != 1 || b.W != 2 || b.H != 2 || r.Area() != 3 || rep.Refused() != 0 {
		t.Errorf("box %v,%v %vx%v area %d, problems %v", b.X, b.Y, b.W, b.H, r.Area(), rep.Problems)
	}
}
