package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"regexp"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestUploadRefusesBadMedia: what the lake lets in over HTTP. Images whose
// end marker is intact but whose pixel data does not decode are 400s; an
// image over the pixel limit is a 413 naming the limit, decided from its
// header; an unreadable video's message names no server path or heap
// address; a name with a bidirectional override is a 400. Frame upload
// (Upload Files with Labelling) refuses the same images. Nothing is stored.
func TestUploadRefusesBadMedia(t *testing.T) {
	e := start(t, appliance.Config{MaxPixels: 1_000_000})
	var p bytes.Buffer
	png.Encode(&p, image.NewGray(image.Rect(0, 0, 40, 30)))
	img := testmedia.JPEG(64, 48, 1)
	mp4 := append([]byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41"), bytes.Repeat([]byte{0x5a, 0x13, 0xc7}, 1000)...)
	cases := []struct {
		name   string
		data   []byte
		status int
		want   string
	}{
		{"garbage-scan.jpg", testmedia.GarbageScanJPEG(img), 400, "not a decodable image"},
		{"garbage-idat.png", testmedia.GarbageIDATPNG(p.Bytes()), 400, "not a decodable image"},
		{"huge.png", testmedia.WithSize(p.Bytes(), 50000, 50000), 413, "50000x50000 pixels is over the limit of 1000000 pixels"},
		{"over.jpg", testmedia.WithSize(img, 1001, 1000), 413, "over the limit of 1000000 pixels"},
		{"clip.mp4", mp4, 400, "not a readable video (moov atom not found; Invalid data found when processing input)"},
		{"photo\u202Egpj.exe", img, 400, "bidirectional control character (U+202E)"},
	}
	for _, c := range cases {
		ctype, body := multipartBody(t, nil, map[string][]byte{c.name: c.data})
		status, eb := e.raw(t, "POST", "/api/v1/lake/files", ctype, body)
		if status != c.status || !strings.Contains(eb["message"], c.want) || strings.Contains(eb["message"], "/") ||
			heapAddress.MatchString(eb["message"]) {
			t.Errorf("%q: %d %v; want %d with %q and no path or address", c.name, status, eb, c.status, c.want)
		}
	}
	ctx := context.Background()
	up, err := e.write.InitializeUpload(ctx, e.project(t, client.ContentImage), "frames", 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases[:4] {
		_, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: memFile(c.name, c.data)})
		var ce *client.Error
		if !errorsAs(err, &ce) || ce.Status != c.status || !strings.Contains(ce.Message, c.want) {
			t.Errorf("frame %s: %v; want %d with %q", c.name, err, c.status, c.want)
		}
	}
	if n := e.rows(t, "file"); n != 0 {
		t.Errorf("%d files stored", n)
	}
}

var heapAddress = regexp.MustCompile(`0x[0-9a-f]{6,}`)

// nestedJSON is a JSON object depth levels deep.
func nestedJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// TestMetadataDepthOverHTTP: every way metadata comes in over HTTP keeps
// the 32-level limit with a 400 (33 to 1000 levels were stored, 5000 was a 500).
func TestMetadataDepthOverHTTP(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "c"}, memFile("a.jpg", testmedia.JPEG(8, 8, 1)))
	if err != nil {
		t.Fatal(err)
	}
	f := res.Stored[0]
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection"})
	if err != nil || len(colls) != 1 {
		t.Fatalf("collections %+v %v", colls, err)
	}
	ways := []struct {
		name, field string
		send        func(meta string) (int, map[string]string)
	}{
		{"upload metadata", "metadata", func(m string) (int, map[string]string) {
			ctype, body := multipartBody(t, map[string]string{"metadata": m}, map[string][]byte{"b.jpg": testmedia.JPEG(8, 8, 2)})
			return e.raw(t, "POST", "/api/v1/lake/files", ctype, body)
		}},
		{"upload collectionMetadata", "collectionMetadata", func(m string) (int, map[string]string) {
			ctype, body := multipartBody(t, map[string]string{"collectionName": "c", "collectionMetadata": m},
				map[string][]byte{"c.jpg": testmedia.JPEG(8, 8, 3)})
			return e.raw(t, "POST", "/api/v1/lake/files", ctype, body)
		}},
		{"file patch", "metadata", func(m string) (int, map[string]string) {
			return e.raw(t, "PATCH", "/api/v1/lake/files/"+f.UniqueName+"/metadata", "application/json", strings.NewReader(m))
		}},
		{"collection patch", "metadata", func(m string) (int, map[string]string) {
			return e.raw(t, "PATCH", "/api/v1/lake/collections/"+colls[0].ID+"/metadata", "application/json", strings.NewReader(m))
		}},
	}
	for _, w := range ways {
		for _, depth := range []int{33, 1000, 5000} {
			status, eb := w.send(nestedJSON(depth))
			if status != 400 || eb["field"] != w.field || !strings.Contains(eb["message"], "deeper than 32 levels") {
				t.Errorf("%s, %d levels: %d %v", w.name, depth, status, eb)
			}
		}
	}
	var n int
	e.a.Lake.DB().R.QueryRow("SELECT count(*) FROM file WHERE metadata != '{}'").Scan(&n)
	if n != 0 {
		t.Errorf("%d files with deep metadata stored", n)
	}
	if _, err := e.write.PatchFileMetadata(ctx, f.UniqueName, json.RawMessage(nestedJSON(32))); err != nil {
		t.Errorf("32 levels: %v", err)
	}
}
