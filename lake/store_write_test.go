package lake_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/framelake/framelake/lake"
)

// statReader is a file's bytes with the size another file has, as a file
// that grew between its size and its read looks to Write.
type statReader struct {
	io.Reader
	info os.FileInfo
}

func (r statReader) Stat() (os.FileInfo, error) { return r.info, nil }

// TestWriteReadsFilesWhole: a file is read whole by its size, and what
// Write stores, hashes and keeps is its bytes whatever its size says:
// a file that grew after saying it is read to its end, one larger than the
// limit is refused, and a reader with no size is copied as before.
func TestWriteReadsFilesWhole(t *testing.T) {
	l, data := openLake(t)
	dir := t.TempDir()
	body := bytes.Repeat([]byte("framelake "), 20000) // 200 KB: past io.Copy's buffer
	path := filepath.Join(dir, "a.bin")
	small := filepath.Join(dir, "small.bin")
	os.WriteFile(path, body, 0o644)
	os.WriteFile(small, body[:1000], 0o644)
	smallInfo, _ := os.Stat(small)
	open := func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	sum := sha256.Sum256(body)
	check := func(name string, p *lake.Pending, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer p.Discard()
		stored, _ := os.ReadFile(p.TempPath())
		if p.Hash != hex.EncodeToString(sum[:]) || p.Size != int64(len(body)) || !bytes.Equal(p.Data, body) || !bytes.Equal(stored, body) {
			t.Fatalf("%s: hash %s size %d, kept %d bytes, stored %d bytes", name, p.Hash, p.Size, len(p.Data), len(stored))
		}
	}
	p, err := l.Store().Write(open(), 1<<20)
	check("file", p, err)
	p, err = l.Store().Write(statReader{open(), smallInfo}, 1<<20)
	check("file longer than its size", p, err)
	p, err = l.Store().Write(bytes.NewReader(body), 1<<20)
	check("reader without a size", p, err)
	for _, r := range []io.Reader{open(), statReader{open(), smallInfo}} {
		if _, err := l.Store().Write(r, int64(len(body)-1)); !errors.Is(err, lake.ErrTooLarge) {
			t.Fatalf("a file over the limit: %v", err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(data, "media", "tmp", "*", "in-*"))
	if len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}
