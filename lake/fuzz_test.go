package lake

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzMediaTypeOfFile feeds arbitrary names and first bytes to the media
// sniffing framelake import uses: it never panics, says image, video or
// other, and on disk agrees with MediaType on the file's first 64 bytes.
// The corpus lives in testdata/fuzz/FuzzMediaTypeOfFile.
func FuzzMediaTypeOfFile(f *testing.F) {
	f.Add("a.jpg", []byte("\xff\xd8\xff\xe0"))
	f.Add("noext", []byte("\x89PNG\r\n\x1a\n"))
	f.Add("clip", []byte("\x00\x00\x00\x20ftypisom"))
	f.Add("x.JPEG.txt", []byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	f.Add(".", []byte{})
	f.Fuzz(func(t *testing.T, name string, head []byte) {
		got := MediaType(name, head)
		if got != Image && got != Video && got != Other {
			t.Fatalf("MediaType(%q, %q) = %q", name, head, got)
		}
		base := filepath.Base(name)
		if base == "." || base == "/" || base == ".." || len(base) > 200 || filepath.Base(base) != base {
			return
		}
		p := filepath.Join(t.TempDir(), base)
		if err := os.WriteFile(p, head, 0o644); err != nil {
			return // a name the file system does not take
		}
		onDisk, err := MediaTypeOfFile(p)
		if err != nil {
			t.Fatalf("MediaTypeOfFile(%q): %v", base, err)
		}
		if want := MediaType(base, head[:min(len(head), 64)]); onDisk != want {
			t.Fatalf("MediaTypeOfFile(%q) = %q, MediaType of its head = %q", base, onDisk, want)
		}
	})
}
