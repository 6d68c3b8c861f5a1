package labelio_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/labelio"
)

// BenchmarkReadCOCO100k reads a COCO JSON of the size, 100,000
// images of 640x480 and 1,000,000 boxes (about 120 MB), with the images as
// empty files (reading never opens them), and reports images/s and the
// process's peak RSS: the JSON is streamed, so memory is the boxes held
// until their image is emitted, not the document.
func BenchmarkReadCOCO100k(b *testing.B) {
	const n, per = 100_000, 10
	dir, err := filepath.Abs(filepath.Join("..", ".bench", "coco-read-100k"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
		os.RemoveAll(dir)
		writeCOCO(b, dir, n, per)
		os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
	}
	runtime.GC()
	for b.Loop() {
		images, boxes := 0, 0
		start := time.Now()
		rep, err := labelio.Read(context.Background(), dir, labelio.Auto, func(it labelio.Item) error {
			images++
			boxes += len(it.Boxes)
			return nil
		})
		secs := time.Since(start).Seconds()
		if err != nil || rep.Format != labelio.COCO || images != n || boxes != n*per {
			b.Fatalf("read %v: %d images, %d boxes, %v", err, images, boxes, rep.Counts)
		}
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		b.ReportMetric(n/secs, "images/s")
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}

func writeCOCO(b *testing.B, dir string, n, per int) {
	os.MkdirAll(filepath.Join(dir, "images"), 0o755)
	f, err := os.Create(filepath.Join(dir, "instances_train.json"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"images": [`)
	for i := range n {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"id": %d, "file_name": "img-%06d.jpg", "width": 640, "height": 480}`, i+1, i)
		if err := os.WriteFile(filepath.Join(dir, "images", fmt.Sprintf("img-%06d.jpg", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	w.WriteString(`], "annotations": [`)
	for i := range n {
		for j := range per {
			if i+j > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, `{"id": %d, "image_id": %d, "category_id": %d, "bbox": [%d, %d, %d, %d], "area": 1, "iscrowd": 0, "segmentation": []}`,
				i*per+j+1, i+1, 1+2*(j%8), (i*7+j*53)%560, (i*11+j*37)%400, 20+(i+j)%60, 30+(i*j)%50)
		}
	}
	w.WriteString(`], "categories": [`)
	for c := range 8 {
		if c > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"id": %d, "name": "class-%d"}`, 1+2*c, c)
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}
