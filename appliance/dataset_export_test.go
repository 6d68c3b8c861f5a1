package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

func TestDatasetDownloadArchive(t *testing.T) { onBothMedia(t, testDatasetDownloadArchive) }

func testDatasetDownloadArchive(t *testing.T, cfg appliance.Config) {
	e := start(t, cfg)
	fx := datasetFixture(t, e)
	ctx := context.Background()
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "Street Cars", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 50, Test: 50}, Labels: []string{"car"},
		AugmentationList: json.RawMessage(flipConfig)}))
	v := e.version(t, b.VersionID)
	dir := t.TempDir()
	got, err := e.read.DownloadDataset(ctx, b.VersionID, "RAW", dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(got) != dir || !strings.Contains(filepath.Base(got), "1.0") {
		t.Errorf("folder %s", got)
	}
	media := countFiles(t, got, ".jpg")
	if media != v.Stats.TotalFrames {
		t.Errorf("RAW archive holds %d images, version has %d frames", media, v.Stats.TotalFrames)
	}
	// Media as stored: a real frame's bytes are the upload's.
	orig, _ := e.a.Lake.File(ctx, fx.names["cars"][0])
	want, err := e.a.Lake.Store().ReadAll(ctx, orig.Blob, orig.Ext)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	filepath.WalkDir(got, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), fx.names["cars"][0]+".") {
			b, _ := os.ReadFile(p)
			found = bytes.Equal(b, want)
		}
		return nil
	})
	if !found {
		t.Errorf("%s not in the archive as stored", fx.names["cars"][0])
	}
	// Without media: annotations only, into a folder of the current directory.
	t.Chdir(t.TempDir())
	got, err = e.read.DownloadDataset(ctx, b.VersionID, "YOLO Darknet", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(got) != "." || countFiles(t, got, ".jpg") != 0 || countFiles(t, got, ".txt") < v.Stats.TotalFrames {
		t.Errorf("annotations only in %s: %d jpg, %d txt", got, countFiles(t, got, ".jpg"), countFiles(t, got, ".txt"))
	}
	if _, err := e.read.DownloadDataset(ctx, b.VersionID, "PDF", dir, true); client.CodeOf(err) != "invalid_argument" {
		t.Errorf("unknown export type: %v", err)
	}
	if _, err := e.read.DownloadDataset(ctx, "dsv_nope", "RAW", dir, true); client.CodeOf(err) != "not_found" {
		t.Errorf("unknown version: %v", err)
	}
}

func countFiles(t *testing.T, dir, ext string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ext) {
			n++
		}
		return nil
	})
	return n
}

// TestDatasetExportsMarkAugmented: every export of an augmented version says
// which frames are augmented and from which source. The sources are GIFs and
// their flips JPEGs, so naming a source's file needs the source's extension.
func TestDatasetExportsMarkAugmented(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	var ups []client.UploadFile
	for i := range 3 {
		ups = append(ups, memFile(fmt.Sprintf("sign%d.gif", i), gifImage(t, 40+8*i, 30)))
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "signs"}, ups...)
	if err != nil || len(res.Stored) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	coll, err := e.a.Lake.CollectionByName(ctx, "signs")
	if err != nil {
		t.Fatal(err)
	}
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "signs", coll.ID, client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"sign"}, AugmentationList: json.RawMessage(flipConfig)}))
	if st := e.version(t, b.VersionID).Stats; st.AugmentedFrames != 3 || st.TotalFrames != 6 {
		t.Fatalf("stats %+v", st)
	}
	want := map[string]string{} // augmented media file -> source media file
	for _, f := range e.frames(t, b.VersionID, "yolo") {
		if f.Augmented {
			if u, err := url.Parse(f.URL); err != nil || path.Ext(u.Path) != ".jpg" {
				t.Fatalf("augmented frame %s (%s): want a JPEG flip of a GIF", f.UniqueName, f.URL)
			}
			want[f.UniqueName+".jpg"] = f.DerivedFrom + ".gif"
		}
	}
	download := func(format string) string {
		t.Helper()
		dir, err := e.read.DownloadDataset(ctx, b.VersionID, format, t.TempDir(), false)
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// The list files name images and sources as the layout's split lists do.
	lists := func(dir string, want map[string]string, strip func(string) string) {
		t.Helper()
		got := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(readUnder(t, dir, "augmented/train.txt"))), "\n") {
			img, src, _ := strings.Cut(l, " ")
			got[strip(img)] = strip(src)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s augmented/train.txt: %v, want %v", dir, got, want)
		}
	}
	lists(download("YOLO Darknet"), want, func(p string) string { return strings.TrimPrefix(p, "train/") })
	stems := map[string]string{}
	for k, v := range want {
		stems[strings.TrimSuffix(k, ".jpg")] = strings.TrimSuffix(v, ".gif")
	}
	lists(download("Semantic Segmentation"), stems, func(p string) string { return p })

	var coco struct {
		Images []struct {
			FileName    string `json:"file_name"`
			Augmented   bool   `json:"augmented"`
			DerivedFrom string `json:"derived_from"`
		} `json:"images"`
	}
	if err := json.Unmarshal(readUnder(t, download("COCO"), "train/annotations.json"), &coco); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, im := range coco.Images {
		if im.Augmented {
			got[im.FileName] = im.DerivedFrom
		} else if im.DerivedFrom != "" {
			t.Errorf("real image %+v has a source", im)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("COCO augmented images %v, want %v", got, want)
	}
	voc := download("Pascal VOC")
	for img, src := range want {
		x := string(readUnder(t, voc, "Annotations/"+strings.TrimSuffix(img, ".jpg")+".xml"))
		if !strings.Contains(x, "<augmented>1</augmented>") || !strings.Contains(x, "<derived_from>"+src+"</derived_from>") {
			t.Errorf("VOC annotation of %s:\n%s", img, x)
		}
	}
}

// gifImage is a w x h GIF, a format augment does not write: flips are JPEGs.
func gifImage(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.RGBA{200, 30, 30, 255}})
	for x := range w / 2 {
		img.SetColorIndex(x, h/2, 1)
	}
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readUnder reads the one file under dir whose path ends in suffix.
func readUnder(t *testing.T, dir, suffix string) []byte {
	t.Helper()
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(filepath.ToSlash(p), "/"+suffix) {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("%d files %s under %s: %v", len(found), suffix, dir, found)
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
