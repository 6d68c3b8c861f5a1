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
	importBoxTracks(t, l, res.Stored[0].UniqueName, in, back)
}

// importBoxTracks: the same tracks imported as box tracks (ImportBoxTracks,
// a MOT import's path; track 2 has a confidence, which box tracks do not
// carry, and is left out) store the same rows, read back alike; a refused
// set is refused with the same error as the general path, and writes nothing.
func importBoxTracks(t *testing.T, l *lake.Lake, video string, in, back []lake.Track) {
	ctx := context.Background()
	var boxes []lake.BoxTrack
	var want []lake.Track
	for i, tr := range in {
		if i == 1 {
			continue
		}
		bt := lake.BoxTrack{Number: tr.Number, Label: tr.Label, Outside: tr.Outside}
		for _, k := range tr.Keyframes {
			bt.Keys = append(bt.Keys, lake.BoxKey{Frame: k.Frame, X: k.X, Y: k.Y, W: k.W, H: k.H, Attributes: string(k.Attributes)})
		}
		boxes = append(boxes, bt)
		want = append(want, back[i])
	}
	bad := append([]lake.BoxTrack{}, boxes...)
	bad[2] = lake.BoxTrack{Number: bad[2].Number, Label: "car", Keys: []lake.BoxKey{{Frame: 3, X: 1, Y: 1, W: 5, H: 5},
		{Frame: 500, X: 1, Y: 1, W: 5, H: 5}}}
	general := []lake.Track{}
	for _, b := range bad {
		general = append(general, b.Track())
	}
	errBoxes := l.ImportBoxTracks(ctx, video, lake.Human, "import:boxes", bad)
	errTracks := l.ImportTracks(ctx, video, lake.Human, "import:general", general)
	if errBoxes == nil || errTracks == nil || errBoxes.Error() != errTracks.Error() {
		t.Fatalf("a keyframe past the video's end: box tracks %v, tracks %v: want the same error", errBoxes, errTracks)
	}
	if err := l.ImportBoxTracks(ctx, video, lake.Human, "import:boxes", boxes); err != nil {
		t.Fatal(err)
	}
	got, err := l.Tracks(ctx, video, []string{"import:boxes"})
	if err != nil || len(got) != len(want) {
		t.Fatalf("%d box tracks back of %d: %v", len(got), len(want), err)
	}
	for i := range got {
		g, w := got[i], want[i]
		g.ID, w.ID, g.Operation, w.Operation = "", "", "", ""
		for j := range g.Keyframes {
			g.Keyframes[j].Operation, w.Keyframes[j].Operation = "", ""
		}
		if gj, wj := fmt.Sprintf("%+v", g), fmt.Sprintf("%+v", w); gj != wj {
			t.Errorf("box track %d reads back\n%s\nwant, as imported as a track,\n%s", g.Number, gj, wj)
		}
	}
}
