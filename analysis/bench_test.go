package analysis

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
)

// BenchmarkRunnerRoundTrip is the runner's overhead per image: a no-op
// model answering a 300x300 JPEG, Go to Python and back. It reports the
// median as well as the mean.
//
//	go test ./analysis/ -run '^$' -bench RunnerRoundTrip -benchtime 2000x
func BenchmarkRunnerRoundTrip(b *testing.B) {
	e := newEnv(b, Options{})
	m := e.register(b, "noop", AutoTagging, brokenPkg(b, noopCode))
	r, err := e.svc.pool.runner(m)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	img := testmedia.JPEG(300, 300, 1)
	req := Request{Body: img, ContentType: "image/jpeg"}
	if _, err := r.Invoke(ctx, req); err != nil { // start the worker outside the timing
		b.Fatal(err)
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		if _, err := r.Invoke(ctx, req); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t))
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}

// busyCode is a model whose predict_fn computes for 20 ms.
const busyCode = `
import time

def model_fn(model_dir):
    return 0.020

def input_fn(body, content_type):
    return body

def predict_fn(data, seconds):
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n

def output_fn(pred, accept):
    return b'{"boxes": [[10, 10, 50, 50]], "classes": [0], "scores": [0.9]}'
`

// baselineLoop calls the package's functions in a plain Python loop over the
// inputs a run sends (every file of dir, read beforehand) and prints seconds.
const baselineLoop = `
import importlib.util, os, sys, time
pkg, inputs = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("inference", os.path.join(pkg, "code", "inference.py"))
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
model = m.model_fn(pkg)
data = [open(os.path.join(inputs, f), "rb").read() for f in sorted(os.listdir(inputs))]
t = time.perf_counter()
for body in data:
    m.output_fn(m.predict_fn(m.input_fn(body, "image/jpeg"), model), "application/json")
print(time.perf_counter() - t)
`

// BenchmarkAutoTagRun1000 runs an auto-tag job over 1,000 640x480 images
// with a 20 ms model and compares its wall time with the same package's
// functions called in a plain Python loop on the same (already resized)
// inputs. Target: at most 1.2x.
//
//	go test ./analysis/ -run '^$' -bench AutoTagRun1000 -benchtime 1x
func BenchmarkAutoTagRun1000(b *testing.B) {
	const n = 1000
	e := newEnv(b, Options{})
	pkg := brokenPkg(b, busyCode)
	e.register(b, "busy", AutoTagging, pkg)
	ctx := context.Background()
	inputs := b.TempDir()
	var ups []lake.Upload
	for i := range n {
		img := testmedia.JPEG(640, 480, i)
		ups = append(ups, lake.Upload{Name: fmt.Sprintf("img-%04d.jpg", i),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }})
		small, _, _, err := vips.ThumbnailJPEG(img, 300, 300, jpegQuality)
		if err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(inputs, fmt.Sprintf("%04d.jpg", i)), small, 0o644)
	}
	if _, err := e.lake.Add(ctx, lake.AddOptions{Collection: "bench"}, ups); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		start := time.Now()
		run, err := e.svc.Start(ctx, RunRequest{Application: AutoTagging, Model: "busy", ContentType: "image"})
		if err != nil {
			b.Fatal(err)
		}
		j, err := e.jobs.Wait(ctx, run.JobID)
		if err != nil || j.Status != job.Completed {
			b.Fatalf("%+v %v", j, err)
		}
		runTook := time.Since(start)
		script := filepath.Join(b.TempDir(), "loop.py")
		os.WriteFile(script, []byte(baselineLoop), 0o644)
		out, err := exec.Command(e.svc.opt.Python, script, pkg, inputs).CombinedOutput()
		if err != nil {
			b.Fatalf("%v %s", err, out)
		}
		secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(runTook.Seconds(), "run-s")
		b.ReportMetric(secs, "python-loop-s")
		b.ReportMetric(runTook.Seconds()/secs, "x-python-loop")
	}
}
