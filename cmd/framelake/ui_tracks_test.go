package main_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWebAppTracks drives the video workspace in Chromium
// (web/ui/test/tracks.mjs) on a lake video where a white 40x40 square moves
// 4 px right and 2 px down a frame on black: two boxes drawn on frames 0
// and 10 make one track whose frame 5 the API interpolates; a keyframe
// dragged on the timeline moves in the API; "Track forward" from a box
// drawn on frame 30 runs propagation as a job and every frame it covers
// overlaps the square by IoU >= 0.8; split, merge, out of view and play; the
// tracking metrics on /evaluations are the API's; a video tile shows its
// track count. A second video of 18,000 frames with 200 tracks times the
// timeline's draw.
func TestWebAppTracks(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	dir := t.TempDir()
	square := filepath.Join(dir, "square.mp4")
	ffmpeg(t, "-f", "lavfi", "-i", "color=c=black:s=320x240:r=10:d=6", "-f", "lavfi", "-i", "color=c=white:s=40x40:r=10:d=6",
		"-filter_complex", "[0][1]overlay=x='20+40*t':y='40+20*t':shortest=1", "-pix_fmt", "yuv420p", "-c:v", "libx264", square)
	s.upload(t, "square.mp4", square)
	long := filepath.Join(dir, "long.mp4")
	ffmpeg(t, "-f", "lavfi", "-i", "testsrc=s=64x48:r=30:d=600", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", long)
	s.upload(t, "long.mp4", long)

	var vids struct {
		Items []struct{ UniqueName, Name string }
	}
	s.call(t, s.read, "GET", "/api/v1/lake/items?itemType=video&pageSize=10", "", nil, &vids)
	names := map[string]string{}
	for _, v := range vids.Items {
		names[v.Name] = v.UniqueName
	}
	if len(names) != 2 {
		t.Fatalf("videos: %+v", vids)
	}
	// 200 tracks over the 18,000 frames: 20 keyframes each, out of view for
	// a stretch after the fifth and the twelfth.
	var bench []map[string]any
	for n := 1; n <= 200; n++ {
		var keys []map[string]any
		for k := range 20 {
			keys = append(keys, map[string]any{"frame": n*3 + k*890, "x": 4 + k%5, "y": 4 + n%20, "width": 10, "height": 10})
		}
		bench = append(bench, map[string]any{"number": n, "label": []string{"car", "person", "bike"}[n%3], "keyframes": keys,
			"outside": []int{n*3 + 4*890 + 300, n*3 + 11*890 + 100}})
	}
	body, _ := json.Marshal(map[string]any{"operation": "bench", "tracks": bench})
	s.call(t, s.admin, "PUT", "/api/v1/lake/files/"+names["long.mp4"]+"/tracks", "application/json", strings.NewReader(string(body)), nil)

	expect := map[string]any{"video": names["square.mp4"], "long": names["long.mp4"], "frames": 60, "fps": 10,
		"square": map[string]any{"x0": 20, "y0": 40, "dx": 4, "dy": 2, "size": 40}}
	out := s.browserCheck(t, "tracks.mjs", s.admin, expect, shotsDir(t, "tracks"))
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "figure:") {
			fmt.Println(line)
		}
	}
}

func ffmpeg(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ffmpeg", append([]string{"-v", "error", "-y"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v %s", args, err, out)
	}
}
