package format_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/framelake/framelake/format"
)

// writeTree writes files (path relative to a new folder: content) and
// returns the folder.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// problemsOf lists a report's problems of kind k as "file:line: message".
func problemsOf(rep *format.Report, k format.Kind) []string {
	var out []string
	for _, p := range rep.Problems {
		if p.Kind == k {
			out = append(out, fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message))
		}
	}
	return out
}

func noPath(t *testing.T, rep *format.Report, dir string) {
	t.Helper()
	for _, p := range rep.Problems {
		if strings.Contains(p.Message, dir) || strings.Contains(p.File, dir) {
			t.Errorf("problem names the server's path: %v", p)
		}
	}
}

// TestCOCOHostileRecords: a NaN literal (as Python writes it), a number out
// of range, attributes nested 40 and 5,000 levels deep, a number of 5,000
// digits each spoil their own annotation, counted as malformed and named by
// id and line; the rest of the file is imported, and a NaN or an over-deep
// value in info, which holds no records, is let pass.
func TestCOCOHostileRecords(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	mid := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	doc := `{"images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100},
{"id": 2, "file_name": "b.jpg", "width": NaN, "height": 100}],
"categories": [{"id": 1, "name": "car"}],
"annotations": [
{"id": 10, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]},
{"id": 11, "image_id": 1, "category_id": 1, "bbox": [NaN, 2, 3, 4]},
{"id": 12, "image_id": 1, "category_id": 1, "bbox": [1, 2, 1e400, 4]},
{"id": 13, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "attributes": ` + deep + `},
{"id": 14, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, -Infinity]},
{"id": 15, "image_id": 1, "category_id": 1, "bbox": [5, 6, 7, 8], "attributes": {"ok": [1, 2]}},
{"id": 16, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "attributes": ` + mid + `},
{"id": 17, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "area": ` + strings.Repeat("7", 5000) + `}
],
"info": {"v": NaN, "deep": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`
	dir := writeTree(t, map[string]string{"annotations.json": doc, "a.jpg": "x", "b.jpg": "x"})
	items, rep := read(t, dir, format.COCO)
	got := boxesOf(rep, items["a.jpg"], 100, 100)["car"]
	if len(got) != 2 || got[0] != (px{1, 2, 3, 4}) || got[1] != (px{5, 6, 7, 8}) {
		t.Fatalf("car boxes %v, want annotations 10 and 15", got)
	}
	mal := problemsOf(rep, format.Malformed)
	want := []string{"annotations.json:2: image 2:", "annotations.json:6: annotation 11:", "annotations.json:7: annotation 12:",
		"annotations.json:8: annotation 13: a value nests deeper", "annotations.json:9: annotation 14:",
		"annotations.json:11: annotation 16: its attributes nest 40 levels deep",
		"annotations.json:12: annotation 17: a value is not JSON"}
	if len(mal) != len(want) || rep.Counts[format.Malformed] != len(want) {
		t.Fatalf("malformed %d %q, want %d", rep.Counts[format.Malformed], mal, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(mal[i], w) {
			t.Errorf("malformed[%d] = %q, want it to start %q", i, mal[i], w)
		}
	}
	noPath(t, rep, dir)
}

// TestCOCOBrokenJSON: a COCO file whose JSON breaks (inside an annotation,
// between annotations, in a value no record holds, at its end) is refused
// whole as malformed, at the line where it breaks; an annotation's strings
// holding brackets and quotes do not end it early.
func TestCOCOBrokenJSON(t *testing.T) {
	head := `{"images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
"categories": [{"id": 1, "name": "car"}],
"annotations": [
{"id": 10, "image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "attributes": {"note": "a ]} \\\"[{ b"}},
`
	for _, tc := range []struct {
		name, tail string
		line       int
	}{
		{"whole", `{"id": 11, "image_id": 1, "category_id": 1, "bbox": [5, 6, 7, 8]}]}`, 0},
		{"in an annotation", `{"id": 11, "image_id": 1, "category_id": 1,
"bbox": [5, 6,, 8]}]}`, 6},
		{"between annotations", `{"id": 11, "image_id": 1, "category_id": 1, "bbox": [5, 6, 7, 8]}
{"id": 12}]}`, 6},
		{"in info", `{"id": 11, "image_id": 1, "category_id": 1, "bbox": [5, 6, 7, 8]}],
"info": {"year": 2017,}}`, 6},
		{"cut short", `{"id": 11, "image_id": 1, "category_id": 1, "bbox": [5, 6, 7, 8]}`, 5},
		{"without its closing brace", `{"id": 11, "image_id": 1, "category_id": 1, "bbox": [5, 6, 7, 8]}]`, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"annotations.json": head + tc.tail, "a.jpg": "x"})
			items, rep := read(t, dir, format.COCO)
			mal := problemsOf(rep, format.Malformed)
			if tc.line == 0 {
				got := items["a.jpg"].Boxes
				if len(mal) != 0 || len(got) != 2 || got[0].Attributes["note"] != `a ]} \"[{ b` {
					t.Fatalf("boxes %+v, problems %q", got, mal)
				}
				return
			}
			prefix := fmt.Sprintf("annotations.json:%d: ", tc.line)
			if len(mal) != 1 || !strings.HasPrefix(mal[0], prefix) || !strings.Contains(mal[0], "at byte") || len(items["a.jpg"].Boxes) != 0 {
				t.Fatalf("problems %q, want one at %q; boxes %+v", mal, prefix, items["a.jpg"].Boxes)
			}
		})
	}
}

// TestCVATHostileShapes: xbr="1e400" and ytl="NaN" spoil their shapes only.
func TestCVATHostileShapes(t *testing.T) {
	xml := `<?xml version="1.0" encoding="utf-8"?>
<annotations>
  <version>1.1</version>
  <image id="0" name="a.jpg" width="100" height="80">
    <box label="car" occluded="0" xtl="1" ytl="2" xbr="1e400" ybr="20"></box>
    <box label="car" occluded="0" xtl="1" ytl="NaN" xbr="30" ybr="20"></box>
    <box label="bus" occluded="0" xtl="10" ytl="20" xbr="30" ybr="40"></box>
    <polygon label="bus" points="1,1;Inf,3;4,4"></polygon>
  </image>
</annotations>`
	dir := writeTree(t, map[string]string{"annotations.xml": xml, "images/a.jpg": "x"})
	items, rep := read(t, dir, format.CVAT)
	got := boxesOf(rep, items["images/a.jpg"], 100, 80)
	if len(got) != 1 || len(got["bus"]) != 1 || got["bus"][0] != (px{10, 20, 20, 20}) {
		t.Fatalf("boxes %v, want the bus box alone", got)
	}
	mal := problemsOf(rep, format.Malformed)
	if len(mal) != 3 || !strings.HasPrefix(mal[0], `annotations.xml:5: car box of image "a.jpg": xbr "1e400" is not a finite number`) ||
		!strings.HasPrefix(mal[1], "annotations.xml:6:") || !strings.HasPrefix(mal[2], "annotations.xml:8: bus polygon") {
		t.Errorf("malformed %q", mal)
	}
	noPath(t, rep, dir)
}

// TestLabelStudioNaN: a task holding NaN is malformed; the next is read.
func TestLabelStudioNaN(t *testing.T) {
	task := func(id int, x string) string {
		return fmt.Sprintf(`{"id": %d, "data": {"image": "/data/upload/1/%d.jpg"}, "annotations": [{"result": [{"type": "rectanglelabels",
"original_width": 100, "original_height": 100, "value": {"x": %s, "y": 10, "width": 20, "height": 20, "rectanglelabels": ["car"]}}]}]}`, id, id, x)
	}
	dir := writeTree(t, map[string]string{"export.json": "[" + task(1, "NaN") + ",\n" + task(2, "10") + "]", "1.jpg": "x", "2.jpg": "x"})
	items, rep := read(t, dir, format.LabelStudio)
	if got := boxesOf(rep, items["2.jpg"], 100, 100)["car"]; len(got) != 1 || len(items["1.jpg"].Boxes) != 0 {
		t.Errorf("items %v", items)
	}
	if mal := problemsOf(rep, format.Malformed); len(mal) != 1 || !strings.Contains(mal[0], "task 1") {
		t.Errorf("malformed %q", mal)
	}
}

// TestCaps: boxes past the per-file cap, the per-read cap and labels past
// the category cap are counted as over_limit, listed once, not kept.
func TestCaps(t *testing.T) {
	var anns, cats []string
	for i := range 25 {
		anns = append(anns, fmt.Sprintf(`{"id": %d, "image_id": 1, "category_id": %d, "bbox": [1, 1, 2, 2]}`, i, 1+i%2))
	}
	for i := range 8 {
		anns = append(anns, fmt.Sprintf(`{"id": %d, "image_id": 2, "category_id": 1, "bbox": [1, 1, 2, 2]}`, 100+i))
	}
	for i := range 5 {
		cats = append(cats, fmt.Sprintf(`{"id": %d, "name": "c%d"}`, i+1, i+1))
	}
	doc := `{"images": [{"id": 1, "file_name": "a.jpg"}, {"id": 2, "file_name": "b.jpg"}], "categories": [` +
		strings.Join(cats, ",") + `], "annotations": [` + strings.Join(anns, ",\n") + `]}`
	dir := writeTree(t, map[string]string{"c.json": doc, "a.jpg": "x", "b.jpg": "x"})
	items := map[string]format.Item{}
	rep, err := format.ReadWith(context.Background(), dir, format.COCO, format.Caps{ShapesPerFile: 10, Shapes: 15, Categories: 3},
		func(it format.Item) error { items[filepath.Base(it.Media)] = it; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(items["a.jpg"].Boxes) != 10 || len(items["b.jpg"].Boxes) != 5 {
		t.Errorf("kept %d and %d boxes, want 10 (a file's cap) and 5 (the read's)", len(items["a.jpg"].Boxes), len(items["b.jpg"].Boxes))
	}
	// 15 of a.jpg, 3 of b.jpg, 2 categories past 3.
	if rep.Counts[format.OverLimit] != 15+3+2 || len(rep.Categories) != 3 {
		t.Errorf("over_limit %d (want 20), categories %v; %q", rep.Counts[format.OverLimit], rep.Categories, problemsOf(rep, format.OverLimit))
	}
	if over := problemsOf(rep, format.OverLimit); len(over) != 3 || !strings.Contains(over[0], "image_id 1: 15 annotations past the limit of 10") {
		t.Errorf("over_limit problems %q", over)
	}
}

// TestCVATPerFileCap: an <image> of many boxes keeps the cap's first.
func TestCVATPerFileCap(t *testing.T) {
	var b strings.Builder
	b.WriteString("<annotations><version>1.1</version><image name=\"a.jpg\" width=\"50\" height=\"50\">\n")
	for range 30 {
		b.WriteString(`<box label="car" xtl="1" ytl="1" xbr="5" ybr="5"/>` + "\n")
	}
	b.WriteString("</image></annotations>")
	dir := writeTree(t, map[string]string{"annotations.xml": b.String(), "a.jpg": "x"})
	var kept int
	rep, err := format.ReadWith(context.Background(), dir, format.CVAT, format.Caps{ShapesPerFile: 7},
		func(it format.Item) error { kept += len(it.Boxes); return nil })
	if err != nil || kept != 7 || rep.Counts[format.OverLimit] != 23 {
		t.Errorf("kept %d, over %d, err %v", kept, rep.Counts[format.OverLimit], err)
	}
}

// TestForcedFormatWithoutLabels: a VOC tree read as YOLO finds no labels,
// an error naming the format, what it looked for and what the folder
// holds, without the folder's path; raw stays media only.
func TestForcedFormatWithoutLabels(t *testing.T) {
	var emitted int
	_, err := format.Read(context.Background(), labelmeVOC, format.YOLO, func(format.Item) error { emitted++; return nil })
	if err == nil || emitted != 0 {
		t.Fatalf("yolo on a VOC tree: err %v, %d items emitted", err, emitted)
	}
	msg := err.Error()
	if !strings.Contains(msg, "format yolo found no labels") || !strings.Contains(msg, ".txt label file") ||
		!strings.Contains(msg, "voc") || strings.Contains(msg, labelmeVOC) {
		t.Errorf("error %q", msg)
	}
	for _, f := range []format.Format{format.COCO, format.CVAT, format.LabelStudio} {
		if _, err := format.Read(context.Background(), labelmeVOC, f, func(format.Item) error { return nil }); err == nil ||
			!strings.Contains(err.Error(), "format "+string(f)+" found no labels") {
			t.Errorf("%s on a VOC tree: %v", f, err)
		}
	}
	items, _ := read(t, labelmeVOC, format.Raw)
	if len(items) != 6 {
		t.Errorf("raw: %d items, want the 6 images", len(items))
	}
}

// TestCOCOOneImageFloodMemory: 400,000 annotations on one image keep the
// memory of the 10,000 the per-file cap keeps, measured live while the
// image is handed out (the read kept them all before the caps: 35 MB and
// more, where the 1.7 million took 2.9 GB).
func TestCOCOOneImageFloodMemory(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "flood.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"images": [{"id": 1, "file_name": "a.jpg"}], "categories": [{"id": 1, "name": "car"}], "annotations": [`)
	const n = 400_000
	for i := range n {
		if i > 0 {
			w.WriteString(",\n")
		}
		fmt.Fprintf(w, `{"id": %d, "image_id": 1, "category_id": 1, "bbox": [%d, %d, 3, 3], "iscrowd": 0}`, i, i%100, i%90)
	}
	w.WriteString("]}")
	w.Flush()
	f.Close()
	os.WriteFile(filepath.Join(dir, "a.jpg"), []byte("x"), 0o644)
	var live uint64
	var kept int
	rep, err := format.Read(context.Background(), dir, format.COCO, func(it format.Item) error {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live, kept = ms.HeapAlloc, len(it.Boxes)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("live heap %.1f MB with %d boxes kept", float64(live)/1e6, kept)
	if kept != format.DefaultShapesPerFile || rep.Counts[format.OverLimit] != n-kept || live > 12<<20 {
		t.Errorf("kept %d, over_limit %d, live heap %d bytes", kept, rep.Counts[format.OverLimit], live)
	}
}

// TestCOCOManyBatches: a file of 1,000 annotations (four batches of those
// decoded beside the read) keeps every image's boxes and polygons in file
// order, and its malformed records are reported each on its own line, in
// file order, as a file of a few records is.
func TestCOCOManyBatches(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"images": [{"id": 1, "file_name": "a.jpg", "width": 2000, "height": 100},` + "\n" +
		`{"id": 2, "file_name": "b.jpg", "width": 2000, "height": 100}],` + "\n" +
		`"categories": [{"id": 1, "name": "car"}],` + "\n" + `"annotations": [` + "\n")
	var wantLines []string
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		switch {
		case i%97 == 5:
			fmt.Fprintf(&b, `{"id": %d, "image_id": 1, "category_id": 1, "bbox": "wide"}`, i)
			wantLines = append(wantLines, fmt.Sprintf("annotations.json:%d: annotation %d:", i+5, i))
		case i%2 == 0:
			fmt.Fprintf(&b, `{"id": %d, "image_id": 1, "category_id": 1, "bbox": [%d, 2, 1, 1]}`, i, i)
		default:
			fmt.Fprintf(&b, `{"id": %d, "image_id": 2, "category_id": 1, "bbox": [%d, 2, 1, 1], "segmentation": [[%d, 2, %d, 3, %d, 3]]}`,
				i, i, i, i+1, i)
		}
	}
	b.WriteString("]}\n")
	dir := writeTree(t, map[string]string{"annotations.json": b.String(), "a.jpg": "x", "b.jpg": "x"})
	items, rep := read(t, dir, format.COCO)
	for name, odd := range map[string]int{"a.jpg": 0, "b.jpg": 1} {
		last := -1.0
		n := 0
		for _, box := range items[name].Boxes {
			if box.X <= last || int(box.X)%2 != odd || (odd == 1) != (box.Polygon != nil) {
				t.Fatalf("%s: box at x %v after %v (polygon %v): not in file order", name, box.X, last, box.Polygon)
			}
			if odd == 1 && box.Polygon[0][0] != box.X {
				t.Fatalf("%s: box at x %v carries the polygon %v", name, box.X, box.Polygon)
			}
			last, n = box.X, n+1
		}
		if n < 480 {
			t.Errorf("%s: %d boxes, want about 500", name, n)
		}
	}
	mal := problemsOf(rep, format.Malformed)
	if len(mal) != len(wantLines) {
		t.Fatalf("malformed %q, want %d", mal, len(wantLines))
	}
	for i, w := range wantLines {
		if !strings.HasPrefix(mal[i], w) {
			t.Errorf("malformed[%d] = %q, want it to start %q", i, mal[i], w)
		}
	}
}

// TestShapeBoxCutToImage: a shape that gives no box (a YOLO segment) has
// its bounds cut to the image as a box a file gives is: a polygon past the
// right edge is clipped and said so, one wholly outside refused, one inside
// kept as it is; the points stay as the file gives them.
func TestShapeBoxCutToImage(t *testing.T) {
	dir := writeTree(t, map[string]string{"obj.names": "car\n", "a.jpg": "x",
		"a.txt": "0 0.5 0.5 1.5 0.5 1.5 1\n0 1.2 0.1 1.8 0.1 1.5 0.4\n0 0.9 0 0.1 0.5 1 1 0.2 0.6\n"})
	items, rep := read(t, dir, format.YOLO)
	got := rep.Fit(items["a.jpg"], 100, 80)
	if len(got) != 2 || got[0].X != 50 || got[0].Y != 40 || got[0].W != 50 || got[0].H != 40 || got[0].Polygon[0][2] != 150 {
		t.Fatalf("shapes %+v, want the first cut to 50,40 50x40 with its points as given", got)
	}
	if c, o := problemsOf(rep, format.Clipped), problemsOf(rep, format.OutsideImage); len(c) != 1 || len(o) != 1 ||
		!strings.Contains(c[0], "crosses the edge") || !strings.Contains(o[0], "is outside the 100x80 image") {
		t.Errorf("clipped %q, outside %q", c, o)
	}
}
