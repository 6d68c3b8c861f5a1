package format

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkYOLOExport100k is the figure: a YOLO Darknet export with
// media of 100,000 frames (two boxes each, eight distinct 320x240 JPEGs
// reused through Open) written to /dev/null. Frames are made on demand, as
// the dataset package streams them. It reports frames/s, the archive size,
// the peak RSS of the process (VmHWM) and the Go heap.
//
//	go test ./format/ -run '^$' -bench YOLOExport100k -benchtime 1x
func BenchmarkYOLOExport100k(b *testing.B) {
	const frames = 100_000
	blobs := benchJPEGs(b, 8)
	out, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	ds := Dataset{Name: "bench", Version: "1.0", Labels: []string{"car", "person", "bike"}}
	runtime.GC()
	b.ResetTimer()
	var written int64
	start := time.Now()
	for range b.N {
		cw := &counter{w: out}
		if err := Write(context.Background(), cw, ExportYOLO, ds, benchFrames(frames, blobs), true); err != nil {
			b.Fatal(err)
		}
		written = cw.n
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(frames*b.N)/elapsed.Seconds(), "frames/s")
	b.ReportMetric(float64(written)/(1<<20), "archive-MB")
	b.ReportMetric(float64(vmHWM(b))/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(ms.HeapSys)/(1<<20), "HeapSys-MB")
	b.ReportMetric(0, "ns/op") // elapsed per 100k frames is in frames/s
	b.Logf("%d frames in %v, %.0f MB written, VmHWM %d kB, HeapSys %d kB, Sys %d kB", frames*b.N, elapsed, float64(written)/(1<<20), vmHWM(b)>>10, ms.HeapSys>>10, ms.Sys>>10)
}

func benchFrames(n int, blobs [][]byte) func() (Frame, error) {
	i := 0
	splitsBy := [10]string{"train", "train", "train", "train", "train", "train", "train", "validation", "validation", "test"}
	return func() (Frame, error) {
		if i == n {
			return Frame{}, io.EOF
		}
		blob := blobs[i%len(blobs)]
		fr := Frame{
			UniqueName: "bench-collection-frame-" + strconv.Itoa(i) + "-k3f9a", Name: "frame.jpg", Ext: "jpg",
			Split: splitsBy[i%10], Width: 320, Height: 240,
			Boxes: []ExportBox{{ClassID: i % 3, X: 10, Y: 20, W: 100, H: 80}, {ClassID: (i + 1) % 3, X: 150.5, Y: 60.25, W: 40, H: 90}},
			Open:  func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(blob)), nil },
		}
		i++
		return fr, nil
	}
}

func benchJPEGs(b *testing.B, n int) [][]byte {
	var out [][]byte
	for k := range n {
		img := image.NewRGBA(image.Rect(0, 0, 320, 240))
		for p := 0; p < len(img.Pix); p += 4 {
			img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(p*k), uint8(p/320), uint8(k*30), 255
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
			b.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	return out
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// vmHWM is the process's peak resident set in bytes, from /proc/self/status.
func vmHWM(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkExport writes 10,000 frames with media in every format, for
// comparison with the YOLO figure.
//
//	go test ./format/ -run '^$' -bench 'Export/' -benchtime 1x
func BenchmarkExport(b *testing.B) {
	const frames = 10_000
	blobs := benchJPEGs(b, 8)
	ds := Dataset{Name: "bench", Version: "1.0", Labels: []string{"car", "person", "bike"}}
	for _, f := range ExportTypes() {
		b.Run(f.slug(), func(b *testing.B) {
			start := time.Now()
			for range b.N {
				if err := Write(context.Background(), io.Discard, f, ds, benchFrames(frames, blobs), true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(frames*b.N)/time.Since(start).Seconds(), "frames/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
