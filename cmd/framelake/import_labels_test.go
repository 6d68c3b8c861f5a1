package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/framelake/framelake/lake/shape"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/testmedia"
)

// Real inputs: Debian's labelme-examples (a Pascal VOC tree from
// labelme2voc.py, a COCO JSON from labelme2coco.py) and darknet's sample
// images and coco.names, with hand-written YOLO labels.
const (
	labelmeVOC      = "/usr/share/doc/labelme-examples/examples/bbox_detection/data_dataset_voc"
	labelmeCOCO     = "/usr/share/doc/labelme-examples/examples/instance_segmentation/data_dataset_coco"
	labelmeExamples = "/usr/share/doc/labelme-examples/examples"
	darknetData     = "/usr/share/darknet/data"
)

// labelledSummary is the --json summary of a labelled import.
type labelledSummary struct {
	Format, FormatWhy      string
	Files, Stored, Skipped int
	Labels                 struct {
		Operation                           string
		Categories                          []string
		Boxes, FilesChanged, FilesUnchanged int
		Shapes                              map[string]int
		Splits                              map[string]int
		Counts                              map[string]int
		Refused                             int
		Problems                            []struct {
			Kind, File, Message string
			Line                int
		}
	}
}

func importLabelled(t *testing.T, wantFail bool, args ...string) labelledSummary {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"import", "--json"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if (err != nil) != wantFail {
		t.Fatalf("import %v: exit %v (want failure %v)\n%s%s", args, err, wantFail, out, stderr.String())
	}
	var sum labelledSummary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	return sum
}

// yoloTree lays out darknet's images Ultralytics-style with a data.yaml,
// hand-checked labels and the odd cases: a segment line, a box past the
// right edge, a malformed line, a label file without its image, an image
// without labels.
func yoloTree(t *testing.T) string {
	dir := t.TempDir()
	names, err := os.ReadFile(filepath.Join(darknetData, "coco.names"))
	if err != nil {
		t.Fatal(err)
	}
	yaml := "path: .\ntrain: images/train\nval: images/val\nnames:\n"
	for i, n := range strings.Split(strings.TrimSpace(string(names)), "\n") {
		yaml += "  " + strconv.Itoa(i) + ": " + n + "\n"
	}
	files := map[string]string{
		"data.yaml":                yaml,
		"images/train/dog.jpg":     "@dog.jpg",
		"images/train/giraffe.jpg": "@giraffe.jpg",
		"images/val/horses.jpg":    "@horses.jpg",
		"labels/train/dog.txt": "16 0.291667 0.659722 0.25 0.541667\n7 0.95 0.2 0.2 0.15\n" +
			"0 0.1 0.1 0.2 0.1 0.2 0.3 0.1 0.3\n16 0.5 0.5\n",
		"labels/val/horses.txt":  "17 0.5 0.5 0.4 0.6\n",
		"labels/train/ghost.txt": "0 0.5 0.5 0.1 0.1\n",
	}
	for name, body := range files {
		b := []byte(body)
		if src, ok := strings.CutPrefix(body, "@"); ok {
			if b, err = os.ReadFile(filepath.Join(darknetData, src)); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serveData starts a server on data and returns a client with a write key,
// the flags that give import the same, and a stop function.
func serveData(t *testing.T, data string) (*client.Client, []string, func()) {
	t.Helper()
	addr := freeAddr(t)
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr)
	var log bytes.Buffer
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	waitHealthy(t, base)
	out, err := run(t, "keys", "create", "--data", data, "--name", "w", "--role", "write", "--json")
	var k map[string]string
	if err != nil || json.Unmarshal([]byte(out), &k) != nil {
		t.Fatalf("keys create: %v %s", err, out)
	}
	return client.New(base, k["key"], k["secret"]), []string{"--url", base, "--key", k["key"], "--secret", k["secret"]},
		func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }
}

type pixelBox struct{ x, y, w, h float64 }

// boxesByFile reads, through the API, each file of a collection's boxes
// by label, and the files' split metadata.
func boxesByFile(t *testing.T, c *client.Client, collection string) (map[string]map[string][]pixelBox, map[string]string) {
	t.Helper()
	ctx := context.Background()
	items := mustItems(t, c, collection)
	boxes, splits := map[string]map[string][]pixelBox{}, map[string]string{}
	for _, it := range items {
		bs, err := c.FileAnnotations(ctx, it.UniqueName)
		if err != nil {
			t.Fatal(err)
		}
		boxes[it.Name] = map[string][]pixelBox{}
		for _, b := range bs {
			if b.Source != "human" || b.Operation != "import:"+collection {
				t.Errorf("%s: box %+v is not a human box of import:%s", it.Name, b, collection)
			}
			boxes[it.Name][b.Label] = append(boxes[it.Name][b.Label], pixelBox{b.X, b.Y, b.Width, b.Height})
		}
		d, err := c.GetFileDetails(ctx, it.UniqueName, map[string]bool{"split": true})
		if err != nil {
			t.Fatal(err)
		}
		splits[it.Name], _ = d["split"].(string)
	}
	return boxes, splits
}

func closeTo(a, b pixelBox) bool {
	return math.Abs(a.x-b.x) < 0.01 && math.Abs(a.y-b.y) < 0.01 && math.Abs(a.w-b.w) < 0.01 && math.Abs(a.h-b.h) < 0.01
}

// TestImportYOLOOverHTTP imports a YOLO tree through a server: boxes in
// pixels of the images as the lake measured them, the segment line as a
// polygon (read as its box here), the box past the edge clipped, the split as metadata; the malformed
// line and the label file without its image are reported with file and
// line and make the exit status non-zero; a re-run changes nothing.
func TestImportYOLOOverHTTP(t *testing.T) {
	data, dir := t.TempDir(), yoloTree(t)
	c, creds, stop := serveData(t, data)
	defer stop()
	args := append([]string{dir, "--collection", "yolo"}, creds...)
	sum := importLabelled(t, true, args...)
	l := sum.Labels
	wantCounts := map[string]int{"malformed": 1, "label_without_image": 1, "image_without_labels": 1, "clipped": 1}
	if sum.Format != "yolo" || !strings.Contains(sum.FormatWhy, "data.yaml") || sum.Stored != 3 || l.Boxes != 4 ||
		l.FilesChanged != 2 || l.Refused != 2 || len(l.Categories) != 80 || !maps.Equal(l.Counts, wantCounts) {
		t.Fatalf("summary %+v", sum)
	}
	places := map[string]string{}
	for _, p := range l.Problems {
		places[p.Kind] = p.File + ":" + strconv.Itoa(p.Line)
	}
	if places["malformed"] != "labels/train/dog.txt:4" || places["label_without_image"] != "labels/train/ghost.txt:0" ||
		places["image_without_labels"] != "images/train/giraffe.jpg:0" {
		t.Errorf("problem places %v", places)
	}
	boxes, splits := boxesByFile(t, c, "yolo")
	for _, it := range mustItems(t, c, "yolo") {
		bs, _ := c.FileAnnotations(context.Background(), it.UniqueName)
		for _, b := range bs {
			if b.Label == "person" && (b.Type != shape.Polygon || len(b.Polygon) != 1 || len(b.Polygon[0]) != 8) {
				t.Errorf("the segment line through the server: %+v", b)
			}
		}
	}
	want := map[string]map[string]pixelBox{
		"dog.jpg":    {"dog": {128, 224, 192, 312}, "truck": {652.8, 72, 115.2, 86.4}, "person": {76.8, 57.6, 76.8, 115.2}},
		"horses.jpg": {"horse": {231.9, 102.4, 309.2, 307.2}},
	}
	for file, labels := range want {
		for label, w := range labels {
			if got := boxes[file][label]; len(got) != 1 || !closeTo(got[0], w) {
				t.Errorf("%s %s: %v, want %v", file, label, got, w)
			}
		}
	}
	if len(boxes["giraffe.jpg"]) != 0 || splits["dog.jpg"] != "train" || splits["giraffe.jpg"] != "train" || splits["horses.jpg"] != "val" {
		t.Errorf("giraffe boxes %v, splits %v", boxes["giraffe.jpg"], splits)
	}
	ctx := context.Background()
	cols, _ := c.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection"})
	val, err := c.GetItemListFromCollection(ctx, cols[0].ID, client.ItemQuery{Query: `metadata.split = "val"`})
	if err != nil || len(val) != 1 || val[0].Name != "horses.jpg" {
		t.Errorf("metadata.split = val: %+v %v", val, err)
	}
	d, err := c.GetCollectionDetails(ctx, cols[0].ID, map[string]bool{"import": true})
	if imp, _ := d["import"].(map[string]any); err != nil || imp["format"] != "yolo" || len(imp["categories"].([]any)) != 80 {
		t.Errorf("collection metadata import: %v %v", d, err)
	}
	again := importLabelled(t, true, args...)
	if again.Skipped != 3 || again.Labels.FilesChanged != 0 || again.Labels.FilesUnchanged != 3 {
		t.Errorf("re-run %+v: want everything there and unchanged", again)
	}
}

// mustItems lists the files of the image collection named collection.
func mustItems(t *testing.T, c *client.Client, collection string) []client.Item {
	t.Helper()
	ctx := context.Background()
	cols, err := c.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection", Query: `name = "` + collection + `"`})
	if err != nil || len(cols) != 1 {
		t.Fatalf("collection %s: %+v %v", collection, cols, err)
	}
	items, err := c.GetItemListFromCollection(ctx, cols[0].ID, client.ItemQuery{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestImportLabelme imports labelme's primitives example through the binary
// into a data folder and reads its shapes back through the API: one of
// each type labelme draws.
func TestImportLabelme(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	for _, f := range []string{"primitives.json", "primitives.jpg"} {
		b, err := os.ReadFile(filepath.Join(labelmeExamples, "primitives", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	sum := importLabelled(t, false, dir, "--data", data, "--collection", "prims")
	if sum.Format != "labelme" || sum.Stored != 1 || sum.Labels.Boxes != 7 || len(sum.Labels.Counts) != 0 ||
		!maps.Equal(sum.Labels.Shapes, map[string]int{"box": 2, "polygon": 2, "polyline": 2, "keypoints": 1}) {
		t.Fatalf("summary %+v", sum)
	}
	out, err := run(t, "import", dir, "--data", data, "--collection", "prims")
	if err != nil || !strings.Contains(out, "labels: 7 shapes (box 2, polygon 2, polyline 2, keypoints 1) on 0 files changed, 1 unchanged") {
		t.Errorf("import again: %v\n%s", err, out)
	}
	c, _, stop := serveData(t, data)
	defer stop()
	items := mustItems(t, c, "prims")
	bs, err := c.FileAnnotations(context.Background(), items[0].UniqueName)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, b := range bs {
		types[b.Label] = string(b.Type)
	}
	want := map[string]string{"rectangle": "box", "circle": "polygon", "polygon": "polygon", "line": "polyline",
		"point": "keypoints", "line_strip": "polyline"}
	if !maps.Equal(types, want) {
		t.Errorf("types %v, want %v", types, want)
	}
}

// TestImportLabelmeCOCOAndVOC imports the COCO JSON and the VOC tree
// labelme's converters wrote into a data folder, then reads the boxes back
// through the API: COCO's bbox as written with its polygon beside it, VOC's
// 1-based corners as pixels.
func TestImportLabelmeCOCOAndVOC(t *testing.T) {
	data := t.TempDir()
	coco := importLabelled(t, false, labelmeCOCO, "--data", data, "--collection", "coco")
	if coco.Format != "coco" || coco.Stored != 3 || coco.Labels.Boxes != 12 || len(coco.Labels.Categories) != 21 ||
		len(coco.Labels.Counts) != 0 {
		t.Fatalf("coco %+v", coco)
	}
	voc := importLabelled(t, false, labelmeVOC, "--data", data, "--collection", "voc")
	if voc.Format != "voc" || voc.Stored != 3 || voc.Labels.Boxes != 9 {
		t.Fatalf("voc %+v", voc)
	}
	if again := importLabelled(t, false, labelmeVOC, "--data", data, "--collection", "voc"); again.Stored != 0 ||
		again.Labels.FilesChanged != 0 || again.Labels.FilesUnchanged != 3 {
		t.Errorf("voc re-run %+v", again)
	}
	c, _, stop := serveData(t, data)
	defer stop()
	cb, _ := boxesByFile(t, c, "coco")
	if p := cb["2011_000003.jpg"]["person"]; len(p) != 2 || !closeTo(p[0], pixelBox{191, 107, 123, 221}) ||
		!closeTo(cb["2011_000003.jpg"]["bottle"][0], pixelBox{369, 159, 19, 54}) {
		t.Errorf("coco 2011_000003 %v", cb["2011_000003.jpg"])
	}
	polygons := 0
	for _, it := range mustItems(t, c, "coco") {
		bs, err := c.FileAnnotations(context.Background(), it.UniqueName)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.Type == "polygon" && len(b.Polygon) > 0 && len(b.Polygon[0]) >= 6 && b.Area != nil && *b.Area > 0 {
				polygons++
			}
		}
	}
	if polygons != 12 {
		t.Errorf("%d of the 12 COCO annotations read back as polygons with their area", polygons)
	}
	vb, _ := boxesByFile(t, c, "voc")
	if p := vb["2011_000003.jpg"]["person"]; len(p) != 2 || !closeTo(p[0], pixelBox{190, 106.369, 123, 223}) {
		t.Errorf("voc 2011_000003 %v", vb["2011_000003.jpg"])
	}
	if n := len(vb["2011_000006.jpg"]["person"]) + len(vb["2011_000025.jpg"]["bus"]); n != 6 {
		t.Errorf("voc 2011_000006 persons + 2011_000025 buses = %d, want 4 + 2", n)
	}
}

// TestImportCVATAndLabelStudio imports the hand-checked CVAT 1.1 and Label
// Studio fixtures (format/testdata) with real images beside them: the
// shapes the formats really write come in (CVAT's polygon and tag, Label
// Studio's polygon, keypoint and choice as shapes), the zero-size box and the
// image that is not there are refused (non-zero exit), the split comes
// from CVAT's subset.
func TestImportCVATAndLabelStudio(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct {
		fixture, format string
		images          []string
		boxes           int
		counts          map[string]int
	}{
		{"cvat", "cvat", []string{"images/street-1.jpg", "images/street-2.jpg"}, 4,
			map[string]int{"ignored": 1, "zero_size": 1, "label_without_image": 2, "clipped": 1}},
		// The fixture's brush ([0, 1, 2]) does not decode: a malformed shape now that brushes are read.
		{"labelstudio", "labelstudio", []string{"street-1.jpg", "photos/street-2.jpg"}, 5,
			map[string]int{"malformed": 1, "zero_size": 1, "label_without_image": 1, "clipped": 1}},
	} {
		dir := t.TempDir()
		src := filepath.Join("..", "..", "format", "testdata", tc.fixture)
		ents, _ := os.ReadDir(src)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(src, e.Name()))
			os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
		for i, img := range tc.images {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, img)), 0o755)
			os.WriteFile(filepath.Join(dir, img), testmedia.JPEG(64, 48, i+1), 0o644)
		}
		sum := importLabelled(t, true, dir, "--data", data, "--collection", tc.fixture)
		if sum.Format != tc.format || sum.Stored != 2 || sum.Labels.Boxes != tc.boxes || !maps.Equal(sum.Labels.Counts, tc.counts) {
			t.Errorf("%s: %+v", tc.fixture, sum)
		}
		if tc.format == "cvat" && (sum.Labels.Splits["train"] != 1 || sum.Labels.Splits["val"] != 1) {
			t.Errorf("cvat splits %v", sum.Labels.Splits)
		}
	}
}

// TestImportExportArchive imports a zip as framelake's own COCO export
// writes it (train/, valid/, test/ each with annotations.json beside the
// images): every split comes back, with its boxes.
func TestImportExportArchive(t *testing.T) {
	frames := []format.Frame{
		{UniqueName: "a-1", Split: "train", Width: 64, Height: 48, Boxes: []format.ExportBox{{Label: "car", X: 4, Y: 8, W: 40, H: 30}}},
		{UniqueName: "b-2", Split: "validation", Width: 32, Height: 32, Boxes: []format.ExportBox{
			{Label: "person", ClassID: 1, X: 10, Y: 11, W: 6, H: 12}, {Label: "car", X: 0, Y: 0, W: 5, H: 5}}},
		{UniqueName: "c-3", Split: "test", Width: 48, Height: 32},
	}
	for i := range frames {
		b := testmedia.JPEG(frames[i].Width, frames[i].Height, i+1)
		frames[i].Ext = "jpg"
		frames[i].Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	zipPath := filepath.Join(t.TempDir(), "street.zip")
	out, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	next := func() (format.Frame, error) {
		if i == len(frames) {
			return format.Frame{}, io.EOF
		}
		i++
		return frames[i-1], nil
	}
	ds := format.Dataset{Name: "street", Version: "1.0", Labels: []string{"car", "person"}}
	if err := format.Write(context.Background(), out, format.ExportCOCO, ds, next, true); err != nil {
		t.Fatal(err)
	}
	out.Close()
	sum := importLabelled(t, false, zipPath, "--data", t.TempDir())
	if sum.Format != "coco" || sum.Stored != 3 || sum.Labels.Boxes != 3 || sum.Labels.Operation != "import:street" ||
		sum.Labels.Splits["train"] != 1 || sum.Labels.Splits["val"] != 1 || sum.Labels.Splits["test"] != 1 {
		t.Errorf("summary %+v", sum)
	}
}

// TestShapesRoundTripCOCO: a COCO export of a polygon, a mask, a polygon
// with a hole and a box, imported again through the binary, reads back the
// same shapes through the API: the polygon's rings and the mask's counts as
// written, and the polygon with a hole as the mask of its pixels (COCO's
// readers unite rings, so the export writes it as a mask).
func TestShapesRoundTripCOCO(t *testing.T) {
	square := []float64{10, 10, 30, 10, 30, 30, 10, 30}
	hole := [][]float64{{0, 0, 40, 0, 40, 40, 0, 40}, {10, 10, 30, 10, 30, 30, 10, 30}}
	mask := shape.RLE{Height: 48, Width: 64, Counts: []uint32{0, 4, 3068}}
	fr := format.Frame{UniqueName: "a-1", Split: "train", Width: 64, Height: 48, Ext: "jpg", Boxes: []format.ExportBox{
		{Label: "car", X: 4, Y: 8, W: 40, H: 30},
		{Label: "car", X: 10, Y: 10, W: 20, H: 20, Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{square}}},
		{Label: "car", X: 0, Y: 0, W: 1, H: 4, Geometry: shape.Geometry{Type: shape.Mask,
			Mask: &shape.EncodedMask{Size: [2]int{48, 64}, Counts: mask.String()}}},
		{Label: "car", X: 0, Y: 0, W: 40, H: 40, Geometry: shape.Geometry{Type: shape.Polygon, Polygon: hole}},
	}}
	img := testmedia.JPEG(64, 48, 1)
	fr.Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }
	zipPath := filepath.Join(t.TempDir(), "shapes.zip")
	out, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	next := func() (format.Frame, error) {
		if done {
			return format.Frame{}, io.EOF
		}
		done = true
		return fr, nil
	}
	if err := format.Write(context.Background(), out, format.ExportCOCO, format.Dataset{Name: "shapes", Version: "1.0",
		Labels: []string{"car"}}, next, true); err != nil {
		t.Fatal(err)
	}
	out.Close()
	data := t.TempDir()
	if sum := importLabelled(t, false, zipPath, "--data", data, "--collection", "shapes"); sum.Labels.Boxes != 4 {
		t.Fatalf("summary %+v", sum)
	}
	c, _, stop := serveData(t, data)
	defer stop()
	bs, err := c.FileAnnotations(context.Background(), mustItems(t, c, "shapes")[0].UniqueName)
	if err != nil || len(bs) != 4 {
		t.Fatalf("%d annotations, %v", len(bs), err)
	}
	if bs[0].Type != "box" || bs[0].Width != 40 {
		t.Errorf("box %+v", bs[0])
	}
	if bs[1].Type != shape.Polygon || !slices.Equal(bs[1].Polygon[0], square) {
		t.Errorf("polygon %+v", bs[1])
	}
	if bs[2].Type != shape.Mask || bs[2].Mask.Counts != mask.String() {
		t.Errorf("mask %+v", bs[2])
	}
	want := shape.Rings(hole, 48, 64)
	if bs[3].Type != shape.Mask || bs[3].Mask.Counts != want.String() || want.Area() != 40*40-20*20 {
		t.Errorf("polygon with a hole %+v (area %d)", bs[3], want.Area())
	}
}
