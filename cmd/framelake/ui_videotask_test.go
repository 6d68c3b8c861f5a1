package main_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWebAppVideoTask drives a task made from a lake video in Chromium
// (web/ui/test/videotask.mjs), on a video where a white 40x40 square moves
// 4 px right and 2 px down a frame on black (10 fps, 60 frames): a curator
// opens the video's workspace, makes a task of frames 0-39 (a range past
// the video is refused naming lastFrame) and cuts it into two jobs for an
// annotator; the annotator signs in, opens job 1 from the jobs' link, draws
// the square at frames 0 and 10, and the API's frame 5 is the interpolated
// box; stepping stops at the job's last frame; play runs at the video's
// rate (±20%, measured by the page over the job's 2 s); the annotator
// submits the job.
func TestWebAppVideoTask(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	square := filepath.Join(t.TempDir(), "square.mp4")
	ffmpeg(t, "-f", "lavfi", "-i", "color=c=black:s=320x240:r=10:d=6", "-f", "lavfi", "-i", "color=c=white:s=40x40:r=10:d=6",
		"-filter_complex", "[0][1]overlay=x='20+40*t':y='40+20*t':shortest=1", "-pix_fmt", "yuv420p", "-c:v", "libx264", square)
	s.upload(t, "square.mp4", square)
	var vids struct{ Items []struct{ UniqueName string } }
	s.call(t, s.read, "GET", "/api/v1/lake/items?itemType=video&pageSize=10", "", nil, &vids)
	if len(vids.Items) != 1 {
		t.Fatalf("videos: %+v", vids)
	}
	var p struct{ ProjectID string }
	s.call(t, s.admin, "POST", "/api/v1/projects", "application/json", strings.NewReader(
		`{"projectName":"clips","contentType":1,"labels":[{"labelName":"square"}]}`), &p)
	s.call(t, s.admin, "POST", "/api/v1/users", "application/json", strings.NewReader(
		`{"name":"ana","password":"correct horse battery","role":"annotator"}`), nil)
	s.call(t, s.admin, "PUT", "/api/v1/projects/"+p.ProjectID+"/members/ana", "application/json",
		strings.NewReader(`{"role":"annotator"}`), nil)
	expect := map[string]any{"video": vids.Items[0].UniqueName, "project": p.ProjectID, "fps": 10,
		"square": map[string]any{"x0": 20, "y0": 40, "dx": 4, "dy": 2, "size": 40}}
	s.browserCheck(t, "videotask.mjs", s.admin, expect, shotsDir(t, "videotask"))
}
