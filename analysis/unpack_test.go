package analysis

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

// bomb is a .tar.gz of one file of n zero bytes: a few KB that unpack to n.
func bomb(t *testing.T, n int64) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, e := range goodEmbedding {
		tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(e.body))
	}
	tw.WriteHeader(&tar.Header{Name: "weights.bin", Mode: 0o644, Size: n, Typeflag: tar.TypeReg})
	if _, err := io.CopyN(tw, zeros{}, n); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	return &buf
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestHostilePackagesLeaveNothing: archives built to escape the package
// folder or to fill the disk are refused with an error naming what is wrong,
// and neither the models folder nor the temp folder keeps anything of them.
func TestHostilePackagesLeaveNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e := newEnv(t, Options{MaxPackageBytes: 1 << 20, MaxPackageFiles: 50})
	ctx := context.Background()
	secret := filepath.Join(e.dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("do not take"), 0o600); err != nil {
		t.Fatal(err)
	}
	var many []entry
	for i := range 60 {
		many = append(many, entry{name: fmt.Sprintf("data/%d.txt", i)})
	}
	with := func(es ...entry) *bytes.Buffer {
		return archive(t, append(append([]entry{}, goodEmbedding...), es...)...)
	}
	cases := []struct {
		name string
		pkg  *bytes.Buffer
		code errs.Code
		msg  string
	}{
		{"hardlink-dotdot", with(entry{name: "k", typ: tar.TypeLink, link: "../../secret.txt"}), errs.InvalidArgument, "leaves the package folder"},
		{"hardlink-absolute", with(entry{name: "k", typ: tar.TypeLink, link: secret}), errs.InvalidArgument, "absolute path"},
		{"hardlink-missing", with(entry{name: "k", typ: tar.TypeLink, link: "nothing"}), errs.InvalidArgument, "only links to files earlier"},
		// A chain of links that each look inside, then a hard link through
		// them to a file of the data folder: refused before it is made.
		{"hardlink-through-links", with(entry{name: "here", typ: tar.TypeSymlink, link: "."},
			entry{name: "code/up", typ: tar.TypeSymlink, link: "../here/.."},
			entry{name: "x/y", typ: tar.TypeSymlink, link: "../code/up/../.."},
			entry{name: "k", typ: tar.TypeLink, link: "x/y/secret.txt"}), errs.InvalidArgument, "through a link"},
		{"backslash", with(entry{name: `..\..\evil`, body: "x"}), errs.InvalidArgument, "absolute path"},
		{"fifo", with(entry{name: "pipe", typ: tar.TypeFifo}), errs.InvalidArgument, "special file"},
		{"block-device", with(entry{name: "disk", typ: tar.TypeBlock}), errs.InvalidArgument, "special file"},
		{"gzip-bomb", bomb(t, 64<<20), errs.TooLarge, "larger than the limit"},
		{"many-files", with(many...), errs.TooLarge, "more than 50 files"},
	}
	for _, c := range cases {
		if c.pkg.Len() > 2<<20 {
			t.Fatalf("%s: the hostile archive itself is %d bytes", c.name, c.pkg.Len())
		}
		_, err := e.svc.Register(ctx, RegisterRequest{Name: "m-" + c.name, Application: "embedding", Package: c.pkg})
		if errs.CodeOf(err) != c.code || !strings.Contains(errText(err), c.msg) {
			t.Errorf("%s: got %v (%s), want %s %q", c.name, err, errs.CodeOf(err), c.code, c.msg)
		}
	}
	var left []string
	filepath.Walk(filepath.Join(e.dir, "models"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && fi.Name() != "worker.py" { // the runner's own script
			left = append(left, p)
		}
		return nil
	})
	ents, _ := os.ReadDir(tmp)
	for _, en := range ents {
		left = append(left, filepath.Join(tmp, en.Name()))
	}
	if len(left) != 0 {
		t.Errorf("hostile packages left files behind: %v", left)
	}
	if ms, _ := e.svc.Models(ctx); len(ms) != 0 {
		t.Errorf("models %+v", ms)
	}
	if b, _ := os.ReadFile(secret); string(b) != "do not take" {
		t.Errorf("the data folder's file changed: %q", b)
	}
}
