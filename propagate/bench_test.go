package propagate

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// BenchmarkPropagate720p is issue 34's "propagation of one box on 720p: 25
// frames/s or more on 2 cores": 300 frames of a 1280x720 H.264 video where
// a textured object moves, decoded by ffmpeg and tracked (the job without
// its final write), beside ffmpeg decoding the same frames alone.
func BenchmarkPropagate720p(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	clip := filepath.Join(dir, "move720.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-filter_complex",
		"color=c=gray:s=1280x720:r=30:d=10[bg];testsrc2=s=160x120:r=30:d=10[fg];[bg][fg]overlay=x='100+t*60':y='200+t*20':shortest=1",
		"-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "veryfast", clip).CombinedOutput(); err != nil {
		b.Fatalf("ffmpeg: %v %s", err, out)
	}
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		b.Fatal(err)
	}
	l, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"), SigningKey: []byte("0123456789abcdef0123"), BaseURL: "http://x"})
	if err != nil {
		b.Fatal(err)
	}
	up := lake.Upload{Name: "move720.mp4", Open: func() (io.ReadCloser, error) { return os.Open(clip) }}
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{up})
	if err != nil || len(res.Stored) != 1 {
		b.Fatalf("%+v %v", res, err)
	}
	f := res.Stored[0]
	s := &Service{lake: l}
	r := Request{From: 0, Every: 10, MinScore: 0.3, MaxFrames: 299}
	start := lake.Box{X: 100, Y: 200, W: 160, H: 120}
	var track, decode time.Duration
	frames := 0
	for b.Loop() {
		t0 := time.Now()
		path, out, err := s.forward(ctx, func(int64) {}, f, start, r, 299)
		if err != nil || out.Reason == "low_score" {
			b.Fatalf("%+v %v", out, err)
		}
		t1 := time.Now()
		if err := l.GrayFrames(ctx, f, 0, 300, workWidth, func(int, []byte, int, int) bool { return true }); err != nil {
			b.Fatal(err)
		}
		track, decode, frames = track+t1.Sub(t0), decode+time.Since(t1), frames+len(path)
	}
	b.ReportMetric(float64(frames)/track.Seconds(), "frames/s")
	b.ReportMetric(float64(frames)/decode.Seconds(), "decode-only-frames/s")
}
