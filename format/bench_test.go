package format_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/format"
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
		rep, err := format.Read(context.Background(), dir, format.Auto, func(it format.Item) error {
			images++
			boxes += len(it.Boxes)
			return nil
		})
		secs := time.Since(start).Seconds()
		if err != nil || rep.Format != format.COCO || images != n || boxes != n*per {
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

// BenchmarkReadCOCOSegm100k reads, in one run, the COCO JSON of
// BenchmarkReadCOCO100k (100,000 images, 1,000,000 boxes) and the same file
// with each box an instance-segmentation polygon of 20 to 40 vertices inside
// it (about 500 MB), and reports images/s and peak RSS of each: the peak is
// the process's VmHWM, reset before each read (/proc/self/clear_refs). COCO
// lists annotations after images, so a reader holds every annotation until
// the file ends; the polygons wait in a temporary file (polySpill).
func BenchmarkReadCOCOSegm100k(b *testing.B) {
	const n, per = 100_000, 10
	dirs := map[string]string{}
	for _, kind := range []string{"boxes", "polygons"} {
		name := map[string]string{"boxes": "coco-read-100k", "polygons": "coco-segm-100k"}[kind]
		dir, err := filepath.Abs(filepath.Join("..", ".bench", name))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
			os.RemoveAll(dir)
			if kind == "boxes" {
				writeCOCO(b, dir, n, per)
			} else {
				writeCOCOSegm(b, dir, n, per)
			}
			os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
		}
		dirs[kind] = dir
	}
	for b.Loop() {
		for _, kind := range []string{"boxes", "polygons"} {
			runtime.GC()
			os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // VmHWM := VmRSS
			images, boxes, vertices := 0, 0, 0
			start := time.Now()
			rep, err := format.Read(context.Background(), dirs[kind], format.Auto, func(it format.Item) error {
				images++
				boxes += len(it.Boxes)
				for _, bx := range it.Boxes {
					for _, r := range bx.Polygon {
						vertices += len(r) / 2
					}
				}
				return nil
			})
			secs := time.Since(start).Seconds()
			if err != nil || rep.Format != format.COCO || images != n || boxes != n*per || kind == "polygons" && vertices < 20*n*per {
				b.Fatalf("read %s %v: %d images, %d boxes, %d vertices, %v", kind, err, images, boxes, vertices, rep.Counts)
			}
			b.ReportMetric(n/secs, kind+"-images/s")
			b.ReportMetric(float64(vmHWM(b))/1024, kind+"-peak-RSS-MB")
		}
	}
}

// vmHWM is the process's peak resident set since the last reset, in KiB.
func vmHWM(b *testing.B) int {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(s), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			return kb
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// writeCOCOSegm writes writeCOCO's file with each box's segmentation a
// polygon of 20 to 40 vertices on an ellipse inside the box, radii varied,
// to two decimals as COCO's own are.
func writeCOCOSegm(b *testing.B, dir string, n, per int) {
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
	var buf []byte
	for i := range n {
		for j := range per {
			if i+j > 0 {
				w.WriteString(",")
			}
			x, y := float64((i*7+j*53)%560), float64((i*11+j*37)%400)
			bw, bh := float64(20+(i+j)%60), float64(30+(i*j)%50)
			buf = buf[:0]
			for v, nv := 0, 20+(i*3+j*7)%21; v < nv; v++ {
				a := 2 * math.Pi * float64(v) / float64(nv)
				r := 0.75 + 0.25*float64((i+v*13)%7)/6 // 0.75..1 of the half-axes
				if v > 0 {
					buf = append(buf, ',')
				}
				buf = strconv.AppendFloat(buf, math.Round((x+bw/2+r*bw/2*math.Cos(a))*100)/100, 'f', -1, 64)
				buf = append(buf, ',')
				buf = strconv.AppendFloat(buf, math.Round((y+bh/2+r*bh/2*math.Sin(a))*100)/100, 'f', -1, 64)
			}
			fmt.Fprintf(w, `{"id": %d, "image_id": %d, "category_id": %d, "bbox": [%g, %g, %g, %g], "area": %g, "iscrowd": 0, "segmentation": [[%s]]}`,
				i*per+j+1, i+1, 1+2*(j%8), x, y, bw, bh, math.Round(bw*bh*0.7), buf)
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
