package lake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

func openLake(t testing.TB, set ...func(*lake.Options)) (*lake.Lake, string) {
	t.Helper()
	return reopenLake(t, t.TempDir(), set...)
}

// reopenLake opens the lake in dir, creating it when new; set change its options.
func reopenLake(t testing.TB, dir string, set ...func(*lake.Options)) (*lake.Lake, string) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	opt := lake.Options{MediaDir: filepath.Join(dir, "media"), SigningKey: []byte("0123456789abcdef0123"), BaseURL: "http://x"}
	for _, f := range set {
		f(&opt)
	}
	l, err := lake.Open(ctx, db, opt)
	if err != nil {
		t.Fatal(err)
	}
	return l, dir
}

func jpegBytes(t testing.TB, w, h int, seed uint8) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x) + seed, uint8(y), seed, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mem(name string, b []byte) lake.Upload {
	return lake.Upload{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func TestAddRejectsBadInput(t *testing.T) {
	l, dir := openLake(t)
	good := jpegBytes(t, 32, 24, 1)
	cases := []struct {
		up   lake.Upload
		code errs.Code
		want string
	}{
		{mem("empty.jpg", nil), errs.InvalidArgument, "empty"},
		{mem("cut.jpg", good[:len(good)/2]), errs.InvalidArgument, "not a decodable image"},
		{mem("fake.png", []byte("this is text, not a png")), errs.InvalidArgument, "not a decodable image"},
		{mem("../evil.jpg", good), errs.InvalidArgument, "path separators"},
		{mem("a/b.jpg", good), errs.InvalidArgument, "path separators"},
		{mem("bell\a.jpg", good), errs.InvalidArgument, "control characters"},
		{mem("clip.mp4", []byte("\x00\x00\x00\x18ftypmp42 not really a video")), errs.InvalidArgument, "not a readable video"},
	}
	for _, c := range cases {
		res, err := l.Add(context.Background(), lake.AddOptions{Collection: "c"}, []lake.Upload{c.up})
		if err != nil {
			t.Fatalf("%s: %v", c.up.Name, err)
		}
		if len(res.Stored) != 0 || len(res.Rejected) != 1 {
			t.Fatalf("%q: stored %d rejected %d", c.up.Name, len(res.Stored), len(res.Rejected))
		}
		r := res.Rejected[0]
		if r.Code != c.code || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%q: rejection %+v, want %s containing %q", c.up.Name, r, c.code, c.want)
		}
	}
	if _, err := l.Add(context.Background(), lake.AddOptions{Metadata: json.RawMessage(`[1,2]`)},
		[]lake.Upload{mem("ok.jpg", good)}); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("array metadata: %v", err)
	}
	// Nothing of the rejected uploads is left: no rows, no blobs, no temp files.
	var n int
	l.DB().R.QueryRow("SELECT count(*) FROM file").Scan(&n)
	if n != 0 {
		t.Errorf("%d file rows after rejections", n)
	}
	blobs := 0
	filepath.WalkDir(filepath.Join(dir, "media"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			blobs++
		}
		return nil
	})
	if blobs != 0 {
		t.Errorf("%d files left in the media store", blobs)
	}
}

func TestAddStoresDedupesAndSkips(t *testing.T) {
	l, _ := openLake(t)
	ctx := context.Background()
	a, b := jpegBytes(t, 64, 48, 1), jpegBytes(t, 64, 48, 2)
	opt := lake.AddOptions{Collection: "Batch 01", Metadata: json.RawMessage(`{"site": "north", "n": 3}`), SkipExisting: true}
	res, err := l.Add(ctx, opt, []lake.Upload{mem("dog 1.jpg", a), mem("dog 2.jpg", b), mem("copy.jpg", a)})
	if err != nil || len(res.Stored) != 3 {
		t.Fatalf("add: %+v %v", res, err)
	}
	f := res.Stored[0]
	if f.Type != lake.Image || f.Width != 64 || f.Height != 48 || f.Format != "jpeg" || f.Ext != "jpg" {
		t.Errorf("probe: %+v", f)
	}
	if !strings.HasPrefix(f.UniqueName, "batch-01-dog-1-") {
		t.Errorf("uniqueName %q is not derived from collection and file name", f.UniqueName)
	}
	if res.Stored[2].Blob != f.Blob {
		t.Error("identical bytes got different blobs")
	}
	got, err := l.File(ctx, f.UniqueName)
	if err != nil || got.ID != f.ID || string(got.Metadata) != `{"site":"north","n":3}` {
		t.Fatalf("read back: %+v %v", got, err)
	}
	// Re-running the same import skips what is there and adds only the new file.
	res, err = l.Add(ctx, opt, []lake.Upload{mem("dog 1.jpg", a), mem("dog 3.jpg", jpegBytes(t, 8, 8, 3))})
	if err != nil || len(res.Skipped) != 1 || len(res.Stored) != 1 {
		t.Fatalf("re-run: stored %d skipped %d %v", len(res.Stored), len(res.Skipped), err)
	}
	c, err := l.CollectionByName(ctx, "Batch 01")
	if err != nil || c.Type != lake.ImageCollection {
		t.Fatalf("collection %+v %v", c, err)
	}
	// Deleting one of two files sharing bytes keeps the blob for the other.
	if err := l.Delete(ctx, f.UniqueName); err != nil {
		t.Fatal(err)
	}
	if rc, err := l.OpenMedia(ctx, res.Stored[0]); err != nil {
		t.Fatal(err)
	} else {
		rc.Close()
	}
	if _, err := l.File(ctx, f.UniqueName); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("deleted file still readable: %v", err)
	}
}

func TestAddVideo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs ffmpeg")
	}
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is required: apt-get install ffmpeg (make test installs it)")
	}
	l, dir := openLake(t)
	clip := filepath.Join(dir, "clip.mp4")
	out, err := exec.Command(ffmpeg, "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10:duration=2",
		"-pix_fmt", "yuv420p", clip).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	up := lake.Upload{Name: "clip.mp4", Open: func() (io.ReadCloser, error) { return os.Open(clip) }}
	res, err := l.Add(context.Background(), lake.AddOptions{Collection: "clips"}, []lake.Upload{up})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	v := res.Stored[0]
	if v.Type != lake.Video || v.Width != 160 || v.Height != 120 || v.FrameCount != 20 || v.FrameRate != 10 || v.MIME != "video/mp4" ||
		math.Abs(v.Duration-2) > 0.05 {
		t.Errorf("video probe: %+v", v)
	}
}

func TestSignedURL(t *testing.T) {
	l, _ := openLake(t)
	res, _ := l.Add(context.Background(), lake.AddOptions{}, []lake.Upload{mem("a.jpg", jpegBytes(t, 8, 8, 1))})
	f := res.Stored[0]
	u := l.URL(f)
	if !strings.HasPrefix(u, "http://x/media/"+f.UniqueName+"?exp=") {
		t.Fatalf("url %s", u)
	}
	q := u[strings.Index(u, "?")+1:]
	var exp, sig string
	for _, kv := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "exp" {
			exp = v
		} else {
			sig = v
		}
	}
	if err := l.VerifyURL(f.UniqueName, exp, sig); err != nil {
		t.Fatal(err)
	}
	if err := l.VerifyURL("other", exp, sig); errs.CodeOf(err) != errs.Unauthenticated {
		t.Errorf("signature reused for another file: %v", err)
	}
	if err := l.VerifyURL(f.UniqueName, "1", sig); errs.CodeOf(err) != errs.Unauthenticated {
		t.Errorf("tampered expiry accepted: %v", err)
	}
	old := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	if err := l.VerifyURL(f.UniqueName, old, sig); errs.CodeOf(err) != errs.Unauthenticated {
		t.Errorf("old expiry accepted: %v", err)
	}
}
