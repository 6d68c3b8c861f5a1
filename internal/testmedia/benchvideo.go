package testmedia

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BenchVideo is issue 34's benchmark video, a 10-minute 1080p H.264 video at
// 30 fps (18,000 frames of ffmpeg's testsrc2), made once in dir (a few
// minutes) and kept there for every package's benchmarks.
func BenchVideo(dir string) (string, error) {
	path, err := filepath.Abs(filepath.Join(dir, "video-10min-1080p.mp4"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp := path + ".tmp.mp4"
	if out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=30:d=600",
		"-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-pix_fmt", "yuv420p", tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("ffmpeg: %v %s", err, out)
	}
	return path, os.Rename(tmp, path)
}
