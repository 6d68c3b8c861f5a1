package trackio

import (
	"strings"
	"testing"
)

// A Label Studio export of a video task (LS stores uploads as
// <hash>-<name>): one car, hidden after its keyframe at frame 10 until
// frame 20, and a result of another type that is not a track.
const lsExport = `[{"id": 1, "data": {"video": "/data/upload/1/4f2a9b-walk.mp4"}, "annotations": [{"result": [
 {"id": "a1", "type": "videorectangle", "from_name": "box", "to_name": "video", "value": {"framesCount": 40, "labels": ["Car"],
  "sequence": [
   {"frame": 1, "enabled": true, "x": 10, "y": 20, "width": 25, "height": 10, "time": 0},
   {"frame": 10, "enabled": false, "x": 20, "y": 20, "width": 25, "height": 10, "time": 0.3},
   {"frame": 20, "enabled": true, "x": 50, "y": 20, "width": 25, "height": 10, "time": 0.6},
   {"frame": 25, "enabled": false, "x": 60, "y": 20, "width": 25, "height": 10, "time": 0.8}]}},
 {"id": "c1", "type": "choices", "value": {"choices": ["day"]}}]}]},
 {"id": 2, "data": {"video": "/data/upload/1/other.mp4"}, "annotations": []}]`

func TestLabelStudioVideo(t *testing.T) {
	tracks, err := ReadLabelStudioVideo(strings.NewReader(lsExport), "walk.mp4", 200, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(tracks) != 1 {
		t.Fatalf("%d tracks", len(tracks))
	}
	c := tracks[0]
	if c.Label != "Car" || len(c.Keyframes) != 4 || c.FirstFrame != 0 || c.LastFrame != 24 || len(c.Outside) != 1 || c.Outside[0] != 10 {
		t.Fatalf("track: %+v", c)
	}
	if k := c.Keyframes[1]; k.Frame != 9 || k.X != 40 || k.Y != 20 || k.W != 50 || k.H != 10 {
		t.Errorf("keyframe at LS frame 10: %+v", k)
	}
	if _, ok := c.At(15); ok {
		t.Error("the car is hidden between LS frames 11 and 19")
	}
	if s, ok := c.At(4); !ok || !s.Interpolated {
		t.Errorf("frame 4 is interpolated: %+v %v", s, ok)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"not": "a list"}`, "not a Label Studio JSON export"},
		{lsExport, `none of the 2 tasks is of a video named "x.mp4"`},
		{strings.Replace(lsExport, `"frame": 10,`, `"frame": 0,`, 1), `result "a1": frame 0: frames count from 1, in order`},
	} {
		name := "walk.mp4"
		if strings.Contains(bad.want, "x.mp4") {
			name = "x.mp4"
		}
		if _, err := ReadLabelStudioVideo(strings.NewReader(bad.in), name, 200, 100); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("got %v, want %q", err, bad.want)
		}
	}
}
