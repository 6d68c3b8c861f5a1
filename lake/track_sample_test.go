package lake_test

import (
	"bytes"
	"context"
	"image/jpeg"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestSampleFramesExact: SampleFrames hands each listed frame of a video
// whose frame n has luma 8n, in order: a list with runs of consecutive
// frames (one select term each), an evenly spaced one (one run) and a single
// frame; an unordered list is refused.
func TestSampleFramesExact(t *testing.T) {
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
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	v := res.Stored[0]
	for _, frames := range [][]int{{3, 4, 5, 9, 17, 18, 29}, {1, 8, 15, 22, 29}, {13}} {
		var got []int
		err := l.SampleFrames(ctx, v, frames, 2, func(n int, b []byte) error {
			got = append(got, n)
			img, err := jpeg.Decode(bytes.NewReader(b))
			if err != nil {
				return err
			}
			r, _, _, _ := img.At(32, 24).RGBA()
			want := min(255, max(0, (8*n-16)*255/219))
			if grey := int(r >> 8); grey < want-3 || grey > want+3 {
				t.Errorf("%v: frame %d is grey %d, want %d: another frame was decoded", frames, n, grey, want)
			}
			return nil
		})
		if err != nil || !reflect.DeepEqual(got, frames) {
			t.Errorf("%v: handed %v, %v", frames, got, err)
		}
	}
	if err := l.SampleFrames(ctx, v, []int{5, 3}, 2, func(int, []byte) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), "in order") {
		t.Errorf("unordered: %v", err)
	}
}
