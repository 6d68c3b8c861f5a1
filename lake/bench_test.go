package lake_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// BenchmarkAdd measures ingest of 640x480 JPEGs in batches of 64, the path
// `framelake import --data` takes (without reading from disk).
func BenchmarkAdd(b *testing.B) {
	l, _ := openLake(b)
	imgs := make([][]byte, 256)
	for i := range imgs {
		imgs[i] = testmedia.JPEG(640, 480, i)
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		ups := make([]lake.Upload, 64)
		for i := range ups {
			img := append([]byte(nil), imgs[n%len(imgs)]...)
			img[len(img)-3] = byte(n) // distinct bytes, distinct blobs
			ups[i] = mem(fmt.Sprintf("f%d.jpg", n), img)
			n++
		}
		if _, err := l.Add(context.Background(), lake.AddOptions{Collection: "bench"}, ups); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "files/s")
}
