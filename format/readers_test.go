package format

// Real readers of the exports. These tests fail, not skip, when a reader is
// missing, and say what to install: `make deps` installs the Debian ones
// (darknet, python3-torchvision, python3-pil, unzip); the npm tfrecord reader
// is installed by the test with `npm ci` from testdata/tfreader.

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// debianPython is Debian's interpreter: the python3 on PATH may be another
// one without the Debian packages.
const debianPython = "/usr/bin/python3"

// runTool runs a reader in dir and returns its combined output; a missing
// tool fails the test naming the package to install.
func runTool(t *testing.T, dir, tool, pkg string, args ...string) (string, error) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs another tool's reader (" + tool + ")")
	}
	path, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s is missing: install %s (the export readers are part of the test suite)", tool, pkg)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// python runs a script with Debian's python3; when it fails, a module it
// needs that does not import is named with the Debian package to install.
// The modules are checked only then: importing torchvision costs about two
// CPU-seconds, and the script imports it anyway.
func python(t *testing.T, dir, script string, modules map[string]string, args ...string) string {
	t.Helper()
	out, err := runTool(t, dir, debianPython, "Debian package python3", append([]string{"-c", script}, args...)...)
	if err == nil {
		return out
	}
	for mod, pkg := range modules {
		if out, err := runTool(t, dir, debianPython, "Debian package python3", "-c", "import "+mod); err != nil {
			t.Fatalf("%s cannot import %s: install Debian package %s (apt-get install -y %s)\n%s", debianPython, mod, pkg, pkg, out)
		}
	}
	t.Fatalf("python reader failed: %v\n%s", err, out)
	return ""
}

// TestDarknetReadsYOLO trains Debian's darknet for one iteration on each
// split list of the YOLO export (obj.data as exported for train, the same
// with train = valid.txt / test.txt for the others), from the archive root as
// working directory. Each batch draws 64 random images from the list, so
// every image and label file of the fixture is read.
func TestDarknetReadsYOLO(t *testing.T) {
	zr, _ := export(t, ExportYOLO, fixtureDataset, withMedia(t, fixtureFrames()), true)
	root := filepath.Join(extract(t, zr), rootFolder(fixtureDataset, ExportYOLO))
	cfg := filepath.Join(t.TempDir(), "tiny.cfg")
	if err := os.WriteFile(cfg, []byte(tinyYOLOCfg(len(fixtureDataset.Labels))), 0o644); err != nil {
		t.Fatal(err)
	}
	datas := []string{"obj.data"}
	for _, list := range []string{"valid", "test"} {
		name := "check-" + list + ".data"
		body := fmt.Sprintf("classes = %d\ntrain = %s.txt\nnames = obj.names\nbackup = backup/\n", len(fixtureDataset.Labels), list)
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		datas = append(datas, name)
	}
	for _, data := range datas {
		// No -dont_show: Debian's darknet (pjreddie's) does not know the flag
		// and would load it as the weights file; training shows no window.
		out, err := runTool(t, root, "darknet", "Debian package darknet (apt-get install -y darknet)", "detector", "train", data, cfg)
		if err != nil || strings.Contains(out, "Couldn't open file") || strings.Contains(out, "Cannot load image") {
			t.Fatalf("darknet on %s: %v\n%s", data, err, out)
		}
		if testing.Verbose() {
			t.Logf("darknet detector train %s:\n%s", data, out)
		}
		if !strings.Contains(out, "avg") || !strings.Contains(out, "images") {
			t.Fatalf("darknet on %s did not train an iteration:\n%s", data, out)
		}
	}
}

// tinyYOLOCfg is the smallest network darknet trains a detector with: one
// 1x1 convolution feeding a yolo layer on a 32x32 input.
func tinyYOLOCfg(classes int) string {
	return fmt.Sprintf(`[net]
batch=64
subdivisions=1
width=32
height=32
channels=3
learning_rate=0.001
max_batches=1
policy=constant

[convolutional]
size=1
stride=1
pad=1
filters=%d
activation=linear

[yolo]
mask=0,1,2
anchors=10,14, 23,27, 37,58
classes=%d
num=3
jitter=0
ignore_thresh=.7
truth_thresh=1
random=0
`, (classes+5)*3, classes)
}

const vocScript = `
import json, sys
from torchvision.datasets import VOCDetection
out = {}
for s in ["train", "val", "trainval", "test"]:
    ds = VOCDetection(sys.argv[1], year="2007", image_set=s, download=False)
    items = []
    for i in range(len(ds)):
        img, target = ds[i]
        ann = target["annotation"]
        objs = [[o["name"], o["difficult"], o["pose"], int(o["bndbox"]["xmin"]), int(o["bndbox"]["ymin"]),
                 int(o["bndbox"]["xmax"]), int(o["bndbox"]["ymax"])] for o in ann.get("object", [])]
        items.append({"file": ann["filename"], "image": [img.width, img.height],
                      "size": [int(ann["size"]["width"]), int(ann["size"]["height"])], "objects": objs,
                      "augmented": ann.get("augmented", ""), "derived_from": ann.get("derived_from", "")})
    out[s] = items
print(json.dumps(out))
`

// TestTorchvisionReadsVOC loads every image set of the VOC export with
// torchvision's VOCDetection and checks images, sizes, boxes and the marks
// of augmented frames.
func TestTorchvisionReadsVOC(t *testing.T) {
	frames := withMedia(t, fixtureFrames())
	zr, _ := export(t, ExportVOC, fixtureDataset, frames, true)
	root := filepath.Join(extract(t, zr), rootFolder(fixtureDataset, ExportVOC))
	out := python(t, root, vocScript, map[string]string{"torchvision": "python3-torchvision"}, root)
	type item struct {
		File        string  `json:"file"`
		Image       [2]int  `json:"image"`
		Size        [2]int  `json:"size"`
		Objects     [][]any `json:"objects"`
		Augmented   string  `json:"augmented"`
		DerivedFrom string  `json:"derived_from"`
	}
	var got map[string][]item
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("torchvision output: %v\n%s", err, out)
	}
	want := map[string][]item{}
	for _, fr := range frames {
		it := item{File: mediaFile(&fr), Image: [2]int{fr.Width, fr.Height}, Size: [2]int{fr.Width, fr.Height}, Objects: [][]any{}}
		if fr.Augmented { // the source's file name, as VOCDetection gives extra elements
			it.Augmented, it.DerivedFrom = "1", sourceFile(&fr)
		}
		for _, b := range fr.Boxes {
			if c, ok := vocCorners(b, fr.Width, fr.Height); ok {
				it.Objects = append(it.Objects, []any{fixtureDataset.Labels[b.ClassID], "0", "Unspecified",
					float64(c[0]), float64(c[1]), float64(c[2]), float64(c[3])})
			}
		}
		s := vocSplits[splitIndex(fr.Split)]
		want[s] = append(want[s], it)
	}
	want["trainval"] = append(append([]item{}, want["train"]...), want["val"]...)
	for s, items := range want {
		if a, b := fmt.Sprint(got[s]), fmt.Sprint(items); a != b {
			t.Errorf("VOCDetection %s:\n got %s\nwant %s", s, a, b)
		}
	}
	// The fixture's box at (10.2,10.7)+(5.6x12.1) must read as 1-based pixels.
	if o := got["val"][0].Objects[1]; fmt.Sprint(o[3:]) != "[11 12 16 23]" {
		t.Errorf("1-based corners %v, want [11 12 16 23]", o[3:])
	}
}

const maskScript = `
import json, sys, os
from PIL import Image
out = {}
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    im = Image.open(os.path.join(d, f))
    pal = im.getpalette()
    out[f] = {"mode": im.mode, "bits": im.info.get("bits", 0), "size": list(im.size),
              "palette": pal[:12] if pal else None, "pixels": list(im.getdata())}
print(json.dumps(out))
`

// TestPillowReadsMasks checks with Pillow that masks are 8-bit palette
// images (16-bit past 255 labels) whose every pixel is the expected class,
// computed here independently: the smallest box whose area holds the pixel
// centre wins.
func TestPillowReadsMasks(t *testing.T) {
	for _, many := range []bool{false, true} {
		ds, frames := fixtureDataset, withMedia(t, fixtureFrames())
		if many {
			ds.Labels = nil
			for i := range 300 {
				ds.Labels = append(ds.Labels, fmt.Sprintf("class %d", i))
			}
			frames[0].Boxes = append(frames[0].Boxes, ExportBox{ClassID: 299, X: 50, Y: 40, W: 10, H: 5})
			for i := range frames {
				for j := range frames[i].Boxes {
					frames[i].Boxes[j].Label = ""
				}
			}
		}
		zr, _ := export(t, ExportSemanticSegmentation, ds, frames, true)
		dir := filepath.Join(extract(t, zr), rootFolder(ds, ExportSemanticSegmentation), "SegmentationClass")
		out := python(t, dir, maskScript, map[string]string{"PIL": "python3-pil"}, dir)
		var got map[string]struct {
			Mode    string `json:"mode"`
			Size    [2]int `json:"size"`
			Palette []int  `json:"palette"`
			Pixels  []int  `json:"pixels"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("pillow output: %v\n%s", err, out)
		}
		if len(got) != len(frames) {
			t.Fatalf("%d masks, want %d", len(got), len(frames))
		}
		for _, fr := range frames {
			m := got[baseName(fr.UniqueName)+".png"]
			// Pillow opens 16-bit grayscale PNGs as mode "I" (or "I;16").
			wantMode := "P"
			if many && m.Mode == "I;16" {
				wantMode = "I;16"
			} else if many {
				wantMode = "I"
			}
			if m.Mode != wantMode || m.Size != [2]int{fr.Width, fr.Height} {
				t.Errorf("%s: mode %s size %v, want %s %dx%d", fr.UniqueName, m.Mode, m.Size, wantMode, fr.Width, fr.Height)
				continue
			}
			if !many && fmt.Sprint(m.Palette) != "[0 0 0 128 0 0 0 128 0 128 128 0]" {
				t.Errorf("%s: palette starts %v, want VOC's", fr.UniqueName, m.Palette)
			}
			for i, v := range m.Pixels {
				if w := expectedClass(fr, i%fr.Width, i/fr.Width); v != w {
					t.Fatalf("%s pixel (%d,%d) = %d, want %d", fr.UniqueName, i%fr.Width, i/fr.Width, v, w)
				}
			}
		}
	}
}

// expectedClass is the mask rule written plainly, per pixel.
func expectedClass(fr Frame, x, y int) int {
	best, bestArea := 0, math.Inf(1)
	cx, cy := float64(x)+0.5, float64(y)+0.5
	for _, b := range fr.Boxes {
		r, ok := clip(b, fr.Width, fr.Height)
		if !ok || cx < r.x0 || cx >= r.x1 || cy < r.y0 || cy >= r.y1 {
			continue
		}
		a := (r.x1 - r.x0) * (r.y1 - r.y0)
		if a < bestArea || a == bestArea && b.ClassID+1 >= best {
			best, bestArea = b.ClassID+1, a
		}
	}
	return best
}

// TestZip64ReadBack writes an archive past 65,535 entries, which needs the
// zip64 end records, and reads it with archive/zip, Python's zipfile and
// unzip -t.
func TestZip64ReadBack(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 70,000 entries, read back by three readers")
	}
	frames := make([]Frame, 70000)
	for i := range frames {
		frames[i] = Frame{UniqueName: fmt.Sprintf("f-%05d", i), Ext: "jpg", Split: splits[i%3], Width: 10, Height: 10,
			Boxes: []ExportBox{{ClassID: i % 3, X: 1, Y: 1, W: 5, H: 5}}}
	}
	zr, raw := export(t, ExportYOLO, fixtureDataset, frames, false)
	if len(zr.File) < 70000 {
		t.Fatalf("%d entries", len(zr.File))
	}
	last := zr.File[len(zr.File)-1]
	if !strings.HasSuffix(last.Name, "test.txt") || strings.Count(string(readEntry(t, last)), "\n") != 23333 {
		t.Errorf("last entry %s is not the full test list", last.Name)
	}
	p := filepath.Join(t.TempDir(), "big.zip")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := python(t, "", `import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
bad = z.testzip()
print(len(z.namelist()), bad)`, nil, p)
	if want := fmt.Sprintf("%d None\n", len(zr.File)); out != want {
		t.Errorf("python zipfile: %q, want %q", out, want)
	}
	unzipTest(t, raw)
}

// nodeTFReader makes sure testdata/tfreader has its node_modules (npm ci from
// the committed lock file) and returns the folder.
func nodeTFReader(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "tfreader"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "tfrecord")); err != nil {
		// Scripts are skipped: the only one is a native CRC32C build that
		// fast-crc32c does without.
		out, err := runTool(t, dir, "npm", "Debian packages nodejs and npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		if err != nil {
			t.Fatalf("npm ci in %s (the npm registry must be reachable once): %v\n%s", dir, err, out)
		}
	}
	return dir
}

// TestNodeReadsTFRecord reads every shard with the npm tfrecord package,
// which verifies both CRCs of each record, and checks each tf.Example. The
// train split has 2,053 frames, so it spans three shards.
func TestNodeReadsTFRecord(t *testing.T) {
	reader := nodeTFReader(t)
	frames := withMedia(t, fixtureFrames())
	for i := range 2050 {
		fr := frames[i%2]
		fr.UniqueName = fmt.Sprintf("%s-copy-%04d", fr.UniqueName, i)
		frames = append(frames, fr)
	}
	for _, media := range []bool{true, false} {
		zr, _ := export(t, ExportTFRecord, fixtureDataset, frames, media)
		root := filepath.Join(extract(t, zr), rootFolder(fixtureDataset, ExportTFRecord))
		shards, _ := filepath.Glob(filepath.Join(root, "*.tfrecord"))
		wantShards := []string{"test-00000", "train-00000", "train-00001", "train-00002", "valid-00000"}
		if len(shards) != len(wantShards) {
			t.Fatalf("shards %v, want %v", shards, wantShards)
		}
		out, err := runTool(t, reader, "node", "Debian package nodejs", append([]string{"read.js"}, shards...)...)
		if err != nil {
			t.Fatalf("node tfrecord reader: %v\n%s", err, out)
		}
		var files []struct {
			File    string           `json:"file"`
			Records []map[string]any `json:"records"`
		}
		if err := json.Unmarshal([]byte(out), &files); err != nil {
			t.Fatalf("reader output: %v\n%.2000s", err, out)
		}
		got := map[string]map[string]any{}
		for i, f := range files {
			if filepath.Base(f.File) != wantShards[i]+".tfrecord" {
				t.Errorf("shard %s, want %s", f.File, wantShards[i])
			}
			for _, r := range f.Records {
				got[fmt.Sprint(r["image/source_id"])] = r
			}
		}
		if len(got) != len(frames) {
			t.Fatalf("%d records, want %d", len(got), len(frames))
		}
		for _, fr := range frames {
			checkExample(t, fr, got[fmt.Sprint([]string{fr.UniqueName})], media)
		}
	}
}

// checkExample compares a decoded record with what the frame should give.
func checkExample(t *testing.T, fr Frame, rec map[string]any, media bool) {
	t.Helper()
	want := map[string]string{
		"image/height":    fmt.Sprint([]int{fr.Height}),
		"image/width":     fmt.Sprint([]int{fr.Width}),
		"image/filename":  fmt.Sprint([]string{mediaFile(&fr)}),
		"image/source_id": fmt.Sprint([]string{fr.UniqueName}),
		"image/format":    "[jpeg]",
		// Every example says whether it is augmented and from which source.
		"image/augmented":    fmt.Sprint([]int{0}),
		"image/derived_from": fmt.Sprint([]string{fr.DerivedFrom}),
	}
	if fr.Augmented {
		want["image/augmented"] = fmt.Sprint([]int{1})
	}
	var labels, names []string
	var coords [4][]string
	for _, b := range fr.Boxes {
		r, ok := clip(b, fr.Width, fr.Height)
		if !ok {
			continue
		}
		labels = append(labels, fmt.Sprint(b.ClassID+1))
		names = append(names, fixtureDataset.Labels[b.ClassID])
		for i, v := range [4]float64{r.x0 / float64(fr.Width), r.x1 / float64(fr.Width), r.y0 / float64(fr.Height), r.y1 / float64(fr.Height)} {
			coords[i] = append(coords[i], fmt.Sprintf("%.6f", float32(v)))
		}
	}
	want["image/object/class/label"] = "[" + strings.Join(labels, " ") + "]"
	want["image/object/class/text"] = fmt.Sprint(names)
	for i, k := range [4]string{"xmin", "xmax", "ymin", "ymax"} {
		want["image/object/bbox/"+k] = "[" + strings.Join(coords[i], " ") + "]"
	}
	if media {
		rc, _ := fr.Open()
		data, _ := io.ReadAll(rc)
		want["image/encoded"] = fmt.Sprintf("[%d:%x]", len(data), sha256.Sum256(data))
	}
	if len(rec) != len(want) {
		t.Fatalf("%s: features %v, want the %d keys of %v", fr.UniqueName, rec, len(want), want)
	}
	for k, w := range want {
		v, ok := rec[k]
		if !ok {
			t.Errorf("%s: no feature %s", fr.UniqueName, k)
			continue
		}
		got := fmt.Sprint(v)
		if strings.HasPrefix(k, "image/object/bbox/") {
			parts := []string{}
			for _, f := range v.([]any) {
				parts = append(parts, fmt.Sprintf("%.6f", f))
			}
			got = "[" + strings.Join(parts, " ") + "]"
		}
		if got != w {
			t.Fatalf("%s: %s = %s, want %s", fr.UniqueName, k, got, w)
		}
	}
}

const vocSegScript = `
import json, sys, os
from PIL import Image
from torchvision.datasets import VOCSegmentation
out = {}
root = os.path.join(sys.argv[1], "VOCdevkit", "VOC2007")
for s in ["train", "val", "trainval", "test"]:
    ds = VOCSegmentation(sys.argv[1], year="2007", image_set=s, download=False)
    items = []
    for i in range(len(ds)):
        img, target = ds[i]
        stem = os.path.splitext(os.path.basename(ds.images[i]))[0]
        obj = Image.open(os.path.join(root, "SegmentationObject", stem + ".png"))
        hist = lambda im: {str(k): v for k, v in sorted(__import__("collections").Counter(im.getdata()).items())}
        items.append({"stem": stem, "image": [img.width, img.height], "mode": target.mode,
                      "class": hist(target), "object": hist(obj)})
    out[s] = items
print(json.dumps(out))
`

// TestTorchvisionReadsVOCSegmentation loads the VOC export of the fixture
// with shapes with torchvision's VOCSegmentation (every image set) and
// checks each segmented frame's class PNG, and with Pillow its object PNG:
// the triangle's and the mask's pixels as their class and object number,
// the crowd polygon's, and the boxes without a segment void (255) where no
// segment covers them. Frames without a segment are not listed.
func TestTorchvisionReadsVOCSegmentation(t *testing.T) {
	frames := withMedia(t, withShapes(fixtureFrames()))
	zr, _ := export(t, ExportVOC, fixtureDataset, frames, true)
	root := filepath.Join(extract(t, zr), rootFolder(fixtureDataset, ExportVOC))
	out := python(t, root, vocSegScript, map[string]string{"torchvision": "python3-torchvision", "PIL": "python3-pil"}, root)
	type item struct {
		Stem          string         `json:"stem"`
		Image         [2]int         `json:"image"`
		Mode          string         `json:"mode"`
		Class, Object map[string]int `json:"-"`
		ClassRaw      map[string]int `json:"class"`
		ObjectRaw     map[string]int `json:"object"`
	}
	var got map[string][]item
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("torchvision output: %v\n%s", err, out)
	}
	if len(got["train"]) != 1 || len(got["val"]) != 1 || len(got["trainval"]) != 2 || len(got["test"]) != 0 {
		t.Fatalf("image sets %v", got)
	}
	// Frame 0: the triangle is car (1), object 1; the person's box (its
	// keypoints have no segment) would be void where the triangle is not,
	// but the triangle covers it.
	f0 := frames[0]
	tri := shape.Rings(f0.Boxes[0].Polygon, f0.Height, f0.Width)
	bits := tri.Decode()
	void := 0
	for y := 0; y < f0.Height; y++ {
		for x := 0; x < f0.Width; x++ {
			b := f0.Boxes[1]
			if float64(x)+0.5 >= b.X && float64(x)+0.5 < b.X+b.W && float64(y)+0.5 >= b.Y && float64(y)+0.5 < b.Y+b.H && bits[x*f0.Height+y] == 0 {
				void++
			}
		}
	}
	bg := f0.Width*f0.Height - tri.Area() - void
	want0 := fmt.Sprintf("map[0:%d 1:%d]", bg, tri.Area())
	if void > 0 {
		want0 = fmt.Sprintf("map[0:%d 1:%d 255:%d]", bg, tri.Area(), void)
	}
	if it := got["train"][0]; it.Stem != baseName(f0.UniqueName) || it.Mode != "P" || it.Image != [2]int{64, 48} ||
		fmt.Sprint(it.ClassRaw) != want0 || fmt.Sprint(it.ObjectRaw) != want0 {
		t.Errorf("train: %+v, want class and object %s", it, want0)
	}
	// Frame 3: the mask (68 pixels: a 10x10 square, a 6x6 hole, a 2x2
	// island) is traffic light (3), object 1; the crowd polygon car (1),
	// object 3; the polyline's box void.
	f3 := frames[3]
	crowd := shape.Rings(f3.Boxes[3].Polygon, 32, 32).Area()
	it := got["val"][0]
	if it.ClassRaw["3"] != 68 || it.ObjectRaw["1"] != 68 || it.ClassRaw["1"] != crowd || it.ObjectRaw["3"] != crowd ||
		it.ClassRaw["255"] == 0 || it.ClassRaw["255"] != it.ObjectRaw["255"] || len(it.ClassRaw) != 4 {
		t.Errorf("val: %+v (crowd polygon %d pixels)", it, crowd)
	}
}
