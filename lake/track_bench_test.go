package lake_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/format/trackio"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// benchVideo is issue 34's 10-minute 1080p video, made once under .bench.
func benchVideo(b *testing.B) string {
	path, err := testmedia.BenchVideo(filepath.Join("..", ".bench"))
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// motFile is a gt.txt of 50 objects on every one of 18,000 frames, each
// walking at random inside 1920x1080.
func motFile(frames, objects int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	for id := 1; id <= objects; id++ {
		x, y := 100+rng.Float64()*1600, 100+rng.Float64()*800
		for f := 1; f <= frames; f++ {
			x = min(1800, max(1, x+rng.Float64()*4-2))
			y = min(980, max(1, y+rng.Float64()*4-2))
			fmt.Fprintf(&buf, "%d,%d,%s,%s,60,100,1,1,0.85\n", f, id, two(x), two(y))
		}
	}
	return buf.Bytes()
}

// processCPU is the CPU time this process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// two is v to 2 decimals, written as MOT writers and WriteMOT write it.
func two(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// BenchmarkMOT is issue 34's "MOT import and export of 18,000 frames x 50
// objects: < 5 s each": import is reading the gt.txt and storing the
// tracks (ReadMOTBoxes and ImportBoxTracks, one transaction, as the lake's
// PUT of a gt.txt does), export reading them back and writing
// the gt.txt (interpolating nothing here: every frame is a keyframe).
func BenchmarkMOT(b *testing.B) {
	ctx := context.Background()
	clip := benchVideo(b)
	l, _ := openLake(b)
	up := lake.Upload{Name: "walk.mp4", Open: func() (io.ReadCloser, error) { return os.Open(clip) }}
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{up})
	if err != nil || len(res.Stored) != 1 || res.Stored[0].FrameCount != 18000 {
		b.Fatalf("%+v %v", res, err)
	}
	name := res.Stored[0].UniqueName
	gt := motFile(18000, 50)
	var imp, exp, impCPU, expCPU time.Duration
	var out bytes.Buffer
	out.Grow(len(gt)) // as a response stream would: the export, not a growing buffer, is measured
	for b.Loop() {
		c0 := processCPU()
		t0 := time.Now()
		tracks, err := trackio.ReadMOTBoxes(bytes.NewReader(gt), "object") // as PUT .../tracks?format=mot reads it
		if err != nil {
			b.Fatal(err)
		}
		if err := l.ImportBoxTracks(ctx, name, lake.Human, "import:mot", tracks); err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), processCPU()
		back, err := l.Tracks(ctx, name, nil)
		if err != nil {
			b.Fatal(err)
		}
		out.Reset()
		if err := trackio.WriteMOT(&out, back); err != nil {
			b.Fatal(err)
		}
		imp, exp = imp+t1.Sub(t0), exp+time.Since(t1)
		impCPU, expCPU = impCPU+c1-c0, expCPU+processCPU()-c1
	}
	if !bytes.Equal(out.Bytes(), gt) {
		b.Fatal("the gt.txt written back differs from the one read")
	}
	n := float64(b.N)
	b.ReportMetric(imp.Seconds()/n, "import-s")
	b.ReportMetric(exp.Seconds()/n, "export-s")
	b.ReportMetric(impCPU.Seconds()/n, "import-cpu-s") // the process's, garbage collection included: the figure under load
	b.ReportMetric(expCPU.Seconds()/n, "export-cpu-s")
	b.ReportMetric(float64(len(gt))/1e6, "gt-MB")
}

// BenchmarkVideoFrame is issue 34's stepping figures on the 10-minute 1080p
// video (keyframe every 60 frames): a frame far from the last one, cold
// (< 80 ms asked), the next frame asked at once (the run is still decoding
// it), the next frame once the run is done (prefetched: < 30 ms asked), and
// the floor beside them: ffmpeg seeking to the same frame and decoding it
// to nothing, in its own process, as the cold path does.
func BenchmarkVideoFrame(b *testing.B) {
	ctx := context.Background()
	clip := benchVideo(b)
	l, _ := openLake(b)
	up := lake.Upload{Name: "walk.mp4", Open: func() (io.ReadCloser, error) { return os.Open(clip) }}
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{up})
	if err != nil || len(res.Stored) != 1 {
		b.Fatalf("%+v %v", res, err)
	}
	v := res.Stored[0]
	rng := rand.New(rand.NewPCG(5, 6))
	var cold, next, cached, floor time.Duration
	for b.Loop() {
		n := 1 + rng.IntN(17990)
		t0 := time.Now()
		if _, err := l.VideoFrame(ctx, v, n, 0); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := l.VideoFrame(ctx, v, n+1, 0); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		time.Sleep(300 * time.Millisecond) // the person looks at the frame; the run finishes
		t3 := time.Now()
		if _, err := l.VideoFrame(ctx, v, n+2, 0); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		at := strconv.FormatFloat((float64(n)-0.5)/v.FrameRate, 'f', 6, 64)
		if out, err := exec.Command("ffmpeg", "-v", "error", "-ss", at, "-i", clip, "-frames:v", "1", "-f", "null", "-").CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg: %v %s", err, out)
		}
		cold, next, cached, floor = cold+t1.Sub(t0), next+t2.Sub(t1), cached+t4.Sub(t3), floor+time.Since(t4)
	}
	n := float64(b.N)
	b.ReportMetric(float64(cold.Milliseconds())/n, "cold-ms")
	b.ReportMetric(float64(next.Microseconds())/n/1000, "next-ms")
	b.ReportMetric(float64(cached.Microseconds())/n/1000, "prefetched-ms")
	b.ReportMetric(float64(floor.Milliseconds())/n, "floor-ms")
}
