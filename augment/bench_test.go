package augment

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// benchJPEG is a 1920x1080 photo-like JPEG: smooth gradients, shapes and
// grain, so the codec works about as hard as on a camera frame.
func benchJPEG(b *testing.B) []byte {
	const w, h = 1920, 1080
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/w, float64(y)/h
			r := 120 + 90*math.Sin(6*fx+2*fy)
			g := 110 + 80*math.Cos(4*fy-3*fx)
			bl := 100 + 70*math.Sin(9*fx*fy)
			if (x/160+y/120)%5 == 0 {
				r, g = g, r
			}
			n := rng.Float64()*24 - 12
			img.SetRGBA(x, y, color.RGBA{clamp8(r + n), clamp8(g + n), clamp8(bl + n), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func clamp8(v float64) uint8 { return uint8(max(0, min(255, math.Round(v)))) }

// benchChains are the two chains; bench_chains.py writes the same
// with Pillow and OpenCV.
var benchChains = []struct {
	name  string
	steps []Step
}{
	{"flip-blur-crop", []Step{
		{Type: FlipImage, Property: FlipHorizontal},
		{Type: ImageBlur, Property: Blur, Value: 2},
		{Type: Crop, Property: CropPercentage, Value: 20, X: 0.5, Y: 0.5},
	}},
	{"rotate-hue-noise", []Step{
		{Type: ImageRotation, Property: PercentageScale, Value: 17},
		{Type: Hue, Property: HueDegrees, Value: 30},
		{Type: Noise, Property: NoisePercentage, Value: 5, Seed: 7},
	}},
}

// BenchmarkChains measures decode + chain + encode of a 1920x1080 JPEG on one
// core for framelake, Pillow and OpenCV, and reports images/s for each plus
// framelake's ratio to the faster Python library, measured before and after
// framelake to cancel the machine's drift. All three use the system
// libjpeg-turbo, JPEG quality 90, 4:2:0. images/cpu-s counts the CPU time of
// every thread (libvips encodes in a write-behind thread even at concurrency
// 1, so its wall rate can borrow a second core); it is the fair single-core
// figure, and the steadier one on a shared machine. The Python variants need
// Debian's python3-pil and python3-opencv under /usr/bin/python3; without
// them the benchmark fails.
//
//	go test ./augment -bench Chains -run '^$' -count 3
func BenchmarkChains(b *testing.B) {
	data := benchJPEG(b)
	path := filepath.Join(b.TempDir(), "frame.jpg")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, ch := range benchChains {
		var before pyRate
		for _, lib := range pyLibs {
			b.Run(ch.name+"/"+lib, func(b *testing.B) {
				var r pyRate
				for b.Loop() {
					r = runPython(b, lib, ch.name, path)
				}
				before = before.best(r)
				b.ReportMetric(r.wall, "images/s")
				b.ReportMetric(r.cpu, "images/cpu-s")
			})
		}
		b.Run(ch.name+"/framelake", func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			ctx := b.Context()
			// One output buffer for all, as a pipeline that writes each
			// output away keeps one (Options.Buffer); the Python outputs
			// come from glibc, which reuses its freed memory as well.
			opt := Options{Buffer: make([]byte, 0, 4<<20)}
			for range 2 { // warm up, as bench_chains.py does
				if _, err := ApplySteps(ctx, data, nil, ch.steps, opt); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC() // the garbage of setting up is not the chain's
			cpu0 := cpuSeconds(b)
			for b.Loop() {
				if _, err := ApplySteps(ctx, data, nil, ch.steps, opt); err != nil {
					b.Fatal(err)
				}
			}
			rate := float64(b.N) / b.Elapsed().Seconds()
			cpuRate := float64(b.N) / (cpuSeconds(b) - cpu0)
			b.ReportMetric(rate, "images/s")
			b.ReportMetric(cpuRate, "images/cpu-s")
			if before.wall == 0 {
				return // the Python runs were filtered out
			}
			// The machine's speed drifts over seconds: the libraries run
			// again after framelake, and the ratio is to the mean of the
			// faster one's rates before and after.
			var after pyRate
			for _, lib := range pyLibs {
				after = after.best(runPython(b, lib, ch.name, path))
			}
			b.ReportMetric(2*rate/(before.wall+after.wall), "x_faster_python")
			b.ReportMetric(2*cpuRate/(before.cpu+after.cpu), "x_faster_python_cpu")
		})
	}
}

var pyLibs = []string{"pillow", "opencv"}

// cpuSeconds is the CPU time this process has used. On a shared machine
// wall-clock rates depend on the neighbours; images per CPU-second do not.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// pyRate is what bench_chains.py measured: images per wall-clock second and
// per CPU-second.
type pyRate struct{ wall, cpu float64 }

// best is the faster of r and o, rate by rate.
func (r pyRate) best(o pyRate) pyRate { return pyRate{max(r.wall, o.wall), max(r.cpu, o.cpu)} }

// runPython runs one chain in Pillow or OpenCV for about two seconds and
// returns the rates it measured itself (interpreter start excluded).
func runPython(b *testing.B, lib, chain, image string) pyRate {
	script, err := filepath.Abs(filepath.Join("testdata", "bench_chains.py"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.CommandContext(b.Context(), "/usr/bin/python3", script, lib, chain, image, strconv.Itoa(2))
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "OPENCV_FOR_THREADS_NUM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s %s: %v (python3-pil, python3-opencv and python3-numpy must be installed for /usr/bin/python3)\n%s",
			lib, chain, err, stderr.String())
	}
	var res struct {
		Rate    float64 `json:"images_per_second"`
		CPURate float64 `json:"images_per_cpu_second"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Rate <= 0 || res.CPURate <= 0 {
		b.Fatalf("%s %s: bad output %q: %v", lib, chain, out, err)
	}
	return pyRate{res.Rate, res.CPURate}
}

// BenchmarkParts breaks the chains down: decode + encode alone ("none") and
// with one step each, with the CPU time per image.
func BenchmarkParts(b *testing.B) {
	data := benchJPEG(b)
	parts := map[string][]Step{
		"none":   nil,
		"flip":   {{Type: FlipImage, Property: FlipHorizontal}},
		"blur":   {{Type: ImageBlur, Property: Blur, Value: 2}},
		"crop":   {{Type: Crop, Property: CropPercentage, Value: 20, X: 0.5, Y: 0.5}},
		"rotate": {{Type: ImageRotation, Property: PercentageScale, Value: 17}},
		"hue":    {{Type: Hue, Property: HueDegrees, Value: 30}},
		"noise":  {{Type: Noise, Property: NoisePercentage, Value: 5, Seed: 7}},
		"vflip":  {{Type: FlipImage, Property: FlipVertical}},
		"turn":   {{Type: NinetyRotation, Property: Clockwise}},
		"gray":   {{Type: Grayscale, Property: GrayscalePercentage, Value: 50}},
	}
	for _, name := range []string{"none", "flip", "vflip", "turn", "blur", "crop", "rotate", "hue", "gray", "noise"} {
		b.Run(name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			opt := Options{Buffer: make([]byte, 0, 4<<20)}
			c0 := cpuSeconds(b)
			for b.Loop() {
				if _, err := ApplySteps(b.Context(), data, nil, parts[name], opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds(b)-c0)*1000/float64(b.N), "cpu-ms/op")
		})
	}
}
