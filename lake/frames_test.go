package lake_test

import (
	"bytes"
	"context"
	"image/jpeg"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestVideoFrameIsExact: frame n of a video whose frame n has luma 8n is
// that frame, asked cold, stepped forward (from the run's cache) and
// backward, at full size and shrunk; a frame past the end is refused.
func TestVideoFrameIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs ffmpeg")
	}
	ctx := context.Background()
	l, dir := openLake(t)
	clip := filepath.Join(dir, "grey.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i",
		"color=black:s=64x48:r=10:d=3,geq=lum='N*8':cb=128:cr=128", "-c:v", "libx264", "-g", "12",
		"-pix_fmt", "yuv420p", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	up := lake.Upload{Name: "grey.mp4", Open: func() (io.ReadCloser, error) { return os.Open(clip) }}
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{up})
	if err != nil || len(res.Stored) != 1 || res.Stored[0].FrameCount != 30 {
		t.Fatalf("%+v %v", res, err)
	}
	v := res.Stored[0]
	for _, c := range []struct{ frame, size int }{{17, 0}, {18, 0}, {19, 0}, {16, 0}, {0, 0}, {29, 0}, {5, 32}, {11, 0}} {
		b, err := l.VideoFrame(ctx, v, c.frame, c.size)
		if err != nil {
			t.Fatalf("frame %d: %v", c.frame, err)
		}
		img, err := jpeg.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("frame %d: %v", c.frame, err)
		}
		bounds := img.Bounds()
		if want := 64; c.size > 0 {
			want = c.size
			if bounds.Dx() != want {
				t.Errorf("frame %d at size %d is %dx%d", c.frame, c.size, bounds.Dx(), bounds.Dy())
			}
		} else if bounds.Dx() != want || bounds.Dy() != 48 {
			t.Errorf("frame %d is %dx%d", c.frame, bounds.Dx(), bounds.Dy())
		}
		r, _, _, _ := img.At(bounds.Dx()/2, bounds.Dy()/2).RGBA()
		// Luma 8n in video's limited range is RGB (8n-16)·255/219.
		want := min(255, max(0, (8*c.frame-16)*255/219))
		if grey := int(r >> 8); grey < want-3 || grey > want+3 {
			t.Errorf("frame %d is grey %d, want %d: another frame was decoded", c.frame, grey, want)
		}
	}
	if _, err := l.VideoFrame(ctx, v, 30, 0); err == nil || !strings.Contains(err.Error(), "frame 30 is outside the video's frames 0..29") {
		t.Errorf("past the end: %v", err)
	}
}
