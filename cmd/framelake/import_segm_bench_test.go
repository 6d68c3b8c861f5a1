package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkImportCOCOSegm imports, in one run, BenchmarkImportCOCO's
// labelled folder (FRAMELAKE_BENCH_IMAGES 640x480 JPEGs, 10 boxes each) and
// the same JPEGs with each box a COCO instance-segmentation polygon of 20 to
// 40 vertices inside it, each with the real binary into a new data folder,
// boxes first; it reports images/s, images per importer CPU-second and peak
// RSS of both (issue 32: the polygons' at least the boxes' images/s, peak
// RSS < 500 MB at 100,000 images and 1,000,000 polygons). On two busy
// cores whatever the polygons add shows in the wall time, so it reports the
// floor beside them: the box import plus the polygons' least work
// (segmFloor), as images/s and the polygons' share of it.
// FRAMELAKE_BENCH_CPUPROFILE=DIR writes each import's CPU profile there.
// With -count N the runs alternate which kind goes first: a first import
// right after another run's folders were removed pays for the file
// system's freed inodes (see importTarget), up to 13 CPU-s at 100,000
// images, which would otherwise fall on the boxes every time.
func BenchmarkImportCOCOSegm(b *testing.B) {
	dirs := map[string]string{}
	for _, kind := range []string{"boxes", "polygons"} {
		name := map[string]string{"boxes": "coco", "polygons": "cocosegm"}[kind]
		dir := benchDir(b, fmt.Sprintf("%s-640x480-%dk", name, benchImages/1000))
		if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
			os.RemoveAll(dir)
			if kind == "boxes" {
				writeCOCOBench(b, dir)
			} else {
				writeCOCOSegmBench(b, dir)
			}
			os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
		}
		dirs[kind] = dir
	}
	kinds := []string{"boxes", "polygons"}
	if segmRuns++; segmRuns%2 == 0 {
		kinds = []string{"polygons", "boxes"}
	}
	secs, cpu := map[string]float64{}, map[string]float64{}
	for b.Loop() {
		for _, kind := range kinds {
			args := []string{"import", dirs[kind], "--data", importTarget(b), "--collection", "bench", "--json"}
			if prof := os.Getenv("FRAMELAKE_BENCH_CPUPROFILE"); prof != "" {
				args = append(args, "--cpuprofile", filepath.Join(prof, "segm-"+kind+".pprof"))
			}
			cmd := exec.Command(bin, args...)
			load0 := loadAvg()
			start := time.Now()
			out, err := cmd.Output()
			secs[kind] = time.Since(start).Seconds()
			var sum struct {
				Stored int
				Labels struct{ Boxes int }
			}
			if json.Unmarshal(out, &sum); err != nil || sum.Stored != benchImages || sum.Labels.Boxes != benchImages*boxesPerImage {
				b.Fatalf("import %s: %v, stored %d of %d, %d shapes: %.500s", kind, err, sum.Stored, benchImages, sum.Labels.Boxes, out)
			}
			// reportImport's figures, each named by its kind.
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpu[kind] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
			b.ReportMetric(float64(benchImages)/cpu[kind], kind+"-images/cpu-s")
			b.ReportMetric(float64(benchImages)/secs[kind], kind+"-images/s")
			b.ReportMetric(float64(ru.Maxrss)/1024, kind+"-peak-RSS-MB")
			b.ReportMetric((load0+loadAvg())/2, kind+"-load-avg")
		}
	}
	// The floor: the box import plus the polygons' least work, spread over
	// the cores the box import kept busy.
	b.StopTimer()
	f := measureSegmFloor(b, dirs["boxes"], dirs["polygons"])
	floor := secs["boxes"] + (f.read+f.store)/(cpu["boxes"]/secs["boxes"])
	b.ReportMetric(f.read, "floor-read-cpu-s")
	b.ReportMetric(f.store, "floor-store-cpu-s")
	b.ReportMetric(float64(benchImages)/floor, "floor-images/s")
	b.ReportMetric(floor/secs["polygons"], "polygons-of-floor")
}

// segmRuns counts BenchmarkImportCOCOSegm's runs in this process.
var segmRuns int

// writeCOCOSegmBench writes writeCOCOBench's folder with each box's
// segmentation a polygon of 20 to 40 vertices on an ellipse inside it, radii
// varied, to two decimals as COCO's own are.
func writeCOCOSegmBench(b *testing.B, dir string) {
	benchMedia(b, dir, "images")
	os.MkdirAll(filepath.Join(dir, "annotations"), 0o755)
	f, err := os.Create(filepath.Join(dir, "annotations", "instances_train.json"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"info": {"description": "bench"}, "images": [`)
	for i := range benchImages {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"id": %d, "file_name": "img-%05d.jpg", "width": 640, "height": 480}`, i+1, i)
	}
	w.WriteString(`], "annotations": [`)
	var poly []byte
	for i := range benchImages {
		for j := range boxesPerImage {
			if i+j > 0 {
				w.WriteString(",")
			}
			x, y, bw, bh := benchBox(i, j)
			poly = poly[:0]
			for v, nv := 0, 20+(i*3+j*7)%21; v < nv; v++ {
				a := 2 * math.Pi * float64(v) / float64(nv)
				r := 0.75 + 0.25*float64((i+v*13)%7)/6 // 0.75..1 of the half-axes
				if v > 0 {
					poly = append(poly, ',')
				}
				poly = strconv.AppendFloat(poly, math.Round((x+bw/2+r*bw/2*math.Cos(a))*100)/100, 'f', -1, 64)
				poly = append(poly, ',')
				poly = strconv.AppendFloat(poly, math.Round((y+bh/2+r*bh/2*math.Sin(a))*100)/100, 'f', -1, 64)
			}
			fmt.Fprintf(w, `{"id": %d, "image_id": %d, "category_id": %d, "bbox": [%g, %g, %g, %g], "area": %g, "iscrowd": 0, "segmentation": [[%s]]}`,
				i*boxesPerImage+j+1, i+1, 1+2*(j%8), x, y, bw, bh, math.Round(bw*bh*0.7), poly)
		}
	}
	w.WriteString(`], "categories": [`)
	for c := range 8 {
		if c > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"id": %d, "name": "class-%d", "supercategory": "thing"}`, 1+2*c, c)
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}
