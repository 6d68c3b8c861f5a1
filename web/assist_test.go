package web_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

// assistServer is a real appliance on loopback with a write key; modelsDir
// ("" none) holds the system default packages it registers at start.
type assistServer struct {
	base, key, secret string
	a                 *appliance.Appliance
}

func startAssistServer(t testing.TB, modelsDir string) *assistServer {
	t.Helper()
	workers := -1 // no job queue, and then no defaults either
	if modelsDir != "" {
		workers = 1
	}
	ctx, a := serveAppliance(t, appliance.Config{JobWorkers: workers, ModelsDir: modelsDir,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	k, secret, err := a.Keys.Create(ctx, "annotator", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	return &assistServer{base: "http://" + a.Addr(), key: k.Key, secret: secret, a: a}
}

func (s *assistServer) add(t testing.TB, name string, b []byte) lake.File {
	t.Helper()
	res, err := s.a.Lake.Add(context.Background(), lake.AddOptions{Collection: "pics"},
		[]lake.Upload{{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("add %s: %v %+v", name, err, res)
	}
	return res.Stored[0]
}

// post sends a JSON body and decodes the answer into out (when 200).
func (s *assistServer) post(t testing.TB, path string, body, out any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("key", s.key)
	req.Header.Set("secret", s.secret)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v in %s", path, err, raw)
		}
	}
	return resp.StatusCode, string(raw)
}

// packageTarGz packs files (path -> content) as a model package .tar.gz.
func packageTarGz(t testing.TB, files map[string]string) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return &buf
}

// fixedMaskPy is a promptable package of our own: a fixed 2x2 mask
// (x 2..3, y 1..2 of an 8x6 image) for a positive click at (2, 1).
const fixedMaskPy = `
import json

def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return json.loads(body)

def predict_fn(req, model):
    p = req["points"][0]
    assert (p["x"], p["y"], p["label"]) == (2, 1, 1), p
    return {"masks": [{"size": [6, 8], "counts": [13, 2, 4, 2, 27]}], "scores": [0.9]}

def output_fn(pred, accept):
    return pred
`

type segmentAnswer struct {
	Masks []struct {
		Mask struct {
			Size   [2]int `json:"size"`
			Counts string `json:"counts"`
		} `json:"mask"`
		Score float64 `json:"score"`
	} `json:"masks"`
	Model string  `json:"model"`
	MS    float64 `json:"ms"`
}

// TestAssistSegmentUsesNamedModel: POST /assist/segment runs the
// segmentation package model_name names, and POST /assist/polygon turns its
// mask into the polygon the workspace draws.
func TestAssistSegmentUsesNamedModel(t *testing.T) {
	s := startAssistServer(t, "")
	if _, err := s.a.Analysis.Register(context.Background(), analysis.RegisterRequest{Name: "my-sam",
		Application: "segmentation", Package: packageTarGz(t, map[string]string{
			"code/inference.py": fixedMaskPy, "code/requirements.txt": ""})}); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	var pb bytes.Buffer
	png.Encode(&pb, img)
	f := s.add(t, "obj.png", pb.Bytes())

	var seg segmentAnswer
	status, raw := s.post(t, "/api/v1/assist/segment", map[string]any{"uniqueName": f.UniqueName, "model_name": "my-sam",
		"points": []map[string]any{{"x": 2, "y": 1, "label": 1}}}, &seg)
	if status != 200 || seg.Model != "my-sam" || len(seg.Masks) != 1 || seg.Masks[0].Mask.Size != [2]int{6, 8} ||
		seg.Masks[0].Score != 0.9 || seg.MS <= 0 {
		t.Fatalf("segment: %d %s", status, raw)
	}
	var poly struct {
		Polygon  [][]float64 `json:"polygon"`
		Vertices int         `json:"vertices"`
	}
	status, raw = s.post(t, "/api/v1/assist/polygon", map[string]any{"mask": seg.Masks[0].Mask, "tolerance": 0}, &poly)
	if status != 200 || poly.Vertices != 4 || len(poly.Polygon) != 1 ||
		!equalFloats(poly.Polygon[0], []float64{2, 1, 4, 1, 4, 3, 2, 3}) {
		t.Fatalf("polygon: %d %s", status, raw)
	}

	for _, tc := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{"/api/v1/assist/segment", map[string]any{"points": []map[string]any{{"x": 2, "y": 1, "label": 1}}}, "uniqueName"},
		{"/api/v1/assist/segment", map[string]any{"uniqueName": f.UniqueName, "model_name": "my-sam"}, "box"},
		{"/api/v1/assist/segment", map[string]any{"uniqueName": f.UniqueName, "box": []int{0, 0, 4, 4}}, "model_name"}, // no default installed
		{"/api/v1/assist/polygon", map[string]any{"mask": seg.Masks[0].Mask, "tolerance": -1}, "tolerance"},
		{"/api/v1/assist/polygon", map[string]any{"mask": map[string]any{"size": []int{6, 8}, "counts": "3"}}, "mask"},
		{"/api/v1/assist/polygon", map[string]any{}, "mask"},
	} {
		status, raw := s.post(t, tc.path, tc.body, nil)
		if status != 400 || !strings.Contains(raw, `"`+tc.field+`"`) {
			t.Errorf("%s %v: %d %s, want a 400 about %s", tc.path, tc.body, status, raw, tc.field)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkAssistSegment1080p times box-to-mask through the real route with
// the shipped default (GrabCut, `make models`) on darknet's dog.jpg scaled to
// 1920x1080, the dog's box as prompt: request to answer, warm worker. It
// reports the server's own ms (ms/server) beside the round trip (ns/op).
func BenchmarkAssistSegment1080p(b *testing.B) {
	root, _ := filepath.Abs("..")
	pkg := filepath.Join(root, "build", "models", "segmentation")
	if _, err := os.Stat(filepath.Join(pkg, "code", "inference.py")); err != nil {
		b.Fatalf("no default segmentation package: run make models (%v)", err)
	}
	dir := b.TempDir()
	if err := os.Symlink(pkg, filepath.Join(dir, "segmentation")); err != nil {
		b.Fatal(err)
	}
	s := startAssistServer(b, dir)
	f := s.add(b, "dog1080.jpg", scaledJPEG(b, "/usr/share/darknet/data/dog.jpg", 1920, 1080))
	// dog.jpg's dog (768x576: x 124..316, y 218..542), scaled.
	body := map[string]any{"uniqueName": f.UniqueName, "box": []float64{124 * 2.5, 218 * 1.875, 316 * 2.5, 542 * 1.875}}
	var seg segmentAnswer
	if status, raw := s.post(b, "/api/v1/assist/segment", body, &seg); status != 200 || seg.Model != "default-segmentation" {
		b.Fatalf("warm-up: %d %s", status, raw)
	}
	var server float64
	b.ResetTimer()
	for range b.N {
		if status, raw := s.post(b, "/api/v1/assist/segment", body, &seg); status != 200 {
			b.Fatalf("%d %s", status, raw)
		}
		server += seg.MS
	}
	b.ReportMetric(server/float64(b.N), "ms/server")
}

// scaledJPEG reads a JPEG and scales it to w x h (bilinear), JPEG quality 90.
func scaledJPEG(t testing.TB, path string, w, h int) []byte {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	src, err := jpeg.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	sb := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		fy := (float64(y)+0.5)*float64(sb.Dy())/float64(h) - 0.5
		for x := range w {
			fx := (float64(x)+0.5)*float64(sb.Dx())/float64(w) - 0.5
			dst.Set(x, y, bilinear(src, fx, fy))
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func bilinear(img image.Image, fx, fy float64) color.RGBA {
	b := img.Bounds()
	x0, y0 := max(0, min(b.Dx()-1, int(fx))), max(0, min(b.Dy()-1, int(fy)))
	x1, y1 := min(b.Dx()-1, x0+1), min(b.Dy()-1, y0+1)
	ax, ay := max(0, min(1, fx-float64(x0))), max(0, min(1, fy-float64(y0)))
	var out [3]float64
	for _, p := range [4]struct {
		x, y int
		w    float64
	}{{x0, y0, (1 - ax) * (1 - ay)}, {x1, y0, ax * (1 - ay)}, {x0, y1, (1 - ax) * ay}, {x1, y1, ax * ay}} {
		r, g, bl, _ := img.At(b.Min.X+p.x, b.Min.Y+p.y).RGBA()
		out[0] += p.w * float64(r>>8)
		out[1] += p.w * float64(g>>8)
		out[2] += p.w * float64(bl>>8)
	}
	return color.RGBA{uint8(out[0] + .5), uint8(out[1] + .5), uint8(out[2] + .5), 255}
}
