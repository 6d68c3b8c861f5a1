package trackio

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A gt.txt as MOT17 writes it: id 1 leaves the view for frames 4-5 and
// comes back; id 2 is a car without visibility; lines out of order.
const gt = `1,1,101,51,20,40,1,1,0.9
2,1,103,51,20,40,1,1,0.8
3,1,105,52,20,40,1,1,1
6,1,111,55,22,40,0,1,0.25
1,2,11,21,30,15,1,3,-1
2,2,12.5,21,30,15,1,3,-1
`

func TestMOTRoundTrip(t *testing.T) {
	tracks, err := ReadMOT(strings.NewReader(gt), "object")
	if err != nil {
		t.Fatal(err)
	}
	if len(tracks) != 2 || tracks[0].Label != "pedestrian" || tracks[1].Label != "car" {
		t.Fatalf("tracks: %+v", tracks)
	}
	p := tracks[0]
	if len(p.Keyframes) != 4 || p.Keyframes[0].Frame != 0 || p.Keyframes[0].X != 100 || p.Keyframes[0].Y != 50 ||
		len(p.Outside) != 1 || p.Outside[0] != 3 || p.FirstFrame != 0 || p.LastFrame != 5 {
		t.Fatalf("id 1: frames from 0, pixels from 0, outside from lake frame 3 (MOT 4): %+v", p)
	}
	var out bytes.Buffer
	if err := WriteMOT(&out, tracks); err != nil {
		t.Fatal(err)
	}
	if out.String() != gt {
		t.Errorf("written back:\n%s\nwant:\n%s", out.String(), gt)
	}
}

// Interpolated frames are written: keyframes at MOT frames 1 and 5 give
// five lines.
func TestMOTWritesInterpolatedFrames(t *testing.T) {
	tracks, err := ReadMOT(strings.NewReader("1,7,1,1,10,10,1,1,1\n5,7,9,1,10,10,1,1,1\n"), "object")
	if err != nil {
		t.Fatal(err)
	}
	tracks[0].Outside = nil // as the lake stores two keyframes four frames apart
	var out bytes.Buffer
	if err := WriteMOT(&out, tracks); err != nil {
		t.Fatal(err)
	}
	want := "1,7,1,1,10,10,1,1,1\n2,7,3,1,10,10,1,1,1\n3,7,5,1,10,10,1,1,1\n4,7,7,1,10,10,1,1,1\n5,7,9,1,10,10,1,1,1\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestMOTBadLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1,1,1,1,10,10\n", "line 1: 6 values"},
		{"1,1,1,1,10,10,1\n0,1,1,1,10,10,1\n", "line 2: frame 0: MOT frames are whole numbers from 1"},
		{"1,1,1,1,10,x,1\n", `line 1: value 6 ("x") is not a finite number`},
		{"1,1,1,1,10,NaN,1\n", "line 1: value 6"},
		{"1,1,1,1,0,10,1\n", "line 1: box 0x10"},
		{"1,1,1,1,10,10,1,1\n1,1,1,1,10,10,1,1\n", "id 1 is on frame 1 twice"},
		{"1,1,1,1,10,10,1,1\n2,1,1,1,10,10,1,3\n", "id 1 is a pedestrian on frame 1 and a car on frame 2"},
		{strings.Repeat("1", MaxLineBytes+1) + "\n", "line 1: longer than"},
	} {
		_, err := ReadMOT(strings.NewReader(c.in), "object")
		var le *LineError
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q: got %v, want %q", c.in, err, c.want)
		} else if strings.HasPrefix(c.want, "line") && !errors.As(err, &le) {
			t.Errorf("%.60q: a line's problem is a LineError", c.in)
		}
	}
}

func TestMOTAttrsFastAndSlowPaths(t *testing.T) {
	for _, c := range []struct {
		raw       string
		conf, vis float64
	}{
		{`{"mot_conf":0.5,"visibility":0.25}`, 0.5, 0.25},
		{`{"mot_conf":1}`, 1, -1},
		{`{"visibility":0.3,"mot_conf":0}`, 0, 0.3}, // another order: the decoder reads it
		{`{"mot_conf":2,"visibility":0.5,"note":"x"}`, 2, 0.5},
		{`{}`, 1, -1},
	} {
		if conf, vis := motAttrs([]byte(c.raw)); conf != c.conf || vis != c.vis {
			t.Errorf("%s: %v %v, want %v %v", c.raw, conf, vis, c.conf, c.vis)
		}
	}
}
