package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/testmedia"
)

// The labelled-import benchmarks: FRAMELAKE_BENCH_IMAGES (default 10,000;
// the figure is 100,000) generated 640x480 JPEGs with 10 boxes each,
// as COCO and as YOLO, imported with the real binary into a new data
// folder; they report images/s, the importer's peak RSS and the machine's
// load average over the run (the machine is shared).
// FRAMELAKE_BENCH_CPUPROFILE=DIR writes each run's CPU profile there. The
// JPEGs (different bytes each) are made once under .bench and hard-linked.

const boxesPerImage = 10

var benchImages = envInt("FRAMELAKE_BENCH_IMAGES", 10000)

// benchMedia makes (once) the JPEGs and links them into dir/sub.
func benchMedia(b *testing.B, dir, sub string) {
	media := benchDir(b, fmt.Sprintf("jpeg-640x480-%dk", benchImages/1000))
	if entries, _ := os.ReadDir(media); len(entries) != benchImages {
		os.RemoveAll(media)
		if err := writeBenchJPEGs(media, benchImages); err != nil {
			b.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, sub), 0o755)
	for i := range benchImages {
		name := fmt.Sprintf("img-%05d.jpg", i) // testmedia.WriteJPEGs' names
		if err := os.Link(filepath.Join(media, name), filepath.Join(dir, sub, name)); err != nil && !os.IsExist(err) {
			b.Fatal(err)
		}
	}
}

// writeBenchJPEGs writes n different 640x480 JPEGs named as
// testmedia.WriteJPEGs names them: the first 1,000 are its images, image i
// past them is image i mod 1,000 with a comment segment naming i after the
// start marker, so it decodes the same but is other bytes (another blob to
// hash, check and store). Encoding 100,000 images took hours on the shared
// machine; this takes as long as writing them.
func writeBenchJPEGs(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bases := make([][]byte, min(n, 1000))
	for i := range n {
		k := i % len(bases)
		if bases[k] == nil {
			bases[k] = testmedia.JPEG(640, 480, k)
		}
		img := bases[k]
		if i >= len(bases) {
			com := fmt.Appendf(nil, "framelake bench image %d", i)
			seg := append([]byte{0xff, 0xfe, byte((len(com) + 2) >> 8), byte(len(com) + 2)}, com...)
			img = slices.Concat(img[:2], seg, img[2:])
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("img-%05d.jpg", i)), img, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// benchBox is box j of image i: inside a 640x480 image, varied.
func benchBox(i, j int) (x, y, w, h float64) {
	return float64((i*7 + j*53) % 560), float64((i*11 + j*37) % 400), float64(20 + (i+j)%60), float64(30 + (i*j)%50)
}

func writeCOCOBench(b *testing.B, dir string) {
	benchMedia(b, dir, "images")
	f, err := os.Create(filepath.Join(dir, "annotations", "instances_train.json"))
	if os.IsNotExist(err) {
		os.MkdirAll(filepath.Join(dir, "annotations"), 0o755)
		f, err = os.Create(filepath.Join(dir, "annotations", "instances_train.json"))
	}
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"info": {"description": "bench"}, "images": [`)
	for i := range benchImages {
		if i > 0 {
			w.WriteString(",")
		}
		fmt.Fprintf(w, `{"id": %d, "file_name": "img-%05d.jpg", "width": 640, "height": 480}`, i+1, i)
	}
	w.WriteString(`], "annotations": [`)
	for i := range benchImages {
		for j := range boxesPerImage {
			if i+j > 0 {
				w.WriteString(",")
			}
			x, y, bw, bh := benchBox(i, j)
			// Category ids 1, 3, 5, ...: gaps, as COCO's own have.
			fmt.Fprintf(w, `{"id": %d, "image_id": %d, "category_id": %d, "bbox": [%g, %g, %g, %g], "area": %g, "iscrowd": 0, "segmentation": []}`,
				i*boxesPerImage+j+1, i+1, 1+2*(j%8), x, y, bw, bh, bw*bh)
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

func writeYOLOBench(b *testing.B, dir string) {
	benchMedia(b, dir, "images/train")
	os.MkdirAll(filepath.Join(dir, "labels", "train"), 0o755)
	os.WriteFile(filepath.Join(dir, "data.yaml"), []byte("train: images/train\nnames: [c0, c1, c2, c3, c4, c5, c6, c7]\n"), 0o644)
	for i := range benchImages {
		var s []byte
		for j := range boxesPerImage {
			x, y, w, h := benchBox(i, j)
			s = fmt.Appendf(s, "%d %.6f %.6f %.6f %.6f\n", j%8, (x+w/2)/640, (y+h/2)/480, w/640, h/480)
		}
		if err := os.WriteFile(filepath.Join(dir, "labels", "train", fmt.Sprintf("img-%05d.txt", i)), s, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLabelled(b *testing.B, name string, write func(*testing.B, string)) {
	dir := benchDir(b, fmt.Sprintf("%s-640x480-%dk", name, benchImages/1000))
	if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
		os.RemoveAll(dir)
		write(b, dir)
		os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644)
	}
	for b.Loop() {
		// Not b.TempDir: its cleanup of 100,000 blobs failed once with
		// "directory not empty" and took the run's figures with it.
		data := importTarget(b)
		args := []string{"import", dir, "--data", data, "--collection", "bench", "--json"}
		if prof := os.Getenv("FRAMELAKE_BENCH_CPUPROFILE"); prof != "" {
			args = append(args, "--cpuprofile", filepath.Join(prof, name+".pprof"))
		}
		cmd := exec.Command(bin, args...)
		load0 := loadAvg()
		start := time.Now()
		out, err := cmd.Output()
		secs := time.Since(start).Seconds()
		if err != nil {
			b.Fatalf("import: %v %s", err, out)
		}
		var sum struct {
			Stored int
			Labels struct{ Boxes int }
		}
		if json.Unmarshal(out, &sum); sum.Stored != benchImages || sum.Labels.Boxes != benchImages*boxesPerImage {
			b.Fatalf("stored %d of %d, %d boxes: %.500s", sum.Stored, benchImages, sum.Labels.Boxes, out)
		}
		reportImport(b, cmd, "images", benchImages, secs, load0)
	}
}

// reportImport reports an import of n units that took secs and started at
// load average load0: units per CPU second of the importer (user+sys; on a
// machine shared with other work it says what the wall clock cannot), per
// second, its peak RSS and the load over the run.
func reportImport(b *testing.B, cmd *exec.Cmd, unit string, n int, secs, load0 float64) {
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	b.ReportMetric(float64(n)/cpu, unit+"/cpu-s")
	b.ReportMetric(float64(n)/secs, unit+"/s")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB") // Maxrss is KiB on Linux
	b.ReportMetric((load0+loadAvg())/2, "load-avg")
}

// loadAvg is the machine's one-minute load average.
func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return f
}

// BenchmarkImportCOCO: one COCO JSON (annotations/instances_train.json)
// naming images/ with category ids 1, 3, ..., 15.
func BenchmarkImportCOCO(b *testing.B) { benchLabelled(b, "coco", writeCOCOBench) }

// BenchmarkImportYOLO: Ultralytics layout, data.yaml and labels/train.
func BenchmarkImportYOLO(b *testing.B) { benchLabelled(b, "yolo", writeYOLOBench) }
