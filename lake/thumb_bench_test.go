package lake

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/internal/testphotos"
	"github.com/framelake/framelake/internal/vips"
)

// BenchmarkThumbnail measures the thumbnail figures for a 1080p
// JPEG at 256 px: cold (libvips shrink-on-load and JPEG encode) of a
// generated gradient and of a real photo (darknet's dog resized to 1080p at
// quality 85), and cached (a read of the disk cache entry).
func BenchmarkThumbnail(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "frame.jpg")
	if err := os.WriteFile(src, testmedia.JPEG(1920, 1080, 7), 0o644); err != nil {
		b.Fatal(err)
	}
	photo, _, _, err := vips.ThumbnailJPEG(testphotos.Read(b, testphotos.Darknet+"dog.jpg"), 1920, 1080, 85)
	if err != nil {
		b.Fatal(err)
	}
	dog := filepath.Join(dir, "dog.jpg")
	if err := os.WriteFile(dog, photo, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for name, path := range map[string]string{"cold-1080p-256": src, "cold-1080p-photo-256": dog} {
		b.Run(name, func(b *testing.B) {
			start := cpuTime()
			for b.Loop() {
				if _, err := makeThumb(ctx, path, Image, 256); err != nil {
					b.Fatal(err)
				}
			}
			// CPU rather than wall time: the figure is server CPU, and wall
			// time on a shared machine counts other processes' turns too.
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
	b.Run("cached-256", func(b *testing.B) {
		l := &Lake{opt: Options{ThumbDir: filepath.Join(dir, "thumbs")}, thumbSlots: make(chan struct{}, 1)}
		f := File{Blob: "ab0123456789", Type: Image}
		jpeg, _ := makeThumb(ctx, src, Image, 256)
		path := filepath.Join(l.opt.ThumbDir, "256", "ab", f.Blob+".jpg")
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, jpeg, 0o644)
		start := cpuTime()
		for b.Loop() {
			if _, err := l.Thumbnail(ctx, f, 256); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
	})
}

// cpuTime is the process's user and system CPU time, libvips' threads included.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
