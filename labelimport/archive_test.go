package labelimport_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/labelimport"
)

type entry struct {
	name string
	body []byte
	link string // a symbolic link to this target
}

func writeZip(t *testing.T, path string, entries ...entry) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		body := e.body
		if e.link != "" {
			h.SetMode(os.ModeSymlink | 0o777)
			body = []byte(e.link)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeTarGz(t *testing.T, path string, entries ...entry) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg}
		if e.link != "" {
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.link == "" {
			tw.Write(e.body)
		}
	}
	tw.Close()
	gz.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestUnpackRefusesHostileArchives: a ".." entry, an absolute path, a
// symbolic link, too many bytes, a zip bomb and too many entries are each refused with a
// message naming what is wrong, by Check before anything is written and
// by Unpack, which leaves no folder behind; a good archive of both kinds
// unpacks whole.
func TestUnpackRefusesHostileArchives(t *testing.T) {
	ctx := context.Background()
	lim := labelimport.Limits{MaxBytes: 1 << 20, MaxEntries: 10}
	ok := []entry{{name: "images/a.jpg", body: []byte("jpeg")}, {name: "labels/a.txt", body: []byte("0 0.5 0.5 0.1 0.1\n")}}
	many := make([]entry, 11)
	for i := range many {
		many[i] = entry{name: "f" + strings.Repeat("x", i) + ".txt", body: []byte("x")}
	}
	cases := []struct {
		name    string
		entries []entry
		want    string
	}{
		{"dotdot", []entry{ok[0], {name: "images/../../evil.txt", body: []byte("x")}}, `has a ".." in its path`},
		{"absolute", []entry{{name: "/etc/evil.txt", body: []byte("x")}}, "absolute path"},
		{"symlink", []entry{ok[0], {name: "images/passwd", link: "/etc/passwd"}}, "symbolic link"},
		{"total", []entry{{name: "a.bin", body: noise(600 << 10)}, {name: "b.bin", body: noise(600 << 10)}}, "bytes uncompressed"},
		{"bomb", []entry{{name: "zeros.bin", body: make([]byte, 2<<20)}}, "compression allowed"},
		{"entries", many, "entries"},
	}
	for _, kind := range []string{"zip", "tar.gz"} {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				arc := filepath.Join(dir, "x."+kind)
				if kind == "zip" {
					writeZip(t, arc, c.entries...)
				} else {
					writeTarGz(t, arc, c.entries...)
				}
				if err := labelimport.Check(ctx, arc, lim); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("check: %v, want an error saying %q", err, c.want)
				}
				dest := filepath.Join(dir, "out")
				err := labelimport.Unpack(ctx, arc, dest, lim)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("unpack: %v, want an error saying %q", err, c.want)
				}
				if _, err := os.Stat(dest); !os.IsNotExist(err) {
					t.Errorf("after a refusal %s is still there (%v)", dest, err)
				}
				if _, err := os.Stat(filepath.Join(dir, "evil.txt")); !os.IsNotExist(err) {
					t.Errorf("an entry landed outside the folder")
				}
			})
		}
		t.Run(kind+"/good", func(t *testing.T) {
			dir := t.TempDir()
			arc := filepath.Join(dir, "x."+kind)
			if kind == "zip" {
				writeZip(t, arc, ok...)
			} else {
				writeTarGz(t, arc, ok...)
			}
			dest := filepath.Join(dir, "out")
			if err := labelimport.Unpack(ctx, arc, dest, lim); err != nil {
				t.Fatal(err)
			}
			for _, e := range ok {
				if b, err := os.ReadFile(filepath.Join(dest, e.name)); err != nil || !bytes.Equal(b, e.body) {
					t.Errorf("%s: %q %v", e.name, b, err)
				}
			}
		})
	}
}

// noise is n bytes that do not compress.
func noise(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{byte(n)}).Read(b)
	return b
}

// TestUnpackEntryAndRatioLimits: with the default limits, a 64 MiB entry of
// zeros (about 64 KiB compressed) is refused by its compression, in a zip by
// its declared sizes and in a tar.gz while it streams, and nothing is
// written; MaxEntryBytes refuses one entry past it although the total fits;
// a 3 MiB file of noise and a small repetitive label file pass.
func TestUnpackEntryAndRatioLimits(t *testing.T) {
	ctx := context.Background()
	zeros := []entry{{name: "images/a.jpg", body: []byte("jpeg")}, {name: "images/bomb.jpg", body: make([]byte, 64<<20)}}
	ok := []entry{{name: "images/n.jpg", body: noise(3 << 20)}, {name: "labels/n.txt", body: bytes.Repeat([]byte("0 0.5 0.5 0.1 0.1\n"), 1000)}}
	cases := []struct {
		name    string
		lim     labelimport.Limits
		entries []entry
		want    string
	}{
		{"ratio", labelimport.Limits{}, zeros, `entry "images/bomb.jpg" unpacks to`},
		{"entry", labelimport.Limits{MaxEntryBytes: 2 << 20}, ok, `more than the 2097152 allowed for one entry`},
		{"good", labelimport.Limits{}, ok, ""},
	}
	for _, kind := range []string{"zip", "tar.gz"} {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				arc := filepath.Join(dir, "x."+kind)
				if kind == "zip" {
					writeZip(t, arc, c.entries...)
				} else {
					writeTarGz(t, arc, c.entries...)
				}
				dest := filepath.Join(dir, "out")
				for what, err := range map[string]error{"check": labelimport.Check(ctx, arc, c.lim),
					"unpack": labelimport.Unpack(ctx, arc, dest, c.lim)} {
					if c.want == "" && err != nil {
						t.Errorf("%s: %v", what, err)
					}
					if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
						t.Errorf("%s: %v, want an error saying %q", what, err, c.want)
					}
				}
				if _, err := os.Stat(dest); c.want != "" && !os.IsNotExist(err) {
					t.Errorf("after a refusal %s is still there (%v)", dest, err)
				}
			})
		}
	}
}
