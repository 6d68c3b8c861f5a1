package lake_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// BenchmarkAdd measures ingest of 640x480 JPEGs in batches of 64, the path
// `framelake import --data` takes (without reading from disk).
func BenchmarkAdd(b *testing.B) { benchAdd(b, 640, 480, false) }

// BenchmarkAddScored is BenchmarkAdd with quality scores at ingest, as the
// appliance runs it; the 1080p pair shows the cost on larger frames.
func BenchmarkAddScored(b *testing.B)      { benchAdd(b, 640, 480, true) }
func BenchmarkAdd1080p(b *testing.B)       { benchAdd(b, 1920, 1080, false) }
func BenchmarkAddScored1080p(b *testing.B) { benchAdd(b, 1920, 1080, true) }

func benchAdd(b *testing.B, w, h int, scored bool) {
	l, _ := openLake(b)
	if scored {
		l.ScoreAtIngest(curate.IngestScorer())
	}
	imgs := make([][]byte, 64)
	for i := range imgs {
		imgs[i] = testmedia.JPEG(w, h, i)
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		ups := make([]lake.Upload, 64)
		for i := range ups {
			// A comment segment holding n: distinct bytes, distinct blobs, intact pixels.
			img := append([]byte{0xFF, 0xD8, 0xFF, 0xFE, 0, 6, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)},
				imgs[n%len(imgs)][2:]...)
			ups[i] = mem(fmt.Sprintf("f%d.jpg", n), img)
			n++
		}
		if res, err := l.Add(context.Background(), lake.AddOptions{Collection: "bench"}, ups); err != nil || len(res.Stored) != len(ups) {
			b.Fatalf("stored %d of %d: %v %+v", len(res.Stored), len(ups), err, res.Rejected)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "files/s")
}
