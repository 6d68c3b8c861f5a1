package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/lake/benchlake"
	"github.com/framelake/framelake/vector"
)

// shotsDir is where a browser test keeps its screenshots.
func shotsDir(t testing.TB, name string) string {
	t.Helper()
	shots := os.Getenv("FRAMELAKE_UI_SHOTS")
	if shots == "" {
		// make test puts TMPDIR in a folder it removes at the end; the
		// screenshots are for looking at afterwards (FRAMELAKE_UI_SHOTS_ROOT).
		root := os.Getenv("FRAMELAKE_UI_SHOTS_ROOT")
		if root == "" {
			root = os.TempDir()
		}
		shots = filepath.Join(root, "framelake-"+name+"-shots-"+time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	return shots
}

// greyVideo writes a 160x120 H.264 video at 10 fps whose frame n is a flat
// grey of luma 12n, so a test can tell which frame is on screen.
func greyVideo(t *testing.T, path string, frames int) {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "lavfi",
		"-i", fmt.Sprintf("color=c=black:s=160x120:r=10:d=%g", float64(frames)/10),
		"-vf", "geq=lum='12*N':cb=128:cr=128", "-pix_fmt", "yuv420p", "-c:v", "libx264", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
}

// TestWebAppPages drives the embedding map, the video player and the models
// page of the real binary in Chromium (web/ui/test/pages.mjs): six labelled
// images embedded by the default embedding model are drawn on the map, a
// lasso narrows the grid to what it caught, a video steps frame by frame
// with the boxes of each frame, and /models shows the model and its run.
func TestWebAppPages(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t, "--models", builtModelsDir(t))
	ctx := context.Background()
	names := s.uploadLabelled(t, 320, 240, []string{
		`[{"label":"car","x":10,"y":10,"width":100,"height":80}]`,
		`[{"label":"car","x":20,"y":20,"width":100,"height":80}]`,
		`[{"label":"car","x":30,"y":30,"width":100,"height":80}]`,
		`[{"label":"person","x":40,"y":40,"width":60,"height":120}]`,
		`[{"label":"person","x":50,"y":50,"width":60,"height":120}]`,
		`[{"label":"person","x":60,"y":60,"width":60,"height":120}]`,
	})
	admin := client.New(s.base, s.admin["key"], s.admin["secret"])
	run, err := admin.GenerateEmbeddingsToLake(ctx, "image", client.AnalysisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := admin.WaitJob(ctx, run.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("embedding run: %+v %v", j, err)
	}

	checkProjectionRoute(t, s, names)

	video := filepath.Join(t.TempDir(), "grey.mp4")
	greyVideo(t, video, 20)
	s.upload(t, "grey.mp4", video)
	var vids struct{ Items []struct{ UniqueName string } }
	s.call(t, s.read, "GET", "/api/v1/lake/items?itemType=video", "", nil, &vids)
	if len(vids.Items) != 1 {
		t.Fatalf("videos: %+v", vids)
	}
	vid := vids.Items[0].UniqueName
	s.call(t, s.admin, "PUT", "/api/v1/lake/annotations", "application/json", strings.NewReader(fmt.Sprintf(
		`{"operation":"import:frames","files":[{"uniqueName":%q,"annotations":[
		{"frame":3,"label":"dog","x":10,"y":20,"width":40,"height":30},
		{"frame":4,"label":"cat","x":80,"y":50,"width":60,"height":50}]}]}`, vid)), nil)

	shots := shotsDir(t, "ui-pages")
	expect := map[string]any{"images": names, "video": vid, "fps": 10, "frames": 20,
		"boxes": map[string]any{"3": map[string]any{"label": "dog", "x": 10, "y": 20, "width": 40, "height": 30},
			"4": map[string]any{"label": "cat", "x": 80, "y": 50, "width": 60, "height": 50}},
		"run": run.RunID, "job": run.JobID}
	s.browserCheck(t, "pages.mjs", s.read, expect, shots)
}

// projectionPage is GET /api/v1/models/{name}/projection's answer.
type projectionPage struct {
	Projection struct {
		Status, JobID           string
		VectorCount, PointCount int
	}
	Points struct {
		Seq        []int64
		UniqueName []string
		X, Y       []float64
		Category   []int
	}
	Categories []string
	Next       *int64
}

// checkProjectionRoute reads the default model's map as a script would: the
// first call starts the projection job; once current, two pages of 4 and 2
// points, each coloured by the label of its boxes.
func checkProjectionRoute(t *testing.T, s *uiServer, names []string) {
	t.Helper()
	var p projectionPage
	deadline := time.Now().Add(2 * time.Minute)
	for p.Projection.Status != "current" {
		if time.Now().After(deadline) {
			t.Fatalf("the map is not current after 2 minutes: %+v", p.Projection)
		}
		s.call(t, s.read, "GET", "/api/v1/models/default/projection?limit=4&colorBy=label", "", nil, &p)
		if p.Projection.Status == "failed" || (p.Projection.Status != "current" && p.Projection.JobID == "") {
			t.Fatalf("projection: %+v", p.Projection)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(p.Points.Seq) != 4 || p.Next == nil || p.Projection.PointCount != len(names) {
		t.Fatalf("first page: %+v", p)
	}
	var rest projectionPage
	s.call(t, s.read, "GET", fmt.Sprintf("/api/v1/models/default/projection?limit=4&colorBy=label&after=%d", *p.Next), "", nil, &rest)
	if len(rest.Points.Seq) != 2 || rest.Next != nil {
		t.Fatalf("second page: %+v", rest)
	}
	label := map[string]string{}
	for _, page := range []projectionPage{p, rest} {
		for i, name := range page.Points.UniqueName {
			label[name] = page.Categories[page.Points.Category[i]]
			if x, y := page.Points.X[i], page.Points.Y[i]; x < -1 || x > 1 || y < -1 || y > 1 {
				t.Errorf("%s at (%g, %g), outside [-1, 1]²", name, x, y)
			}
		}
	}
	for i, name := range names {
		if want := map[bool]string{true: "car", false: "person"}[i < 3]; label[name] != want {
			t.Errorf("%s coloured %q, want %q", name, label[name], want)
		}
	}
}

// BenchmarkMapDraw100k measures the embedding map in headless Chromium at
// 100,000 points: a generated lake of 100,000 images with 512-d vectors of
// model "clip" in 50 clusters, its projection fitted first; then the time
// from opening /map to the points drawn (fetch, parse and WebGL draw), and
// the draw alone, plain and coloured by label (web/ui/test/mapbench.mjs). Run:
//
//	go test ./cmd/framelake -run '^$' -bench MapDraw100k -benchtime 1x -timeout 60m
func BenchmarkMapDraw100k(b *testing.B) {
	ctx := context.Background()
	const n, dim = 100_000, 512
	node, ui := needBrowser(b)
	dir := filepath.Join(b.TempDir(), "lake")
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: n, Boxes: n, Labels: 10, Collections: 10}); err != nil {
		b.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, JobWorkers: -1})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	centres := make([][]float32, 50)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	recs := make([]vector.Record, n)
	for i := range recs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = centres[i%50][j] + 0.5*float32(r.NormFloat64())
		}
		recs[i] = vector.Record{UniqueName: benchlake.UniqueName(i), Vector: v}
	}
	if _, err := a.Vectors.InsertMany(ctx, "clip", dim, recs); err != nil {
		b.Fatal(err)
	}
	recs = nil
	if err := a.Vectors.UpdateProjection(ctx, "clip", false); err != nil {
		b.Fatal(err)
	}
	a.Close()
	s := serveLake(b, dir)
	for range b.N {
		cmd := exec.Command(node, "test/mapbench.mjs")
		cmd.Dir = ui
		cmd.Env = append(os.Environ(), "BASE="+s.base, "KEY="+s.read["key"], "SECRET="+s.read["secret"],
			"MODEL=clip", fmt.Sprintf("POINTS=%d", n), "OUT="+shotsDir(b, "mapbench"))
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("map bench: %v\n%s", err, out)
		}
		var m map[string]float64
		if err := json.Unmarshal(out, &m); err != nil {
			b.Fatalf("map bench output %q: %v", out, err)
		}
		for k, v := range m {
			b.ReportMetric(v, k)
		}
	}
}

// serveLake serves an existing data folder and makes a read key for it.
func serveLake(tb testing.TB, data string) *uiServer {
	tb.Helper()
	addr := freeAddr(tb)
	srv := exec.Command(bin, "serve", "--data", data, "--addr", addr)
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	s := &uiServer{base: "http://" + addr, data: data}
	waitHealthy(tb, s.base)
	out, err := exec.Command(bin, "keys", "create", "--data", data, "--name", "bench", "--role", "read", "--json").Output()
	if err != nil || json.Unmarshal(out, &s.read) != nil {
		tb.Fatalf("keys create: %v %s", err, out)
	}
	return s
}
