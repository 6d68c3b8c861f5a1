package main_test

import (
	"context"
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/client"
)

// TestPropagateThroughServer: a person draws one box on frame 0 of a video
// where an object moves 4 px right and 1 px down a frame, asks for it to be
// tracked forward, and the job adds a keyframe every 5 frames that follows
// the object to within 3 px, stopping at the video's end; a track that is
// not there, or a frame without a keyframe, is a 400/404 that queues nothing.
// Then a registered tracking package (propagate/testdata/numpy-tracker, run
// by its real Python worker) follows the object forward and backward when a
// request names it, and its boxes are stored as keyframes; a package that
// loses the object stops the job ("lost"), and a model not registered is a
// 400 naming model.
func TestPropagateThroughServer(t *testing.T) {
	s := startUIServer(t)
	clip := filepath.Join(t.TempDir(), "move.mp4")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-filter_complex",
		"color=c=gray:s=320x240:r=10:d=4[bg];testsrc=s=48x36:r=10:d=4[fg];[bg][fg]overlay=x='40+t*40':y='60+t*10':shortest=1",
		"-pix_fmt", "yuv420p", "-c:v", "libx264", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	s.upload(t, "move.mp4", clip)
	var list struct {
		Items []struct {
			UniqueName string `json:"uniqueName"`
		} `json:"items"`
	}
	s.call(t, s.read, "GET", "/api/v1/lake/items?pageSize=10&itemType=video", "", nil, &list)
	path := "/api/v1/lake/files/" + list.Items[0].UniqueName + "/tracks"
	one := `{"label": "pattern", "keyframes": [{"frame": 0, "x": 40, "y": 60, "width": 48, "height": 36}]}`
	s.call(t, s.admin, "PUT", path+"/1?operation=review:move", "application/json", strings.NewReader(one), nil)

	if code, body := s.raw(t, s.admin, "POST", path+"/2/propagate?operation=review:move", "application/json",
		strings.NewReader(`{"from": 0}`)); code != 404 || !strings.Contains(body, "has no track 2") {
		t.Errorf("a missing track: %d %s", code, body)
	}
	if code, body := s.raw(t, s.admin, "POST", path+"/1/propagate?operation=review:move", "application/json",
		strings.NewReader(`{"from": 3}`)); code != 400 || !strings.Contains(body, "no keyframe at frame 3") {
		t.Errorf("no keyframe to start from: %d %s", code, body)
	}
	var job struct {
		JobID string `json:"jobId"`
	}
	s.call(t, s.admin, "POST", path+"/1/propagate?operation=review:move", "application/json",
		strings.NewReader(`{"from": 0, "every": 5}`), &job)
	var j struct {
		Status string
		Result struct {
			Frames, Keyframes, StoppedAt int
			Reason, Tracker              string
		}
	}
	for deadline := time.Now().Add(60 * time.Second); j.Status != "completed"; time.Sleep(200 * time.Millisecond) {
		s.call(t, s.read, "GET", "/api/v1/jobs/"+job.JobID, "", nil, &j)
		if j.Status == "failed" || time.Now().After(deadline) {
			b, _ := json.Marshal(j)
			t.Fatalf("propagation: %s", b)
		}
	}
	if j.Result.StoppedAt != 39 || j.Result.Reason != "video_end" || j.Result.Keyframes != 8 || j.Result.Tracker != "built-in" {
		t.Errorf("result: %+v", j.Result)
	}
	var got struct {
		Tracks []struct {
			Keyframes []struct {
				Frame      int
				X, Y       float64
				Confidence float64
			}
		}
	}
	s.call(t, s.read, "GET", path+"?operation=review:move", "", nil, &got)
	if len(got.Tracks) != 1 || len(got.Tracks[0].Keyframes) != 9 {
		t.Fatalf("keyframes after propagation: %+v", got)
	}
	for _, k := range got.Tracks[0].Keyframes {
		x, y := 40+4*float64(k.Frame), 60+float64(k.Frame)
		if math.Abs(k.X-x) > 3 || math.Abs(k.Y-y) > 3 || (k.Frame > 0 && k.Confidence < 0.6) {
			t.Errorf("frame %d: (%.1f, %.1f) score %.2f, the object is at (%v, %v)", k.Frame, k.X, k.Y, k.Confidence, x, y)
		}
	}

	// Backward from a box drawn at frame 30, ten frames: it stops at 20
	// (max_frames) with keyframes at 25 and 20 on the object.
	back := `{"label": "pattern", "keyframes": [{"frame": 30, "x": 160, "y": 90, "width": 48, "height": 36}]}`
	s.call(t, s.admin, "PUT", path+"/2?operation=review:move", "application/json", strings.NewReader(back), nil)
	s.call(t, s.admin, "POST", path+"/2/propagate?operation=review:move", "application/json",
		strings.NewReader(`{"from": 30, "backward": true, "every": 5, "maxFrames": 10}`), &job)
	j.Status = ""
	for deadline := time.Now().Add(60 * time.Second); j.Status != "completed"; time.Sleep(200 * time.Millisecond) {
		s.call(t, s.read, "GET", "/api/v1/jobs/"+job.JobID, "", nil, &j)
		if j.Status == "failed" || time.Now().After(deadline) {
			b, _ := json.Marshal(j)
			t.Fatalf("backward propagation: %s", b)
		}
	}
	if j.Result.StoppedAt != 20 || j.Result.Reason != "max_frames" || j.Result.Keyframes != 2 {
		t.Errorf("backward result: %+v", j.Result)
	}
	s.call(t, s.read, "GET", path+"?operation=review:move", "", nil, &got)
	if len(got.Tracks) != 2 || len(got.Tracks[1].Keyframes) != 3 {
		t.Fatalf("keyframes after the backward run: %+v", got)
	}
	for _, k := range got.Tracks[1].Keyframes {
		if x, y := 40+4*float64(k.Frame), 60+float64(k.Frame); math.Abs(k.X-x) > 3 || math.Abs(k.Y-y) > 3 {
			t.Errorf("backward frame %d: (%.1f, %.1f), the object is at (%v, %v)", k.Frame, k.X, k.Y, x, y)
		}
	}

	propagateWithModel(t, s, path)
}

// propagateWithModel is TestPropagateThroughServer's part with a registered
// tracking package, on the same server and video.
func propagateWithModel(t *testing.T, s *uiServer, path string) {
	pkg, err := filepath.Abs("../../propagate/testdata/numpy-tracker")
	if err != nil {
		t.Fatal(err)
	}
	admin := client.New(s.base, s.admin["key"], s.admin["secret"])
	if _, err := admin.RegisterModel(context.Background(), pkg, "numpy-tracker", "tracking"); err != nil {
		t.Fatal(err)
	}
	for n, kf := range map[int]string{3: `"pattern", "keyframes": [{"frame": 10, "x": 80, "y": 70, "width": 48, "height": 36}]`,
		4: `"pattern", "keyframes": [{"frame": 30, "x": 160, "y": 90, "width": 48, "height": 36}]`,
		5: `"ghost", "keyframes": [{"frame": 0, "x": 40, "y": 60, "width": 48, "height": 36}]`} {
		s.call(t, s.admin, "PUT", path+"/"+strconv.Itoa(n)+"?operation=review:model", "application/json",
			strings.NewReader(`{"label": `+kf+`}`), nil)
	}
	if code, body := s.raw(t, s.admin, "POST", path+"/3/propagate?operation=review:model", "application/json",
		strings.NewReader(`{"from": 10, "model": "no-such-tracker"}`)); code != 400 || !strings.Contains(body, `"model"`) ||
		!strings.Contains(body, "not registered") {
		t.Errorf("a model not registered: %d %s", code, body)
	}
	type result struct {
		Frames, Keyframes, StoppedAt int
		Reason, Tracker              string
	}
	run := func(n int, body string) result {
		var job struct {
			JobID string `json:"jobId"`
		}
		s.call(t, s.admin, "POST", path+"/"+strconv.Itoa(n)+"/propagate?operation=review:model", "application/json",
			strings.NewReader(body), &job)
		var j struct {
			Status string
			Error  string
			Result result
		}
		for deadline := time.Now().Add(2 * time.Minute); j.Status != "completed"; time.Sleep(200 * time.Millisecond) {
			s.call(t, s.read, "GET", "/api/v1/jobs/"+job.JobID, "", nil, &j)
			if j.Status == "failed" || time.Now().After(deadline) {
				t.Fatalf("propagation of track %d with the model: %s %s", n, j.Status, j.Error)
			}
		}
		return j.Result
	}
	want := []result{{20, 4, 30, "max_frames", "numpy-tracker"}, {10, 2, 20, "max_frames", "numpy-tracker"},
		{0, 0, 0, "lost", "numpy-tracker"}}
	for i, got := range []result{run(3, `{"from": 10, "every": 5, "maxFrames": 20, "model": "numpy-tracker"}`),
		run(4, `{"from": 30, "backward": true, "every": 5, "maxFrames": 10, "model": "numpy-tracker"}`),
		run(5, `{"from": 0, "model": "numpy-tracker"}`)} {
		if got != want[i] {
			t.Errorf("track %d: result %+v, want %+v", 3+i, got, want[i])
		}
	}
	var got struct {
		Tracks []struct {
			Number    int
			Keyframes []struct {
				Frame      int
				X, Y       float64
				Confidence float64
			}
		}
	}
	s.call(t, s.read, "GET", path+"?operation=review:model", "", nil, &got)
	frames := map[int][]int{}
	for _, tr := range got.Tracks {
		for _, k := range tr.Keyframes {
			frames[tr.Number] = append(frames[tr.Number], k.Frame)
			x, y := 40+4*float64(k.Frame), 60+float64(k.Frame)
			if math.Abs(k.X-x) > 3 || math.Abs(k.Y-y) > 3 || (k.Confidence != 0 && k.Confidence < 0.6) {
				t.Errorf("track %d frame %d: (%.1f, %.1f) score %.2f, the object is at (%v, %v)",
					tr.Number, k.Frame, k.X, k.Y, k.Confidence, x, y)
			}
		}
	}
	if w := map[int][]int{3: {10, 15, 20, 25, 30}, 4: {20, 25, 30}, 5: {0}}; !reflect.DeepEqual(frames, w) {
		t.Errorf("keyframes by track %v, want %v", frames, w)
	}
}
