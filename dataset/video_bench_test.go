package dataset

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// benchVideoPath is issue 34's 10-minute 1080p video, made once under .bench.
func benchVideoPath(b *testing.B) string {
	path, err := testmedia.BenchVideo(filepath.Join("..", ".bench"))
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// benchTracks are 50 box tracks over the whole video, a keyframe every 30
// frames (601 each), each box walking across the frame.
func benchTracks(frames int) []lake.Track {
	tracks := make([]lake.Track, 50)
	for i := range tracks {
		t := lake.Track{Number: i + 1, Label: []string{"car", "person"}[i%2]}
		for f := 0; f < frames; f += 30 {
			x := float64((i*37 + f/30*13) % 1800)
			y := float64((i * 19) % 1000)
			t.Keyframes = append(t.Keyframes, lake.Box{Frame: f, X: x, Y: y, W: 80, H: 60})
		}
		tracks[i] = t
	}
	return tracks
}

// BenchmarkVideoBuild: a dataset build sampling every 10th frame of the
// 10-minute 1080p video with 50 tracks (1,800 frames, interpolated shapes
// on): frames/s and peak RSS (the build's process, VmHWM reset before each
// build, and ffmpeg's); beside it in the same run, ffmpeg decoding the same
// frames to nothing (the floor) and decoding them to JPEG (the build's own
// ffmpeg, without the store and the database).
//
//	go test ./dataset -run '^$' -bench VideoBuild -benchtime 1x
func BenchmarkVideoBuild(b *testing.B) {
	ctx := context.Background()
	src := benchVideoPath(b)
	dir := b.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "t.db"), sqlitedb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, m := range []struct {
		name string
		err  error
	}{{"lake", db.Migrate(ctx, "lake", lake.Migrations)}, {"job", db.Migrate(ctx, "job", job.Migrations())},
		{"dataset", db.Migrate(ctx, "dataset", Migrations)}} {
		if m.err != nil {
			b.Fatal(m.name, m.err)
		}
	}
	l, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"),
		SigningKey: []byte("0123456789abcdef0123456789abcdef"), BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{{Name: "video-10min-1080p.mp4",
		Open: func() (io.ReadCloser, error) { return os.Open(src) }}})
	if err != nil || len(res.Stored) != 1 {
		b.Fatalf("add: %+v %v", res, err)
	}
	v := res.Stored[0]
	if err := l.ImportTracks(ctx, v.UniqueName, lake.Human, "review:bench", benchTracks(v.FrameCount)); err != nil {
		b.Fatal(err)
	}
	jobs := job.New(db, job.Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	s := New(db, l, jobs, Options{})
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := jobs.Start(jctx); err != nil {
		b.Fatal(err)
	}
	defer jobs.Stop(ctx)
	const every = 10
	want := (v.FrameCount + every - 1) / every
	floor := func(out ...string) time.Duration {
		t0 := time.Now()
		args := append([]string{"-v", "error", "-i", src, "-vf", fmt.Sprintf("select='not(mod(n,%d))'", every),
			"-fps_mode", "passthrough"}, out...)
		if o, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg: %v %s", err, o)
		}
		return time.Since(t0)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		decode := floor("-f", "null", "-")
		toJPEG := floor("-f", "image2pipe", "-c:v", "mjpeg", "-q:v", strconv.Itoa(sampledJPEGQuality), "-y", "/dev/null")
		os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset the peak RSS
		b.StartTimer()
		t0 := time.Now()
		c, err := s.Create(ctx, NewDataset{Name: "bench", Source: Source{ItemType: "video"}, CreatedBy: "bench",
			Spec: Spec{Labels: []string{"car", "person"}, Split: Split{Train: 80, Test: 20},
				VideoFrames: &VideoFrames{Sample: SampleEvery, Every: every}}})
		if err != nil {
			b.Fatal(err)
		}
		j, err := jobs.Wait(ctx, c.JobID)
		if err != nil || j.Status != job.Completed {
			b.Fatalf("build: %+v %v", j, err)
		}
		took := time.Since(t0)
		b.StopTimer()
		ver, err := s.Version(ctx, c.VersionID)
		if err != nil || ver.Stats.VideoFrames != want {
			b.Fatalf("built %d frames, want %d: %v", ver.Stats.VideoFrames, want, err)
		}
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
		rate := float64(want) / took.Seconds()
		b.Logf("build: %d frames (%d shapes) in %s, %.1f frames/s, peak RSS %d MiB (ffmpeg %d MiB); "+
			"floor, ffmpeg decoding the same frames: %s (%.1f frames/s), decoding them to JPEG: %s (%.1f frames/s); load %s",
			want, ver.Stats.TotalBoxes, took.Round(time.Millisecond), rate, vmHWM()>>20, ru.Maxrss>>10,
			decode.Round(time.Millisecond), float64(want)/decode.Seconds(), toJPEG.Round(time.Millisecond),
			float64(want)/toJPEG.Seconds(), loadAvg())
		b.ReportMetric(rate, "frames/s")
		b.ReportMetric(float64(want)/decode.Seconds(), "floor-frames/s")
		b.ReportMetric(float64(vmHWM()>>20), "peakRSS-MiB")
		if _, err := s.DeleteVersion(ctx, c.VersionID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// vmHWM is the process's peak resident set since the last reset.
func vmHWM() int64 {
	st, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(st), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
