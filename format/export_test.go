package format

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

var fixtureDataset = Dataset{Name: "Street Scenes", Version: "1.0", Labels: []string{"car", "person", "traffic light"}}

// fixtureFrames is a small dataset that touches every rule: all splits, an
// augmented frame with params, overlapping boxes, a box partly and one wholly
// outside the image, a frame without boxes, a "jpeg" extension, and
// uniqueNames with "raw" and "images" in them (darknet's label-path rewrite).
func fixtureFrames() []Frame {
	return []Frame{
		{UniqueName: "batch-01-street-0001-k3f9a", Name: "street-0001.jpg", Ext: "jpg", Split: "train", Width: 64, Height: 48,
			Boxes: []ExportBox{{Label: "car", ClassID: 0, X: 4, Y: 8, W: 40, H: 30}, {Label: "person", ClassID: 1, X: 20, Y: 10, W: 8.5, H: 20.25}}},
		{UniqueName: "batch-01-street-0001-k3f9a-flip-x1", Name: "street-0001.jpg", Ext: "jpg", Split: "train", Width: 64, Height: 48,
			Augmented: true, DerivedFrom: "batch-01-street-0001-k3f9a", Params: json.RawMessage(`[{"op":"flip","horizontal":true}]`),
			Boxes: []ExportBox{{ClassID: 0, X: 20, Y: 8, W: 40, H: 30}, {ClassID: 1, X: 35.5, Y: 10, W: 8.5, H: 20.25}}},
		{UniqueName: "raw-images-0007-p2x8q", Name: "IMG 0007.JPEG", Ext: "JPEG", Split: "train", Width: 40, Height: 40,
			Boxes: []ExportBox{{ClassID: 2, X: -5, Y: 30, W: 15, H: 20}, {ClassID: 0, X: 50, Y: 50, W: 5, H: 5}}},
		{UniqueName: "batch-02-crossing-0003-m1n2b", Name: "crossing.jpg", Ext: "jpg", Split: "validation", Width: 32, Height: 32,
			Boxes: []ExportBox{{ClassID: 2, X: 0, Y: 0, W: 32, H: 32}, {ClassID: 1, X: 10.2, Y: 10.7, W: 5.6, H: 12.1}}},
		{UniqueName: "batch-02-empty-0004-z9y8x", Name: "empty.jpg", Ext: "jpg", Split: "validation", Width: 24, Height: 16},
		{UniqueName: "batch-03-night-0005-q7w6e", Name: "night.jpg", Ext: "jpg", Split: "test", Width: 48, Height: 32,
			Boxes: []ExportBox{{ClassID: 1, X: 2, Y: 2, W: 10, H: 10}, {ClassID: 0, X: 2, Y: 2, W: 10, H: 10}}},
	}
}

// withMedia gives each frame a JPEG of its size; the pixel colour differs by
// frame so a swapped image would show.
func withMedia(t testing.TB, frames []Frame) []Frame {
	for i := range frames {
		img := image.NewRGBA(image.Rect(0, 0, frames[i].Width, frames[i].Height))
		for p := 0; p < len(img.Pix); p += 4 {
			img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(40*i), 128, uint8(p), 255
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		frames[i].Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	return frames
}

func sliceNext(frames []Frame) func() (Frame, error) {
	i := 0
	return func() (Frame, error) {
		if i == len(frames) {
			return Frame{}, io.EOF
		}
		i++
		return frames[i-1], nil
	}
}

// export writes the frames in format f and opens the result as a zip.
func export(t testing.TB, f ExportType, ds Dataset, frames []Frame, media bool) (*zip.Reader, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, f, ds, sliceNext(frames), media); err != nil {
		t.Fatalf("write %s: %v", f, err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("archive/zip cannot read the %s export: %v", f, err)
	}
	return zr, buf.Bytes()
}

// extract unpacks an archive into a new temp folder and returns that folder.
func extract(t testing.TB, zr *zip.Reader) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range zr.File {
		if !filepath.IsLocal(f.Name) {
			t.Fatalf("entry %q escapes the archive", f.Name)
		}
		p := filepath.Join(dir, f.Name)
		if strings.HasSuffix(f.Name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, readEntry(t, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readEntry(t testing.TB, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatalf("open %s: %v", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc) // checks the CRC
	if err != nil {
		t.Fatalf("read %s: %v", f.Name, err)
	}
	return b
}

// TestGolden compares annotation-only archives of the fixture with
// testdata/golden/<format>.txt: every entry in order with its method and
// content (masks drawn as characters, other binaries by size and sha256).
// Run with -update to rewrite them after a deliberate change.
func TestGolden(t *testing.T) {
	for _, f := range ExportTypes() {
		t.Run(f.slug(), func(t *testing.T) {
			zr, _ := export(t, f, fixtureDataset, fixtureFor(f), false)
			got := describe(t, zr)
			path := filepath.Join("testdata", "golden", f.slug()+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./format/ -run TestGolden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s export differs from %s (rerun with -update if intended)\n%s", f, path, firstDiff(string(want), got))
			}
		})
	}
}

func describe(t testing.TB, zr *zip.Reader) string {
	var b strings.Builder
	for _, f := range zr.File {
		method := map[uint16]string{zip.Store: "store", zip.Deflate: "deflate"}[f.Method]
		data := readEntry(t, f)
		fmt.Fprintf(&b, "=== %s (%s, %d bytes)\n", f.Name, method, len(data))
		switch {
		case strings.HasSuffix(f.Name, ".png"):
			b.WriteString(maskText(t, data))
		case strings.HasSuffix(f.Name, ".tfrecord"):
			text, err := tfText(data)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			fmt.Fprintf(&b, "sha256 %x\n%s", sha256.Sum256(data), text)
		default:
			b.Write(data)
		}
	}
	return b.String()
}

// maskText draws a mask one character per pixel: '.' background, then the
// class index in base 36.
func maskText(t testing.TB, data []byte) string {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("mask: %v", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%T %v\n", img, img.Bounds().Size())
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			v := maskValue(img, x, y)
			if v == 0 {
				b.WriteByte('.')
			} else if v == vocVoid {
				b.WriteByte('#') // VOC's void, not to be read as a class
			} else {
				b.WriteString(strings.ToUpper(fmt.Sprintf("%x", v%36)))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func maskValue(img image.Image, x, y int) int {
	switch m := img.(type) {
	case *image.Paletted:
		return int(m.ColorIndexAt(x, y))
	case *image.Gray16:
		return int(m.Gray16At(x, y).Y)
	}
	return int(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n want %q\n  got %q", i+1, wl, gl)
		}
	}
	return ""
}

func TestParseFormat(t *testing.T) {
	for _, f := range ExportTypes() {
		got, err := ParseExportType(strings.ToLower(string(f)))
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", strings.ToLower(string(f)), got, err)
		}
	}
	_, err := ParseExportType("yolov8")
	if errs.CodeOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), `"yolov8"`) || !strings.Contains(err.Error(), "'YOLO Darknet'") {
		t.Errorf("unknown format: %v", err)
	}
	var e *errs.Error
	if errors.As(err, &e) && e.Field != "export_type" {
		t.Errorf("field %q, want export_type", e.Field)
	}
}

func TestRESTBoxes(t *testing.T) {
	fr := fixtureFrames()[2] // 40x40; a box partly outside, one wholly outside
	fr.Boxes[0].Label, fr.Boxes[1].Label = "traffic light", "car"
	y := YOLOBoxes(fr)
	if len(y) != 1 || y[0] != (YOLOBox{ClassID: 2, CX: 0.125, CY: 0.875, W: 0.25, H: 0.25}) {
		t.Errorf("YOLOBoxes = %+v", y)
	}
	r := RCNNBoxes(fr)
	if len(r) != 1 || r[0] != (RCNNBox{Label: "traffic light", XMin: 0, YMin: 30, XMax: 10, YMax: 40}) {
		t.Errorf("RCNNBoxes = %+v", r)
	}
	tf := TFBoxes(fr)
	if len(tf) != 1 || tf[0] != (TFBox{Label: "traffic light", ClassID: 3, XMin: 0, YMin: 0.75, XMax: 0.25, YMax: 1}) {
		t.Errorf("TFBoxes = %+v", tf)
	}
	b, _ := json.Marshal(YOLOBoxes(Frame{Boxes: fr.Boxes}))
	if string(b) != "[]" {
		t.Errorf("frame without size: %s, want []", b)
	}
}

func TestDarknetLabelPath(t *testing.T) {
	for in, want := range map[string]string{
		"train/a-0001.jpg":          "train/a-0001.txt",
		"train/raw-images-0007.jpg": "train/labels-labels-0007.txt",
		"valid/x.png":               "valid/x.txt",
	} {
		if got := darknetLabelPath(in); got != want {
			t.Errorf("darknetLabelPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNames(t *testing.T) {
	if got := rootFolder(fixtureDataset, ExportYOLO); got != "street-scenes-1.0-yolo-darknet/" {
		t.Errorf("root %q", got)
	}
	if got := rootFolder(Dataset{Name: "../..", Version: ""}, ExportVOC); got != "dataset-pascal-voc/" {
		t.Errorf("root %q", got)
	}
	for in, want := range map[string]string{"a/b": "a_b", "..": "___", "": "_", "ok-1.x": "ok-1.x"} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"JPEG": "jpg", ".png": "png", "": "bin", "a/b": "bin"} {
		if got := mediaExt(in); got != want {
			t.Errorf("mediaExt(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBadInput(t *testing.T) {
	base := fixtureFrames()[0]
	cases := map[string]func(*Frame){
		"split":       func(f *Frame) { f.Split = "holdout" },
		"class":       func(f *Frame) { f.Boxes = []ExportBox{{ClassID: 3, W: 1, H: 1}} },
		"label":       func(f *Frame) { f.Boxes = []ExportBox{{Label: "bus", ClassID: 0, W: 1, H: 1}} },
		"media":       func(f *Frame) { f.Open = nil },
		"params":      func(f *Frame) { f.Params = json.RawMessage("{") },
		"uniqueName":  func(f *Frame) { f.UniqueName = "" },
		"derivedFrom": func(f *Frame) { f.Augmented = true },
	}
	for name, mutate := range cases {
		fr := withMedia(t, []Frame{base})[0]
		mutate(&fr)
		err := Write(context.Background(), io.Discard, ExportRAW, fixtureDataset, sliceNext([]Frame{fr}), true)
		if errs.CodeOf(err) != errs.FailedPrecondition {
			t.Errorf("%s: %v, want failed_precondition", name, err)
		}
	}
	noSize := base
	noSize.Width = 0
	if err := Write(context.Background(), io.Discard, ExportYOLO, fixtureDataset, sliceNext([]Frame{noSize}), false); err == nil {
		t.Error("YOLO frame without size: no error")
	}
	if err := Write(context.Background(), io.Discard, ExportYOLO, Dataset{Labels: []string{"a", "a"}}, sliceNext(nil), false); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("duplicate labels: %v", err)
	}
	if err := Write(context.Background(), io.Discard, "Darknet", fixtureDataset, sliceNext(nil), false); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("unknown format: %v", err)
	}
}

// TestAugmentedSourceNamedByItsExtension: an augmented frame in another
// format than its source names the source's file with the source's extension.
func TestAugmentedSourceNamedByItsExtension(t *testing.T) {
	src := Frame{UniqueName: "scan-0001", Ext: "JPEG", Split: "train", Width: 8, Height: 8}
	aug := Frame{UniqueName: "scan-0001-aug1", Ext: "png", Split: "train", Width: 8, Height: 8, Augmented: true,
		DerivedFrom: "scan-0001", DerivedFromExt: "JPEG"}
	for _, c := range []struct {
		f          ExportType
		entry, has string
	}{
		{ExportYOLO, "augmented/train.txt", "train/scan-0001-aug1.png train/scan-0001.jpg\n"},
		{ExportSemanticSegmentation, "augmented/train.txt", "scan-0001-aug1 scan-0001\n"},
		{ExportCOCO, "train/annotations.json", `"file_name":"scan-0001-aug1.png","width":8,"height":8,"augmented":true,"derived_from":"scan-0001.jpg"}`},
		{ExportVOC, vocRoot + "Annotations/scan-0001-aug1.xml", "<augmented>1</augmented>\n\t<derived_from>scan-0001.jpg</derived_from>"},
	} {
		zr, _ := export(t, c.f, fixtureDataset, []Frame{src, aug}, false)
		var body string
		for _, f := range zr.File {
			if f.Name == rootFolder(fixtureDataset, c.f)+c.entry {
				body = string(readEntry(t, f))
			}
		}
		if !strings.Contains(body, c.has) {
			t.Errorf("%s %s:\n%s\nlacks %q", c.f, c.entry, body, c.has)
		}
	}
}

// TestCleanup checks that temp files go away on success, on a failing
// source and on cancellation.
func TestCleanup(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	boom := errors.New("boom")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, f := range ExportTypes() {
		_ = Write(context.Background(), io.Discard, f, fixtureDataset, sliceNext(fixtureFrames()), false)
		n := 0
		_ = Write(context.Background(), io.Discard, f, fixtureDataset, func() (Frame, error) {
			if n++; n > 2 {
				return Frame{}, boom
			}
			return fixtureFrames()[n], nil
		}, false)
		if err := Write(ctx, io.Discard, f, fixtureDataset, sliceNext(fixtureFrames()), false); !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled: %v", f, err)
		}
	}
	left, _ := os.ReadDir(tmp)
	if len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// TestMediaAsStored checks media bytes are copied unchanged and stored, and
// that every format's archive passes unzip -t.
func TestMediaAsStored(t *testing.T) {
	frames := withMedia(t, fixtureFrames())
	want := map[string][]byte{}
	for _, fr := range frames {
		rc, _ := fr.Open()
		want[mediaFile(&fr)], _ = io.ReadAll(rc)
	}
	for _, f := range ExportTypes() {
		zr, raw := export(t, f, fixtureDataset, withMedia(t, fixtureFor(f)), true)
		seen := 0
		for _, e := range zr.File {
			if w, ok := want[filepath.Base(e.Name)]; ok && f != ExportTFRecord {
				seen++
				if e.Method != zip.Store || !bytes.Equal(readEntry(t, e), w) {
					t.Errorf("%s: %s is not the stored bytes, stored", f, e.Name)
				}
			}
		}
		if f != ExportTFRecord && seen != len(frames) {
			t.Errorf("%s: %d media files, want %d", f, seen, len(frames))
		}
		unzipTest(t, raw)
	}
}

func unzipTest(t *testing.T, raw []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runTool(t, "", "unzip", "Debian package unzip", "-tq", p)
	if err != nil {
		t.Fatalf("unzip -t: %v\n%s", err, out)
	}
}
