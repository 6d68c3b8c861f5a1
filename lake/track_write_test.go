package lake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestTrackKeyframeBatches: keyframes are written in batches of several
// tracks or of one (slim, track.go's keyframeWriter), prepared full-size or
// not; whichever way a keyframe goes, it reads back as written. Track 1 is
// 110 keyframes (a full slim batch, then 10 rows the next tracks join),
// track 2 has a confidence (not slim), track 3 is 40 keyframes written on
// their own, and 37 tracks of 2 keyframes fill shared batches past 100.
func TestTrackKeyframeBatches(t *testing.T) {
	ctx := context.Background()
	l, dir := openLake(t)
	clip := filepath.Join(dir, "long.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=12",
		"-pix_fmt", "yuv420p", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg (make test installs it): %v %s", err, out)
	}
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{{Name: "long.mp4",
		Open: func() (io.ReadCloser, error) { return os.Open(clip) }}})
	if err != nil || len(res.Stored) != 1 || res.Stored[0].FrameCount != 120 {
		t.Fatalf("%+v %v", res, err)
	}
	track := func(number, first, n int) lake.Track {
		tr := lake.Track{Number: number, Label: "car"}
		for f := first; f < first+n; f++ {
			b := lake.Box{Frame: f, X: float64(number) + float64(f)/4, Y: float64(f % 7), W: 10 + float64(number%5), H: 12}
			if f%3 == 0 {
				b.Attributes = json.RawMessage(fmt.Sprintf(`{"i":%d}`, f))
			}
			tr.Keyframes = append(tr.Keyframes, b)
		}
		return tr
	}
	in := []lake.Track{track(1, 0, 110), track(2, 5, 3), track(3, 50, 40)}
	c := 0.25
	in[1].Keyframes[1].Confidence = &c
	for n := 4; n <= 40; n++ {
		in = append(in, track(n, n, 2))
	}
	if err := l.ImportTracks(ctx, res.Stored[0].UniqueName, lake.Human, "import:batches", in); err != nil {
		t.Fatal(err)
	}
	back, err := l.Tracks(ctx, res.Stored[0].UniqueName, nil)
	if err != nil || len(back) != len(in) {
		t.Fatalf("%d tracks back of %d: %v", len(back), len(in), err)
	}
	for i, tr := range back {
		want := in[i]
		if tr.Number != want.Number || len(tr.Keyframes) != len(want.Keyframes) {
			t.Fatalf("track %d: number %d, %d keyframes; want %d, %d", i, tr.Number, len(tr.Keyframes), want.Number, len(want.Keyframes))
		}
		for j, k := range tr.Keyframes {
			w := want.Keyframes[j]
			attrs := string(w.Attributes)
			if attrs == "" {
				attrs = "{}"
			}
			if k.Frame != w.Frame || k.X != w.X || k.Y != w.Y || k.W != w.W || k.H != w.H || string(k.Attributes) != attrs ||
				(k.Confidence == nil) != (w.Confidence == nil) || (k.Confidence != nil && *k.Confidence != *w.Confidence) {
				t.Errorf("track %d keyframe %d: %+v, want %+v", tr.Number, j, k, w)
			}
		}
	}
}
