package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

type rect struct {
	c          color.RGBA
	x, y, w, h int
}

var (
	red   = color.RGBA{255, 0, 0, 255}
	green = color.RGBA{0, 200, 0, 255}
	blue  = color.RGBA{0, 0, 255, 255}
)

// rectPNG draws solid rectangles on white.
func rectPNG(w, h int, rs ...rect) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for _, r := range rs {
		for y := r.y; y < r.y+r.h; y++ {
			for x := r.x; x < r.x+r.w; x++ {
				img.Set(x, y, r.c)
			}
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func (e *testEnv) add(t testing.TB, collection, name string, b []byte) lake.File {
	t.Helper()
	res, err := e.lake.Add(context.Background(), lake.AddOptions{Collection: collection},
		[]lake.Upload{{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("add %s: %v %+v", name, err, res.Rejected)
	}
	return res.Stored[0]
}

func (e *testEnv) boxes(t testing.TB, f lake.File, op string) []lake.Box {
	bs, err := e.lake.Boxes(context.Background(), lake.BoxQuery{FileSeqs: []int64{f.Seq()}, Operations: []string{op}})
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func tagNames(tags []lake.Tag, op string) string {
	var out []string
	for _, tg := range tags {
		if tg.Operation == op {
			out = append(out, fmt.Sprintf("%s:%.2f", tg.Name, *tg.Confidence))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func near(a, b float64) bool { return math.Abs(a-b) <= 6 }

func checkBox(t *testing.T, b lake.Box, label string, x, y, w, h float64) {
	t.Helper()
	if b.Label != label || !near(b.X, x) || !near(b.Y, y) || !near(b.W, w) || !near(b.H, h) || b.Source != lake.Machine {
		t.Errorf("box %s (%.1f,%.1f %.1fx%.1f %s), want %s (%v,%v %vx%v)", b.Label, b.X, b.Y, b.W, b.H, b.Source, label, x, y, w, h)
	}
}

func TestAutoTagCollectionEndToEnd(t *testing.T) {
	e := newEnv(t, Options{})
	e.register(t, "rects", AutoTagging, rectPkg(t))
	f1 := e.add(t, "shapes", "a.png", rectPNG(640, 480, rect{red, 100, 50, 200, 150}, rect{blue, 400, 300, 100, 100}))
	f2 := e.add(t, "shapes", "b.png", rectPNG(320, 240, rect{green, 10, 20, 60, 40}))
	e.add(t, "other", "c.png", rectPNG(64, 64, rect{red, 0, 0, 32, 32}))
	coll, _ := e.lake.CollectionByName(context.Background(), "shapes")

	run, j := e.wait(t, RunRequest{Application: AutoTagging, Model: "rects", CollectionID: coll.ID})
	if j.Status != job.Completed {
		t.Fatalf("job %s: %s", j.Status, j.Error)
	}
	if c := run.Counts; c.Items != 2 || c.Frames != 2 || c.Boxes != 2 || c.Tags != 2 {
		t.Errorf("counts %+v", c)
	}
	contains(t, string(j.Result), run.ID, `"boxes":2`)
	// Blue scores 0.3, under the default threshold 0.5.
	bs := e.boxes(t, f1, run.ID)
	if len(bs) != 1 {
		t.Fatalf("boxes %+v", bs)
	}
	checkBox(t, bs[0], "red", 100, 50, 200, 150)
	if *bs[0].Confidence != 0.95 {
		t.Errorf("confidence %v", *bs[0].Confidence)
	}
	checkBox(t, e.boxes(t, f2, run.ID)[0], "green", 10, 20, 60, 40)
	tags, _ := e.lake.FileTags(context.Background(), f1.Seq())
	if got := tagNames(tags, run.ID); got != "red:0.95" {
		t.Errorf("tags of a.png: %s", got)
	}
	ctags, _ := e.lake.CollectionTags(context.Background(), coll.Seq())
	if got := tagNames(ctags, run.ID); got != "green:0.80 red:0.95" {
		t.Errorf("collection tags: %s", got)
	}

	// A lower threshold, a query and another resolution.
	thr := 0.1
	run2, j2 := e.wait(t, RunRequest{Application: AutoTagging, Model: "rects", ContentType: "image",
		ConfidenceThreshold: &thr, Query: `name = "a.png"`, InputResolution: []int{320, 200}})
	if j2.Status != job.Completed || run2.Counts.Items != 1 || run2.Counts.Boxes != 2 {
		t.Fatalf("lake run %s %s %+v", j2.Status, j2.Error, run2.Counts)
	}
	bs = e.boxes(t, f1, run2.ID)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Label < bs[j].Label })
	checkBox(t, bs[0], "blue", 400, 300, 100, 100)
	checkBox(t, bs[1], "red", 100, 50, 200, 150)

	runs, total, err := e.svc.Runs(context.Background(), RunListOptions{Model: "rects"})
	if err != nil || total != 2 || runs[0].ID != run2.ID || runs[0].Status != job.Completed || runs[0].Params.ConfidenceThreshold != 0.1 {
		t.Fatalf("runs %d %+v %v", total, runs, err)
	}
	// The query language sees machine boxes by their run.
	n, err := e.lake.Count(context.Background(), lake.Selection{Query: fmt.Sprintf(`annotation(operation = %s AND label = blue)`, run2.ID)})
	if err != nil || n != 1 {
		t.Errorf("query by run: %d %v", n, err)
	}
}

func TestEmbeddingsEndToEnd(t *testing.T) {
	e := newEnv(t, Options{})
	e.register(t, "hist", Embedding, histPkg(t))
	a := e.add(t, "col", "red.png", rectPNG(200, 200, rect{red, 0, 0, 200, 200}))
	e.add(t, "col", "red2.png", rectPNG(200, 200, rect{red, 0, 0, 200, 180}))
	e.add(t, "col", "blue.png", rectPNG(200, 200, rect{blue, 0, 0, 200, 200}))
	coll, _ := e.lake.CollectionByName(context.Background(), "col")
	run, j := e.wait(t, RunRequest{Application: Embedding, Model: "hist", CollectionID: coll.ID})
	if j.Status != job.Completed || run.Counts.Embeddings != 3 {
		t.Fatalf("%s %s %+v", j.Status, j.Error, run.Counts)
	}
	recs, missing, err := e.vectors.Get(context.Background(), "hist", []string{a.UniqueName})
	if err != nil || len(missing) > 0 || len(recs[0].Vector) != 12 {
		t.Fatalf("%+v %v %v", recs, missing, err)
	}
	if v := recs[0].Vector; v[3] < 0.9 || v[4] < 0.9 || v[8] < 0.9 { // red high, green low, blue low
		t.Errorf("histogram of red: %v", v)
	}
	hits, err := e.svc.vectors.Search(context.Background(), vectorQuery("hist", a.UniqueName))
	if err != nil || len(hits) == 0 || !strings.Contains(hits[0].UniqueName, "red2") {
		t.Errorf("nearest to red: %+v %v", hits, err)
	}
}

func TestAutoAnnotateEndToEnd(t *testing.T) {
	e := newEnv(t, Options{})
	e.register(t, "prompted", AutoAnnotation, promptPkg(t))
	f := e.add(t, "", "street.png", rectPNG(600, 400, rect{red, 300, 100, 90, 90}, rect{blue, 20, 200, 50, 100}))
	e.add(t, "", "field.png", rectPNG(100, 100, rect{green, 0, 0, 10, 10}))
	run, j := e.wait(t, RunRequest{Application: AutoAnnotation, Model: "prompted", ContentType: "image",
		Prompts: []Prompt{{Label: "sky", Description: "purple"}, {Label: "stop_sign", Description: "red"},
			{Label: "cloud", Description: "white"}, {Label: "door", Description: "blue"}}})
	if j.Status != job.Completed {
		t.Fatalf("%s %s", j.Status, j.Error)
	}
	// Both images reported the two prompts the model cannot look for: listed
	// once each, in prompt order, on the job result and the run.
	var res struct{ Unsupported []string }
	if err := json.Unmarshal(j.Result, &res); err != nil || !slices.Equal(res.Unsupported, []string{"sky", "cloud"}) {
		t.Errorf("job result %s (%v): want unsupported [sky cloud]", j.Result, err)
	}
	if !slices.Equal(run.Unsupported, []string{"sky", "cloud"}) || run.Counts.Frames != 2 {
		t.Errorf("run unsupported %v, %d frames; want [sky cloud] from 2 frames", run.Unsupported, run.Counts.Frames)
	}
	bs := e.boxes(t, f, run.ID)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Label < bs[j].Label })
	if len(bs) != 2 {
		t.Fatalf("boxes %+v", bs)
	}
	checkBox(t, bs[0], "door", 20, 200, 50, 100)
	checkBox(t, bs[1], "stop_sign", 300, 100, 90, 90)
}

func TestAutoTagVideoFrames(t *testing.T) {
	e := newEnv(t, Options{})
	e.register(t, "rects", AutoTagging, rectPkg(t))
	path := filepath.Join(t.TempDir(), "v.mp4")
	out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "color=c=white:s=320x240:r=10:d=3",
		"-vf", "drawbox=x=40:y=30:w=100:h=80:color=red:t=fill", "-pix_fmt", "yuv420p", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	b, _ := readFile(path)
	f := e.add(t, "", "v.mp4", b)
	run, j := e.wait(t, RunRequest{Application: AutoTagging, Model: "rects", ContentType: "video"})
	if j.Status != job.Completed {
		t.Fatalf("%s %s", j.Status, j.Error)
	}
	bs := e.boxes(t, f, run.ID)
	var frames []int
	for _, b := range bs {
		frames = append(frames, b.Frame)
		checkBox(t, b, "red", 40, 30, 100, 80)
	}
	if fmt.Sprint(frames) != "[0 10 20]" || run.Counts.Frames != 3 {
		t.Errorf("frames %v, counts %+v", frames, run.Counts)
	}
	tags, _ := e.lake.FileTags(context.Background(), f.Seq())
	if got := tagNames(tags, run.ID); got != "red:0.95" {
		t.Errorf("video tags %s", got)
	}
	// 2 frames per second: every 5th frame.
	run2, _ := e.wait(t, RunRequest{Application: AutoTagging, Model: "rects", ContentType: "video", VideoFPS: 2})
	if run2.Counts.Frames != 6 {
		t.Errorf("2 fps: %+v", run2.Counts)
	}
}

// TestBrokenPackages: each broken package fails its job with the cause and
// the last lines of the traceback, and the service keeps working.
func TestBrokenPackages(t *testing.T) {
	e := newEnv(t, Options{CallTimeout: 2 * time.Second})
	e.add(t, "", "x.png", rectPNG(50, 50, rect{red, 0, 0, 10, 10}))
	cases := []struct {
		name, code string
		want       []string
	}{
		{"missing-functions", "def model_fn(d):\n    return 1\ndef input_fn(b, c):\n    return b\n",
			[]string{"code/inference.py does not define predict_fn, output_fn"}},
		{"syntax-error", "def model_fn(d):\n    return (\n", []string{"loading code/inference.py failed", "SyntaxError", "inference.py"}},
		{"model-fn-raises", strings.Replace(noopCode, "return None\n\ndef input_fn", "raise RuntimeError('weights missing')\n\ndef input_fn", 1),
			[]string{"model_fn raised RuntimeError: weights missing", "in model_fn"}},
		{"predict-raises", strings.Replace(noopCode, "def predict_fn(data, model):\n    return None", "def predict_fn(data, model):\n    raise ValueError('bad tensor')", 1),
			[]string{"predict_fn raised ValueError: bad tensor", `line 9, in predict_fn`}},
		{"wrong-shape", strings.Replace(noopCode, `b'{"boxes": [], "classes": [], "scores": []}'`, `{"boxes": [[1, 2, 3]], "classes": [0], "scores": [0.9]}`, 1),
			[]string{"breaks the auto_tagging contract", "box 0 is [1 2 3]"}},
		{"bad-class", strings.Replace(noopCode, `b'{"boxes": [], "classes": [], "scores": []}'`, `{"boxes": [[1, 2, 3, 4]], "classes": [7], "scores": [0.9]}`, 1),
			[]string{"class 0 is 7, not an index into the 1 labels"}},
		{"hang", strings.Replace(noopCode, "return None\n\ndef output_fn", "import time; time.sleep(600)\n\ndef output_fn", 1),
			[]string{"no answer within 2s"}},
		{"killed", strings.Replace(noopCode, "return None\n\ndef output_fn", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n\ndef output_fn", 1),
			[]string{"the Python worker died (signal: killed)"}},
		{"exits-in-model-fn", "import sys\ndef model_fn(d):\n    sys.stderr.write('cuda not found\\n'); sys.stderr.flush()\n    import os; os._exit(4)\n" + "def input_fn" + strings.SplitN(noopCode, "def input_fn", 2)[1],
			[]string{"died while loading the model (exit status 4)", "cuda not found"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.register(t, c.name, AutoTagging, brokenPkg(t, c.code))
			_, j := e.wait(t, RunRequest{Application: AutoTagging, Model: c.name, ContentType: "image"})
			if j.Status != job.Failed {
				t.Fatalf("status %s", j.Status)
			}
			contains(t, j.Error, append([]string{"model " + c.name + ": "}, c.want...)...)
		})
	}
	e.register(t, "fine", AutoTagging, brokenPkg(t, noopCode))
	if _, j := e.wait(t, RunRequest{Application: AutoTagging, Model: "fine", ContentType: "image"}); j.Status != job.Completed {
		t.Fatalf("a good model after broken ones: %s %s", j.Status, j.Error)
	}
}

func TestRunParameterErrors(t *testing.T) {
	e := newEnv(t, Options{})
	e.register(t, "tagger", AutoTagging, brokenPkg(t, noopCode))
	ctx := context.Background()
	bad := -0.1
	over := 1.5
	cases := []struct {
		req   RunRequest
		field string
		msg   string
	}{
		{RunRequest{Application: AutoTagging, ContentType: "image"}, "model_name", "no default auto_tagging model is installed: run `make models`"},
		{RunRequest{Application: Embedding, Model: "default", ContentType: "image"}, "model_name", "no default embedding model is installed: run `make models`"},
		{RunRequest{Application: Embedding, Model: "tagger", ContentType: "image"}, "model_name", "tagger is an auto_tagging model"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image", ConfidenceThreshold: &bad}, "confidence_threshold", "between 0 and 1"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image", ConfidenceThreshold: &over}, "confidence_threshold", "between 0 and 1"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image", InputResolution: []int{300}}, "input_resolution", "(width, height)"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "audio"}, "content_type", "not image or video"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image", Platform: "gcp"}, "inference_platform", "not one of use_env, local, aws"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image", Platform: "aws"}, "inference_platform", "needs an endpoint"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image", Query: "colour = red"}, "query", "unknown field"},
		{RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image", Prompts: []Prompt{{Label: "x"}}}, "prompts", "auto_annotation models only"},
	}
	for _, c := range cases {
		_, err := e.svc.Start(ctx, c.req)
		var ee *errs.Error
		if !asErr(err, &ee) || ee.Code != errs.InvalidArgument || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: got %v, want %s", c.req, err, c.msg)
			continue
		}
		if ee.Field != c.field && !(c.field == "query" && ee.Field == "") {
			t.Errorf("%+v: field %q, want %q", c.req, ee.Field, c.field)
		}
	}
	if _, err := e.svc.Start(ctx, RunRequest{Application: AutoTagging, Model: "nope", ContentType: "image"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := e.svc.Start(ctx, RunRequest{Application: AutoTagging, Model: "tagger", CollectionID: "col_nope"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown collection: %v", err)
	}
	// use_env reads FRAMELAKE_INFERENCE_PLATFORM.
	t.Setenv("FRAMELAKE_INFERENCE_PLATFORM", "aws")
	if _, err := e.svc.Start(ctx, RunRequest{Application: AutoTagging, Model: "tagger", ContentType: "image"}); err == nil || !strings.Contains(err.Error(), "needs an endpoint") {
		t.Errorf("use_env aws: %v", err)
	}
	// Once a default exists, "default" picks it.
	if _, err := e.svc.UpdateModel(ctx, "tagger", ModelUpdate{SystemDefault: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FRAMELAKE_INFERENCE_PLATFORM", "local")
	run, err := e.svc.Start(ctx, RunRequest{Application: AutoTagging, Model: "default", ContentType: "image"})
	if err != nil || run.Model != "tagger" {
		t.Errorf("default: %+v %v", run, err)
	}
}

func ptr[T any](v T) *T { return &v }
