package lake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/augment"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// addOne adds one upload and returns its rejection (nil when it was stored).
func addOne(t *testing.T, l *lake.Lake, up lake.Upload) *lake.Rejection {
	t.Helper()
	res, err := l.Add(context.Background(), lake.AddOptions{Collection: "c"}, []lake.Upload{up})
	if err != nil {
		t.Fatalf("%s: %v", up.Name, err)
	}
	if len(res.Rejected) == 1 {
		return &res.Rejected[0]
	}
	return nil
}

func testPNG(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAddRefusesDamagedAndHugeImages: files whose end marker is intact but
// whose pixel data does not decode are refused (a dataset build would fail
// on them later), and an image over the pixel limit is refused from its
// header with too_large, naming the limit, before any decoding.
func TestAddRefusesDamagedAndHugeImages(t *testing.T) {
	if lake.DefaultMaxPixels != augment.MaxPixels {
		t.Errorf("lake.DefaultMaxPixels %d differs from augment.MaxPixels %d", lake.DefaultMaxPixels, augment.MaxPixels)
	}
	l, _ := openLake(t)
	j, p := jpegBytes(t, 64, 48, 1), testPNG(t, 40, 30)
	cases := []struct {
		up   lake.Upload
		code errs.Code
		want string
	}{
		{mem("garbage-scan.jpg", testmedia.GarbageScanJPEG(j)), errs.InvalidArgument, "not a decodable image"},
		{mem("garbage-idat.png", testmedia.GarbageIDATPNG(p)), errs.InvalidArgument, "not a decodable image"},
		{mem("huge.png", testmedia.WithSize(p, 50000, 50000)), errs.TooLarge, "50000x50000 pixels is over the limit of 100000000 pixels"},
		{mem("huge.jpg", testmedia.WithSize(j, 20000, 6000)), errs.TooLarge, "over the limit of 100000000 pixels"},
	}
	for _, c := range cases {
		r := addOne(t, l, c.up)
		if r == nil || r.Code != c.code || !strings.Contains(r.Reason, c.want) {
			t.Errorf("%s: rejection %+v, want %s containing %q", c.up.Name, r, c.code, c.want)
		}
	}
	for _, up := range []lake.Upload{mem("ok.jpg", j), mem("ok.png", p)} {
		if r := addOne(t, l, up); r != nil {
			t.Errorf("%s: refused: %+v", up.Name, r)
		}
	}
	small, _ := openLake(t, func(o *lake.Options) { o.MaxPixels = 64*48 - 1 })
	if r := addOne(t, small, mem("one-over.jpg", j)); r == nil || r.Code != errs.TooLarge || !strings.Contains(r.Reason, "3071 pixels") {
		t.Errorf("64x48 with a limit of 3071 pixels: %+v", r)
	}
}

// TestAddRefusesBidiNames: names with characters that reorder how they
// display ("photo\u202Egpj.exe" shows as "photoexe.jpg") are refused.
func TestAddRefusesBidiNames(t *testing.T) {
	l, _ := openLake(t)
	j := jpegBytes(t, 8, 8, 1)
	for _, name := range []string{"photo\u202Egpj.exe", "a\u202Ab.jpg", "a\u2066b.jpg", "a\u2069.jpg", "\u200Fa.jpg", "a\u200E.jpg"} {
		if r := addOne(t, l, mem(name, j)); r == nil || r.Code != errs.InvalidArgument || !strings.Contains(r.Reason, "bidirectional") {
			t.Errorf("%q: %+v", name, r)
		}
	}
	if r := addOne(t, l, mem("שלום-مرحبا.jpg", j)); r != nil {
		t.Errorf("right-to-left letters are fine: %+v", r)
	}
	if _, err := l.Add(context.Background(), lake.AddOptions{Collection: "c\u202E"}, []lake.Upload{mem("a.jpg", j)}); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("collection name with U+202E: %v", err)
	}
}

// nested is a JSON object depth levels deep: {"a":{"a":...{}}}.
func nested(depth int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1))
}

// TestMetadataDepthEveryWay: the 32-level limit holds for every way metadata
// reaches the lake from Go: upload metadata (import and the REST upload pass
// here), file and collection patches, and a collection's metadata set in an
// upload's transaction.
func TestMetadataDepthEveryWay(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t)
	res, err := l.Add(ctx, lake.AddOptions{Collection: "c"}, []lake.Upload{mem("a.jpg", jpegBytes(t, 8, 8, 1))})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	coll, _ := l.CollectionByName(ctx, "c")
	ways := map[string]func(json.RawMessage) error{
		"upload metadata": func(m json.RawMessage) error {
			_, err := l.Add(ctx, lake.AddOptions{Collection: "c", Metadata: m}, []lake.Upload{mem("b.jpg", jpegBytes(t, 8, 8, 2))})
			return err
		},
		"file patch": func(m json.RawMessage) error {
			_, err := l.PatchFileMetadata(ctx, res.Stored[0].UniqueName, m)
			return err
		},
		"collection patch": func(m json.RawMessage) error {
			_, err := l.PatchCollectionMetadata(ctx, coll.ID, m)
			return err
		},
		"upload collectionMetadata": func(m json.RawMessage) error { return lake.CheckCollectionMetadata("collectionMetadata", m) },
	}
	for name, set := range ways {
		if err := set(nested(lake.MaxMetadataDepth)); err != nil {
			t.Errorf("%s: %d levels refused: %v", name, lake.MaxMetadataDepth, err)
		}
		for _, depth := range []int{lake.MaxMetadataDepth + 1, 1000, 5000} {
			err := set(nested(depth))
			if errs.CodeOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), "deeper than 32 levels") {
				t.Errorf("%s: %d levels: %v", name, depth, err)
			}
		}
	}
}

// TestAddVideoErrorsSayWhatIsWrong: an unreadable video's reason is what
// ffprobe found, without the server's temp path or the demuxer's heap
// address; and an ffprobe that hangs is cut off by ProbeTimeout.
func TestAddVideoErrorsSayWhatIsWrong(t *testing.T) {
	l, dir := openLake(t)
	garbage := append([]byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41"), bytes.Repeat([]byte{0x5a, 0x13, 0xc7}, 1000)...)
	r := addOne(t, l, mem("clip.mp4", garbage))
	if r == nil || r.Code != errs.InvalidArgument || !strings.Contains(r.Reason, "Invalid data found when processing input") ||
		strings.Contains(r.Reason, dir) || strings.Contains(r.Reason, "/") || strings.Contains(r.Reason, "0x") {
		t.Errorf("garbage mp4: %+v", r)
	}

	hang := filepath.Join(t.TempDir(), "ffprobe")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	slow, _ := openLake(t, func(o *lake.Options) { o.FFprobe, o.ProbeTimeout = hang, 200*time.Millisecond })
	start := time.Now()
	r = addOne(t, slow, mem("clip.mp4", garbage))
	if took := time.Since(start); took > 5*time.Second || r == nil || !strings.Contains(r.Reason, "ffprobe took longer than 200ms") {
		t.Errorf("hanging ffprobe: %+v after %s", r, took)
	}
}

// TestReimportWritesNothing: re-adding files already in the collection
// decides the skip from their names and bytes without staging them. Every
// temp folder is replaced by a plain file, so staging anything fails, even
// as root; a file of a known name with new bytes is still stored.
func TestReimportWritesNothing(t *testing.T) {
	ctx := context.Background()
	l, dir := openLake(t)
	opt := lake.AddOptions{Collection: "c", SkipExisting: true}
	ups := []lake.Upload{mem("a.jpg", jpegBytes(t, 16, 16, 1)), mem("b.jpg", jpegBytes(t, 16, 16, 2)), mem("notes.txt", []byte("hi"))}
	if res, err := l.Add(ctx, opt, ups); err != nil || len(res.Stored) != 3 {
		t.Fatalf("first add: %+v %v", res, err)
	}
	tmp := filepath.Join(dir, "media", "tmp")
	shards, err := filepath.Glob(filepath.Join(tmp, "[0-9a-f][0-9a-f]"))
	if err != nil || len(shards) == 0 {
		t.Fatalf("temp folders: %v %v", shards, err)
	}
	for _, s := range shards {
		if err := os.Remove(s); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := l.Add(ctx, opt, ups)
	if err != nil || len(res.Skipped) != 3 || len(res.Stored)+len(res.Rejected) != 0 {
		t.Fatalf("re-add: stored %d skipped %d rejected %+v %v", len(res.Stored), len(res.Skipped), res.Rejected, err)
	}
	for _, s := range shards {
		os.Remove(s)
		os.Mkdir(s, 0o755)
	}
	res, err = l.Add(ctx, opt, []lake.Upload{mem("a.jpg", jpegBytes(t, 16, 16, 3)), mem("b.jpg", jpegBytes(t, 32, 32, 2))})
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("same names, new bytes: %+v %v", res, err)
	}
}

// TestMixedUploadTypesAndFrames: a collection takes its type from its media
// (the majority, images on a tie; other files do not count), and a file that
// is no image or video has no frameCount, nor adds to its collection's.
func TestMixedUploadTypesAndFrames(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t)
	xml := mem("000001.xml", []byte("<annotation/>"))
	res, err := l.Add(ctx, lake.AddOptions{Collection: "voc"}, []lake.Upload{mem("000001.jpg", jpegBytes(t, 8, 8, 1)), xml})
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := l.Add(ctx, lake.AddOptions{Collection: "notes"}, []lake.Upload{mem("a.txt", []byte("a"))}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]lake.CollectionType{"voc": lake.ImageCollection, "notes": lake.OtherCollection} {
		if c, err := l.CollectionByName(ctx, name); err != nil || c.Type != want {
			t.Errorf("%s: %+v %v; want %s", name, c, err, want)
		}
	}
	frames := map[string]bool{"frameCount": true}
	if d, err := l.FileDetails(ctx, res.Stored[1].UniqueName, frames); err != nil || d["frameCount"] != nil {
		t.Errorf("xml details %v %v; want frameCount null", d, err)
	}
	c, _ := l.CollectionByName(ctx, "voc")
	if d, err := l.CollectionDetails(ctx, c.ID, frames); err != nil || d["frameCount"] != int64(1) {
		t.Errorf("voc details %v %v; want 1 frame", d, err)
	}
}

// zeroTail reads a JPEG followed by zeros up to size bytes, counting what
// was read, without holding them: a zip bomb's bomb.jpg.
type zeroTail struct {
	head       []byte
	size, read int64
}

func (z *zeroTail) Read(p []byte) (int, error) {
	if z.read >= z.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.size-z.read))
	clear(p[:n])
	if z.read < int64(len(z.head)) {
		copy(p[:n], z.head[z.read:])
	}
	z.read += int64(n)
	return n, nil
}

func (z *zeroTail) Close() error { return nil }

// TestAddImageReadLimit: an image larger than an image check reads
// (vips.MaxCheckBytes, 64 MiB) is refused with too_large naming the limit,
// and never read whole: one named as an image is read no further than the
// limit, one known only by its bytes is not read back for libvips. The
// temp files are gone after.
func TestAddImageReadLimit(t *testing.T) {
	l, dir := openLake(t)
	j := jpegBytes(t, 64, 48, 1)
	for _, c := range []struct {
		name    string
		size    int64
		maxRead int64
	}{
		{"bomb.jpg", 1 << 30, 64<<20 + 64<<10},
		{"bomb.bin", 64<<20 + 1, 64<<20 + 1},
	} {
		z := &zeroTail{head: j, size: c.size}
		r := addOne(t, l, lake.Upload{Name: c.name, Open: func() (io.ReadCloser, error) { return z, nil }})
		if r == nil || r.Code != errs.TooLarge || !strings.Contains(r.Reason, "67108864 bytes (64 MiB) an image check reads") {
			t.Errorf("%s of %d bytes: rejection %+v, want too_large naming the 64 MiB an image check reads", c.name, c.size, r)
		}
		if z.read > c.maxRead {
			t.Errorf("%s: %d bytes read, want at most %d", c.name, z.read, c.maxRead)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "media", "tmp", "*", "in-*"))
	if len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
	if r := addOne(t, l, mem("ok.jpg", j)); r != nil {
		t.Errorf("a small JPEG after them: %+v", r)
	}
}
