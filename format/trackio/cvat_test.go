package trackio

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

func track(number int, label string, outside []int, keys ...lake.Box) lake.Track {
	t := lake.Track{Number: number, Label: label, Keyframes: keys, Outside: outside}
	for i := range t.Keyframes {
		t.Keyframes[i].Label = label
	}
	t.FirstFrame, t.LastFrame = keys[0].Frame, keys[len(keys)-1].Frame
	return t
}

// Every trackable shape goes out as CVAT writes it and comes back as it
// was: keyframes, outside spans, attributes (as CVAT's text), occlusion.
func TestCVATRoundTrip(t *testing.T) {
	mask := shape.Rings([][]float64{{2, 2, 8, 2, 8, 6, 2, 6}, {4, 3, 6, 3, 6, 5, 4, 5}}, 20, 30)
	in := []lake.Track{
		track(3, "car", []int{4},
			lake.Box{Frame: 1, X: 10, Y: 20, W: 30, H: 10, Attributes: json.RawMessage(`{"color":"red","occluded":true}`)},
			lake.Box{Frame: 3, X: 14, Y: 20, W: 30, H: 10, Attributes: json.RawMessage(`{"color":"blue"}`)},
			lake.Box{Frame: 6, X: 20, Y: 20, W: 30, H: 10}),
		track(4, "person", []int{},
			lake.Box{Frame: 0, Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{1, 1, 5, 1, 5.5, 4}}}},
			lake.Box{Frame: 2, Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{2, 1, 6, 1, 6.5, 4}}}}),
		track(5, "pose", []int{},
			lake.Box{Frame: 2, Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{
				{Name: "nose", X: 3, Y: 4, V: 2}, {Name: "tail", X: 7, Y: 8, V: 1}, {Name: "ear", V: 0}}}}),
		track(6, "road", []int{},
			lake.Box{Frame: 0, Geometry: shape.Geometry{Type: shape.Polyline, Points: []float64{0, 0, 10, 10, 20, 5}}}),
		track(7, "ring", []int{},
			lake.Box{Frame: 5, Geometry: shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{20, 30}, Counts: mask.String()}}}),
	}
	var out bytes.Buffer
	if err := WriteCVAT(&out, in, VideoInfo{Frames: 10, Width: 30, Height: 20}); err != nil {
		t.Fatal(err)
	}
	xml := out.String()
	for _, want := range []string{
		`<box frame="2" keyframe="0" outside="0" occluded="1" xtl="12" ytl="20" xbr="42" ybr="30"`, // interpolated, occluded from frame 1
		`<box frame="4" keyframe="1" outside="1"`, `<box frame="7" keyframe="1" outside="1"`,       // outside span, then the end
		`<points label="ear" outside="1" occluded="0"`, `<points label="tail" outside="0" occluded="1"`,
		`<mask frame="5" keyframe="1" outside="0" occluded="0" rle="`,
	} {
		if !strings.Contains(xml, want) {
			t.Errorf("the XML lacks %s:\n%s", want, xml)
		}
	}
	back, err := ReadCVAT(strings.NewReader(xml))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(in) {
		t.Fatalf("%d tracks read back", len(back))
	}
	for i := range in {
		a, b := in[i], back[i]
		if a.Number != b.Number || a.Label != b.Label || !reflect.DeepEqual(a.Outside, b.Outside) || len(a.Keyframes) != len(b.Keyframes) {
			t.Errorf("track %d: %+v\nread back %+v", a.Number, a, b)
			continue
		}
		for j := range a.Keyframes {
			ka, kb := a.Keyframes[j], b.Keyframes[j]
			if ka.Frame != kb.Frame || ka.X != kb.X || ka.Y != kb.Y || ka.W != kb.W || ka.H != kb.H ||
				!reflect.DeepEqual(ka.Geometry, kb.Geometry) || !sameJSON(ka.Attributes, kb.Attributes) {
				t.Errorf("track %d keyframe %d: %+v\nread back %+v", a.Number, j, ka, kb)
			}
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

func TestCVATBadTracks(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`<annotations><track id="x" label="a"></track></annotations>`, `track id "x" is not a whole number`},
		{`<annotations><track id="1" label="a"><box frame="-1" xtl="0" ytl="0" xbr="1" ybr="1"/></track></annotations>`, `frame "-1" is not a frame number`},
		{`<annotations><track id="1" label="a"><box frame="0" xtl="a" ytl="0" xbr="1" ybr="1"/></track></annotations>`, `track 1 frame 0: box corner "a" is not a number`},
		{`<annotations><track id="1" label="a"><tag frame="0"/></track></annotations>`, `a tag cannot be tracked`},
		{`<annotations><track`, `not XML`},
	} {
		_, err := ReadCVAT(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
}
