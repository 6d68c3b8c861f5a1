package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
)

// TestTracksMOTThroughServer: a user uploads a video, PUTs a MOT gt.txt to
// it, reads it back as gt.txt line for line, reads one frame's shapes
// (interpolated where a keyframe is missing), and a bad file is a 400 naming
// its line that changes nothing.
func TestTracksMOTThroughServer(t *testing.T) {
	s := startUIServer(t)
	clip := filepath.Join(t.TempDir(), "walk.mp4")
	if err := testmedia.Video(clip, 320, 240, 10, 2); err != nil {
		t.Fatal(err)
	}
	s.upload(t, "walk.mp4", clip)
	var list struct {
		Items []struct {
			UniqueName string `json:"uniqueName"`
		} `json:"items"`
	}
	s.call(t, s.read, "GET", "/api/v1/lake/items?pageSize=10&itemType=video", "", nil, &list)
	if len(list.Items) != 1 {
		t.Fatalf("lake items: %+v", list)
	}
	path := "/api/v1/lake/files/" + list.Items[0].UniqueName + "/tracks"
	// id 1 walks right, in view at MOT frames 1-3, out at 4 and 5 (no rows),
	// back at 6; id 2 is a car at frames 1 and 2.
	gt := "1,1,101,51,20,40,1,1,0.9\n2,1,103,51,20,40,1,1,0.8\n3,1,105,52,20,40,1,1,1\n6,1,111,55,22,40,0,1,0.25\n" +
		"1,2,11,21,30,15,1,3,-1\n2,2,12.5,21,30,15,1,3,-1\n"
	var put struct{ Tracks, Keyframes int }
	s.call(t, s.admin, "PUT", path+"?format=mot&operation=import:walk", "text/plain", strings.NewReader(gt), &put)
	if put.Tracks != 2 || put.Keyframes != 6 {
		t.Fatalf("PUT: %+v", put)
	}
	if back := s.text(t, s.read, path+"?format=mot&operation=import:walk"); back != gt {
		t.Errorf("gt.txt read back:\n%s\nwant:\n%s", back, gt)
	}
	// A person draws a cyclist at frames 0 and 4 only: frames between are
	// interpolated when read, and the MOT export lists them.
	drawn := `{"operation": "review:walk", "tracks": [{"number": 7, "label": "bicycle", "keyframes": [
		{"frame": 0, "x": 10, "y": 100, "width": 20, "height": 20}, {"frame": 4, "x": 50, "y": 100, "width": 20, "height": 20}]}]}`
	s.call(t, s.admin, "PUT", path, "application/json", strings.NewReader(drawn), &put)
	if back, want := s.text(t, s.read, path+"?format=mot&operation=review:walk"),
		"1,7,11,101,20,20,1,4,-1\n2,7,21,101,20,20,1,4,-1\n3,7,31,101,20,20,1,4,-1\n4,7,41,101,20,20,1,4,-1\n5,7,51,101,20,20,1,4,-1\n"; back != want {
		t.Errorf("drawn track as gt.txt:\n%s\nwant:\n%s", back, want)
	}
	var frame struct {
		Shapes []struct {
			Number       int     `json:"number"`
			Interpolated bool    `json:"interpolated"`
			X            float64 `json:"x"`
			Label        string  `json:"label"`
		} `json:"shapes"`
	}
	s.call(t, s.read, "GET", path+"?frame=3", "", nil, &frame) // MOT frame 4: the pedestrian is out of view, the car gone
	if len(frame.Shapes) != 1 || frame.Shapes[0].Number != 7 || !frame.Shapes[0].Interpolated || frame.Shapes[0].X != 40 ||
		frame.Shapes[0].Label != "bicycle" {
		t.Errorf("frame 3: %+v", frame.Shapes)
	}
	// The tracker's cyclist against the drawn one: the same boxes on the
	// five frames (four interpolated on each side): MOTA 1, HOTA 1.
	tracker := strings.ReplaceAll(s.text(t, s.read, path+"?format=mot&operation=review:walk"), ",7,", ",70,")
	s.call(t, s.admin, "PUT", path+"?format=mot&operation=run:tracker", "text/plain", strings.NewReader(tracker), &put)
	var metrics struct {
		Labels map[string]struct {
			MOTA, HOTA, IDF1 float64
			TP               int
		} `json:"labels"`
	}
	s.call(t, s.read, "GET", path+"/metrics?truth=review:walk&predicted=run:tracker", "", nil, &metrics)
	if m := metrics.Labels["bicycle"]; m.TP != 5 || m.MOTA != 1 || m.HOTA != 1 || m.IDF1 != 1 {
		t.Errorf("metrics: %+v", metrics)
	}
	// CVAT for video both ways: the drawn track goes out with its
	// interpolated frames marked keyframe="0" and comes back as it was.
	cvat := s.text(t, s.read, path+"?format=cvat&operation=review:walk")
	if !strings.Contains(cvat, `<box frame="2" keyframe="0" outside="0" occluded="0" xtl="30" ytl="100" xbr="50" ybr="120"`) ||
		!strings.Contains(cvat, `<box frame="5" keyframe="1" outside="1"`) {
		t.Errorf("CVAT XML:\n%s", cvat)
	}
	s.call(t, s.admin, "PUT", path+"?format=cvat&operation=import:cvat", "application/xml", strings.NewReader(cvat), &put)
	var a, b struct {
		Tracks []struct {
			Number    int               `json:"number"`
			Keyframes []json.RawMessage `json:"keyframes"`
		} `json:"tracks"`
	}
	s.call(t, s.read, "GET", path+"?operation=review:walk", "", nil, &a)
	s.call(t, s.read, "GET", path+"?operation=import:cvat", "", nil, &b)
	if len(a.Tracks) != 1 || len(b.Tracks) != 1 || !reflect.DeepEqual(a.Tracks[0].Keyframes, b.Tracks[0].Keyframes) {
		t.Errorf("CVAT round trip: %+v\nvs %+v", a, b)
	}
	// One track edited by its number: the cyclist gets a keyframe at 2.
	one := `{"label": "bicycle", "keyframes": [{"frame": 0, "x": 10, "y": 100, "width": 20, "height": 20},
		{"frame": 2, "x": 40, "y": 100, "width": 20, "height": 20}, {"frame": 4, "x": 50, "y": 100, "width": 20, "height": 20}]}`
	var edited struct {
		Number    int   `json:"number"`
		LastFrame int   `json:"lastFrame"`
		Outside   []int `json:"outside"`
	}
	s.call(t, s.admin, "PUT", path+"/7?operation=review:walk", "application/json", strings.NewReader(one), &edited)
	if edited.Number != 7 || edited.LastFrame != 4 {
		t.Errorf("PUT one track: %+v", edited)
	}
	if back := s.text(t, s.read, path+"?format=mot&operation=review:walk"); !strings.Contains(back, "2,7,26,101,") || !strings.Contains(back, "3,7,41,101,") {
		t.Errorf("after the edit:\n%s", back)
	}
	if code, _ := s.raw(t, s.admin, "DELETE", path+"/7?operation=review:walk", "", nil); code != http.StatusNoContent {
		t.Errorf("DELETE: %d", code)
	}
	if code, body := s.raw(t, s.admin, "DELETE", path+"/7?operation=review:walk", "", nil); code != http.StatusNotFound {
		t.Errorf("DELETE again: %d %s", code, body)
	}
	// A Label Studio export of the same video (uploaded there as walk.mp4).
	ls := `[{"data": {"video": "/data/upload/3/0a1b2c-walk.mp4"}, "annotations": [{"result": [{"id": "r1", "type": "videorectangle",
		"value": {"labels": ["dog"], "sequence": [{"frame": 1, "enabled": true, "x": 10, "y": 10, "width": 5, "height": 10},
		{"frame": 5, "enabled": true, "x": 20, "y": 10, "width": 5, "height": 10}]}}]}]}]`
	s.call(t, s.admin, "PUT", path+"?format=labelstudio&operation=import:ls", "application/json", strings.NewReader(ls), &put)
	if back := s.text(t, s.read, path+"?format=mot&operation=import:ls"); !strings.HasPrefix(back, "1,1,33,25,16,24,1,-1,-1\n2,1,41,25,16,24,") {
		t.Errorf("Label Studio track as gt.txt (percent of 320x240, frames from 1):\n%s", back)
	}
	// The workspace shows a lake video frame by frame, decoded by the server.
	if code, body := s.raw(t, s.read, "GET", strings.Replace(path, "/tracks", "/frames/12?size=160", 1), "", nil); code != http.StatusOK ||
		!strings.HasPrefix(body, "\xff\xd8") {
		t.Errorf("frame 12: %d %.40q", code, body)
	}
	if code, body := s.raw(t, s.read, "GET", strings.Replace(path, "/tracks", "/frames/20", 1), "", nil); code != http.StatusBadRequest ||
		!strings.Contains(body, "frame 20 is outside the video's frames 0..19") {
		t.Errorf("frame 20 of 20: %d %s", code, body)
	}
	want := gt
	code, body := s.raw(t, s.admin, "PUT", path+"?format=mot&operation=import:walk", "text/plain",
		strings.NewReader("1,1,1,1,10,10,1\n2,1,1,1,0,10,1\n"))
	if code != http.StatusBadRequest || !strings.Contains(body, "line 2: box 0x10") {
		t.Errorf("bad gt.txt: %d %s", code, body)
	}
	if s.text(t, s.read, path+"?format=mot&operation=import:walk") != want {
		t.Error("a refused file changed the tracks")
	}
	if code, _ := s.raw(t, s.read, "PUT", path+"?format=mot&operation=x", "text/plain", strings.NewReader(gt)); code != http.StatusForbidden {
		t.Errorf("a read key wrote tracks: %d", code)
	}
}

// text GETs path and returns its body, failing on anything but 200.
func (s *uiServer) text(t *testing.T, k map[string]string, path string) string {
	t.Helper()
	code, body := s.raw(t, k, "GET", path, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return body
}

// raw sends a request and returns its status and body, whatever they are.
func (s *uiServer) raw(t testing.TB, k map[string]string, method, path, ctype string, body io.Reader) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, s.base+path, body)
	req.Header.Set("key", k["key"])
	req.Header.Set("secret", k["secret"])
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
