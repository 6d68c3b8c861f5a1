package main_test

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPropagateThroughServer: a person draws one box on frame 0 of a video
// where an object moves 4 px right and 1 px down a frame, asks for it to be
// tracked forward, and the job adds a keyframe every 5 frames that follows
// the object to within 3 px, stopping at the video's end; a track that is
// not there, or a frame without a keyframe, is a 400/404 that queues nothing.
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
			Reason                       string
		}
	}
	for deadline := time.Now().Add(60 * time.Second); j.Status != "completed"; time.Sleep(200 * time.Millisecond) {
		s.call(t, s.read, "GET", "/api/v1/jobs/"+job.JobID, "", nil, &j)
		if j.Status == "failed" || time.Now().After(deadline) {
			b, _ := json.Marshal(j)
			t.Fatalf("propagation: %s", b)
		}
	}
	if j.Result.StoppedAt != 39 || j.Result.Reason != "video_end" || j.Result.Keyframes != 8 {
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
}
