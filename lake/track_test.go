package lake_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// videoLake opens a lake holding one 160x120 video of 20 frames.
func videoLake(t *testing.T) (*lake.Lake, lake.File) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs ffmpeg")
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is required: apt-get install ffmpeg (make test installs it)")
	}
	l, dir := openLake(t)
	clip := filepath.Join(dir, "clip.mp4")
	if out, err := exec.Command(ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=2",
		"-pix_fmt", "yuv420p", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	up := lake.Upload{Name: "clip.mp4", Open: func() (io.ReadCloser, error) { return os.Open(clip) }}
	res, err := l.Add(context.Background(), lake.AddOptions{Collection: "clips"}, []lake.Upload{up})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	return l, res.Stored[0]
}

const tracksJSON = `[
 {"number": 1, "label": "car", "keyframes": [
   {"frame": 2, "x": 10, "y": 10, "width": 20, "height": 10, "attributes": {"parked": true}},
   {"frame": 6, "x": 30, "y": 10, "width": 40, "height": 10},
   {"frame": 12, "x": 30, "y": 50, "width": 40, "height": 10}],
  "outside": [8]},
 {"number": 2, "label": "person", "keyframes": [
   {"frame": 0, "type": "polygon", "polygon": [[0, 0, 10, 0, 10, 10, 0, 10]]},
   {"frame": 10, "type": "polygon", "polygon": [[20, 0, 30, 0, 30, 10, 20, 10]]}]}
]`

// trackedVideo is videoLake with tracksJSON's tracks set from operation.
func trackedVideo(t *testing.T, operation string) (*lake.Lake, lake.File, []lake.Track) {
	t.Helper()
	l, v := videoLake(t)
	var in []lake.Track
	if err := json.Unmarshal([]byte(tracksJSON), &in); err != nil {
		t.Fatal(err)
	}
	if err := l.SetTracks(context.Background(), v.UniqueName, lake.Human, operation, in); err != nil {
		t.Fatal(err)
	}
	return l, v, in
}

// TestTracksInterpolate: a track stores its keyframes only; a frame between
// two is interpolated when read, an outside span hides the object until the
// next keyframe, and the track ends at its last keyframe.
func TestTracksInterpolate(t *testing.T) {
	ctx := context.Background()
	l, v, _ := trackedVideo(t, "import:mot")
	got, err := l.Tracks(ctx, v.UniqueName, nil)
	if err != nil || len(got) != 2 || len(got[0].Keyframes) != 3 || got[0].FirstFrame != 2 || got[0].LastFrame != 12 ||
		got[1].Type != shape.Polygon {
		t.Fatalf("tracks read back: %+v %v", got, err)
	}
	at := func(frame int) map[int]lake.TrackShape {
		s, err := l.FrameTracks(ctx, v.UniqueName, frame, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[int]lake.TrackShape{}
		for _, x := range s {
			m[x.Number] = x
		}
		return m
	}
	cases := []struct {
		frame int
		want  map[int][4]float64 // number → x, y, w, h; absent: not in view
	}{
		{0, map[int][4]float64{2: {0, 0, 10, 10}}},
		{2, map[int][4]float64{1: {10, 10, 20, 10}, 2: {4, 0, 10, 10}}},
		{4, map[int][4]float64{1: {20, 10, 30, 10}, 2: {8, 0, 10, 10}}},  // halfway from frame 2 to 6
		{7, map[int][4]float64{1: {30, 10, 40, 10}, 2: {14, 0, 10, 10}}}, // past 6: moving to 12 (7 is 1/6 of the way)
		{8, map[int][4]float64{2: {16, 0, 10, 10}}},                      // outside from 8
		{11, map[int][4]float64{}},                                       // still outside; person ended at 10
		{12, map[int][4]float64{1: {30, 50, 40, 10}}},                    // the next keyframe brings it back
		{13, map[int][4]float64{}},                                       // after the last keyframe
	}
	cases[3].want[1] = [4]float64{30, 10 + 40.0/6, 40, 10}
	for _, c := range cases {
		got := at(c.frame)
		if len(got) != len(c.want) {
			t.Errorf("frame %d: %d shapes, want %d: %+v", c.frame, len(got), len(c.want), got)
			continue
		}
		for n, w := range c.want {
			s := got[n]
			if d := [4]float64{s.X, s.Y, s.W, s.H}; !near4(d, w) {
				t.Errorf("frame %d track %d: box %v, want %v", c.frame, n, d, w)
			}
		}
	}
	if s := at(4)[1]; !s.Interpolated || string(s.Attributes) != `{"parked":true}` {
		t.Errorf("an interpolated shape says so and keeps the earlier keyframe's attributes: %+v", s)
	}
	if s := at(5)[2]; s.Type != shape.Polygon || len(s.Polygon) != 1 || s.Polygon[0][0] != 10 {
		t.Errorf("the polygon halfway: %+v", s.Geometry)
	}
}

func near4(a, b [4]float64) bool {
	for i := range a {
		if d := a[i] - b[i]; d > 1e-6 || d < -1e-6 {
			return false
		}
	}
	return true
}

// TestTracksRefused: a bad track is a 400 naming what is wrong, and the
// video's tracks stay as they were.
func TestTracksRefused(t *testing.T) {
	ctx := context.Background()
	l, v, ok := trackedVideo(t, "import:mot")
	box := func(frame int) lake.Box { return lake.Box{Frame: frame, X: 1, Y: 1, W: 5, H: 5} }
	cases := []struct {
		tracks []lake.Track
		want   string
	}{
		{[]lake.Track{{Number: 1, Label: "a"}}, "tracks[0]: a track needs at least one keyframe"},
		{[]lake.Track{{Number: 1, Label: "a", Keyframes: []lake.Box{box(3), box(3)}}}, "tracks[0].keyframes[1]: frame 3 does not follow frame 3"},
		{[]lake.Track{{Number: 1, Label: "a", Keyframes: []lake.Box{box(25)}}}, "frame 25 is outside the video's frames 0..19"},
		{[]lake.Track{{Number: 1, Label: "a", Keyframes: []lake.Box{box(1)}}, {Number: 1, Label: "b", Keyframes: []lake.Box{box(1)}}},
			"tracks[1]: number 1 is tracks[0]'s too"},
		{[]lake.Track{{Number: 1, Label: "a", Keyframes: []lake.Box{box(1), box(5)}, Outside: []int{5}}}, "tracks[0].outside[0]: frame 5 is a keyframe"},
		{[]lake.Track{{Number: 1, Label: "a", Keyframes: []lake.Box{box(1), box(5)}, Outside: []int{9}}}, "frame 9 is not inside the track (frames 1..5)"},
		{[]lake.Track{{Number: 1, Label: "a", Keyframes: []lake.Box{box(1), {Frame: 2,
			Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{0, 0, 5, 0, 5, 5}}}}}}}, "a polygon in a track of boxs"},
		{[]lake.Track{{Number: 1, Label: "a", Keyframes: []lake.Box{{Frame: 1, X: 170, Y: 1, W: 50, H: 5}}}}, "tracks[0].keyframes[0]: box at (170,1) size 50x5 is outside the 160x120 image"},
	}
	for _, c := range cases {
		err := l.SetTracks(ctx, v.UniqueName, lake.Human, "import:mot", c.tracks)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if got, _ := l.Tracks(ctx, v.UniqueName, nil); len(got) != 2 {
		t.Errorf("a refused write changed the tracks: %d left", len(got))
	}
	_, img := lakeOf(t, 1)
	if err := l.SetTracks(ctx, img[0].UniqueName, lake.Human, "x", ok); err == nil {
		t.Error("tracks on a file of another lake (or an image) must be refused")
	}
}

// TestTrackEdits: one track is replaced or removed by its number, leaving
// the operation's others and other operations' tracks as they were.
func TestTrackEdits(t *testing.T) {
	ctx := context.Background()
	l, v, in := trackedVideo(t, "a")
	if err := l.SetTracks(ctx, v.UniqueName, lake.Machine, "b", in[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := l.SetTrack(ctx, v.UniqueName, lake.Human, "a", lake.Track{Number: 1, Label: "truck",
		Keyframes: []lake.Box{{Frame: 3, X: 1, Y: 1, W: 4, H: 4}}})
	if err != nil || got.ID == "" || got.FirstFrame != 3 {
		t.Fatalf("set track: %+v %v", got, err)
	}
	if _, err := l.SetTrack(ctx, v.UniqueName, lake.Human, "a", lake.Track{Number: 9, Label: "x"}); err == nil ||
		!strings.Contains(err.Error(), "tracks[0]: a track needs at least one keyframe") {
		t.Errorf("a bad track: %v", err)
	}
	if err := l.DeleteTrack(ctx, v.UniqueName, "a", 2); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteTrack(ctx, v.UniqueName, "a", 2); err == nil || !strings.Contains(err.Error(), `has no track 2 from "a"`) {
		t.Errorf("deleting twice: %v", err)
	}
	a, _ := l.Tracks(ctx, v.UniqueName, []string{"a"})
	b, _ := l.Tracks(ctx, v.UniqueName, []string{"b"})
	if len(a) != 1 || a[0].Label != "truck" || len(a[0].Keyframes) != 1 || len(b) != 1 || b[0].Label != "car" {
		t.Errorf("after the edits: a %+v, b %+v", a, b)
	}
}

// TestTracksQueried: track.count, track.label and track.length find videos
// by their tracks (a car spanning frames 2..12, a person 0..10).
func TestTracksQueried(t *testing.T) {
	ctx := context.Background()
	l, _, _ := trackedVideo(t, "a")
	for _, c := range []struct {
		query string
		want  int
	}{
		{"track.count = 2", 1},
		{"track.count >= 3", 0},
		{"track.count = 0", 0},
		{"track.label = person", 1},
		{"track.label = dog", 0},
		{"track.length = 11", 1}, // both span 11 frames
		{"track.length > 11", 0},
		{"NOT track.label = car", 0},
	} {
		n, err := l.Count(ctx, lake.Selection{ItemType: "video", Query: c.query})
		if err != nil || n != c.want {
			t.Errorf("%s: %d videos, %v; want %d", c.query, n, err, c.want)
		}
	}
}
