package lake

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteThumbLinksWholeEntry: a cache entry is written as an unnamed
// file linked into place (linkThumb), the entry's folder made when it is
// the first: the folder then holds the entry and nothing else, no temp file
// made and removed beside it. An entry there already is kept as it is, for
// entries are named by their content, and the write still succeeds (the
// rename of a temp file replaced it).
func TestWriteThumbLinksWholeEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "256", "ab")
	path := filepath.Join(dir, "ab12.jpg")
	first := bytes.Repeat([]byte("thumb"), 3000)
	if err := writeThumb(path, first); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, first) {
		t.Fatalf("entry %d bytes (%v), want %d", len(got), err, len(first))
	}
	if err := writeThumb(path, []byte("other")); err != nil {
		t.Fatalf("second write of the entry: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, first) {
		t.Errorf("the entry there already was replaced (%q...)", got[:min(5, len(got))])
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "ab12.jpg" {
		t.Errorf("folder holds %v, want the entry alone", ents)
	}
}
