package media

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteReusesReleasedBuffer: Write reads a file into memory (Data) and
// a Pending released once its bytes are no longer read hands that buffer to
// the next Write, which reads its file into it instead of a new one; the
// bytes kept and written are each file's own. A Pending of bytes that were
// not read whole (no size to read by) gives nothing back.
func TestWriteReusesReleasedBuffer(t *testing.T) {
	s, err := openStaging(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	reused := 0
	var last *byte
	for i := range 20 {
		body := bytes.Repeat([]byte{byte(i)}, 150_000+i*1000)
		path := filepath.Join(src, "f.jpg")
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Write(f, 1<<20)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if on, _ := os.ReadFile(p.TempPath()); !bytes.Equal(p.Data, body) || !bytes.Equal(on, body) {
			t.Fatalf("file %d: kept %d bytes, wrote %d, want %d of its own", i, len(p.Data), len(on), len(body))
		}
		if &p.Data[0] == last {
			reused++
		}
		last = &p.Data[0]
		p.Release()
		if p.Data != nil {
			t.Fatal("Data kept after Release")
		}
		p.Discard()
	}
	if reused == 0 {
		t.Error("no Write read into the buffer the one before released")
	}
	p, err := s.Write(bytes.NewReader([]byte("no size")), 100)
	if err != nil {
		t.Fatal(err)
	}
	if p.pooled {
		t.Error("bytes copied through a growing buffer were marked as the pool's")
	}
	p.Release()
	p.Discard()
}
