package evaluate_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake"
)

// cocoInputs is a COCO file whose image ids (30, 10, 20) are not in the
// files' order (a, b, c), whose first annotation's area (500) is not its
// box's (40×40), and whose image 20 (c.png) has no annotation: labelled
// empty. The model's three boxes all score 0.9: a hit on a, a miss on b,
// one on c, which pycocotools counts as a false positive.
const cocoInputs = `{"images": [
 {"id": 30, "file_name": "a.png", "width": 200, "height": 200},
 {"id": 10, "file_name": "b.png", "width": 200, "height": 200},
 {"id": 20, "file_name": "c.png", "width": 200, "height": 200}],
 "annotations": [
 {"id": 1, "image_id": 30, "category_id": 1, "bbox": [10, 10, 40, 40], "area": 500, "iscrowd": 0},
 {"id": 2, "image_id": 10, "category_id": 1, "bbox": [50, 50, 40, 40], "area": 2000, "iscrowd": 0}],
 "categories": [{"id": 1, "name": "car"}]}`

// openCOCOInputs imports cocoInputs into a new lake as import:truth, the
// files stored in the order given (a different order stores them under
// other keys, as a parallel import may), and gives run_t its boxes.
func openCOCOInputs(t *testing.T, order ...string) *appliance.Appliance {
	t.Helper()
	ctx := context.Background()
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "images"), 0o755)
	for i, name := range []string{"a.png", "b.png", "c.png"} {
		img := image.NewRGBA(image.Rect(0, 0, 200, 200))
		img.Set(i, i, color.RGBA{R: uint8(50 * i), A: 255}) // distinct bytes
		var buf bytes.Buffer
		png.Encode(&buf, img)
		os.WriteFile(filepath.Join(src, "images", name), buf.Bytes(), 0o644)
	}
	os.WriteFile(filepath.Join(src, "annotations.json"), []byte(cocoInputs), 0o644)
	a, err := appliance.Open(ctx, appliance.Config{DataDir: filepath.Join(t.TempDir(), "lake"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	// Files first, in the order given; the import then labels them.
	for _, name := range order {
		if _, err := a.Lake.Add(ctx, lake.AddOptions{Collection: "truth"}, []lake.Upload{{Name: name,
			Open: func() (io.ReadCloser, error) { return os.Open(filepath.Join(src, "images", name)) }}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := labelimport.Run(ctx, src, labelimport.Options{Collection: "truth", Format: format.COCO},
		labelimport.LakeSink(a.Lake, a.Annotate, "truth"), a.Annotate); err != nil {
		t.Fatal(err)
	}
	seqs := map[string]int64{}
	rows, err := a.Lake.DB().R.QueryContext(ctx, `SELECT seq, name FROM file`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var seq int64
		var name string
		rows.Scan(&seq, &name)
		seqs[name] = seq
	}
	rows.Close()
	conf := 0.9
	model := map[string]lake.Box{"a.png": {Label: "car", X: 10, Y: 10, W: 40, H: 40, Confidence: &conf},
		"b.png": {Label: "car", X: 100, Y: 100, W: 40, H: 40, Confidence: &conf},
		"c.png": {Label: "car", X: 0, Y: 0, W: 40, H: 40, Confidence: &conf}}
	err = a.Lake.DB().Tx(ctx, func(tx *sql.Tx) error {
		for name, b := range model {
			if err := lake.ReplaceBoxes(ctx, tx, seqs[name], lake.Machine, "run_t", 0, []lake.Box{b}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func runEvaluation(t *testing.T, a *appliance.Appliance, req evaluate.Request) evaluate.Result {
	t.Helper()
	ctx := context.Background()
	req.PredRunID = "run_t"
	id, err := a.Evaluate.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		j, err := a.Jobs.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == "failed" {
			t.Fatalf("evaluation failed: %s", j.Error)
		}
		if j.Status == "completed" {
			res, err := a.Evaluate.Get(ctx, req.Key)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("evaluation did not finish")
	return evaluate.Result{}
}

func closeTo(got, want float64) bool { return math.Abs(got-want) < 1e-12 }

// TestEvaluationFollowsCOCOInputs: what pycocotools computes on cocoInputs
// (worked by hand below from cocoeval.py's evaluateImg and accumulate), and
// the same whatever order the import stored the files in.
//
// Image ids sorted: 10 (b: a miss), 20 (c: labelled empty, its box a false
// positive), 30 (a: a hit); the tied boxes rank in that order: tp 0 0 1,
// fp 1 2 2, 2 human boxes: recall 0 0 .5, precision 0 0 1/3, made monotone
// 1/3 everywhere: 51 of 101 recall points read 1/3, at every threshold (the
// hit is exact). By area (COCO's): a's box (500) is small, b's (2000)
// medium; the model's boxes (1600) are medium, so in the small range the
// misses are left out and the hit counts alone.
func TestEvaluationFollowsCOCOInputs(t *testing.T) {
	want := 51.0 / 101 / 3
	// Stored by the import itself, or before it in two orders (the import
	// then labels files the lake has).
	for _, order := range [][]string{nil, {"a.png", "b.png", "c.png"}, {"c.png", "b.png", "a.png"}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			a := openCOCOInputs(t, order...)
			res := runEvaluation(t, a, evaluate.Request{Key: "coco", GTOperations: []string{"import:truth"}})
			if !closeTo(res.MAP, want) || !closeTo(res.AP50, want) {
				t.Errorf("mAP %v AP50 %v, want %v (pycocotools: b's miss, c's box, a's hit in image id order)", res.MAP, res.AP50, want)
			}
			if res.TieOrder != evaluate.TieImageID || res.TieImageIDs != 3 || res.AreaSource != evaluate.AreaAnnotation ||
				res.AnnotationAreas != 2 || res.VOCAP != evaluate.VOCAllPoints {
				t.Errorf("choices %q %d %q %d %q", res.TieOrder, res.TieImageIDs, res.AreaSource, res.AnnotationAreas, res.VOCAP)
			}
			tr := res.Truth
			if tr.Files != 3 || tr.Frames != 3 || tr.EmptyFrames != 1 || fmt.Sprint(tr.Operations) != "[import:truth]" || tr.Scope != "request" {
				t.Errorf("truth %+v", tr)
			}
			if l := res.Labels["car"]; l.TP != 1 || l.FP != 2 || l.FN != 1 {
				t.Errorf("car %+v: c's box is a false positive", l)
			}
			// Small by COCO's area: a's hit alone. Medium: b's box, missed.
			if !closeTo(res.MAPSmall, 1) || res.ARSmall != 1 || res.MAPMedium != 0 || res.ARMedium != 0 || res.ARLarge != -1 || res.MAPLarge != -1 {
				t.Errorf("small %v/%v medium %v/%v large %v/%v", res.MAPSmall, res.ARSmall, res.MAPMedium, res.ARMedium, res.MAPLarge, res.ARLarge)
			}
			// VOC over the same order: recall .5 at precision 1/3; all points 1/6, 11 points 6/11 of 1/3.
			if !closeTo(res.VOCAP50, 1.0/6) {
				t.Errorf("VOC_AP50 %v, want 1/6", res.VOCAP50)
			}
		})
	}
}

// TestEvaluationNamedChoices: each other choice is asked for by name and
// the result says it was used.
func TestEvaluationNamedChoices(t *testing.T) {
	a := openCOCOInputs(t, "c.png", "a.png", "b.png")
	// By file name: a's hit, b's miss, c's box: precision 1 up to recall .5.
	res := runEvaluation(t, a, evaluate.Request{Key: "files", GTOperations: []string{"import:truth"}, TieOrder: evaluate.TieFile,
		AreaSource: evaluate.AreaBox, VOCAP: evaluate.VOC07})
	if !closeTo(res.MAP, 51.0/101) || res.TieOrder != evaluate.TieFile || res.TieImageIDs != 0 {
		t.Errorf("tie order by file: mAP %v (want 51/101) %q %d", res.MAP, res.TieOrder, res.TieImageIDs)
	}
	// Every box is 40×40 = 1600: medium; nothing small.
	if res.AreaSource != evaluate.AreaBox || res.AnnotationAreas != 0 || res.MAPSmall != -1 || res.ARSmall != -1 || !closeTo(res.MAPMedium, 51.0/101) {
		t.Errorf("area by box: %q %d small %v/%v medium %v", res.AreaSource, res.AnnotationAreas, res.MAPSmall, res.ARSmall, res.MAPMedium)
	}
	// VOC07 over a hit then two misses: precision 1 at recall 0 ... .5: 6 of 11 points.
	if res.VOCAP != evaluate.VOC07 || !closeTo(res.VOCAP50, 6.0/11) {
		t.Errorf("voc07: %q %v, want 6/11", res.VOCAP, res.VOCAP50)
	}
	for _, bad := range []evaluate.Request{{TieOrder: "seq"}, {AreaSource: "mask"}, {VOCAP: "11"}} {
		bad.Key, bad.PredRunID = "bad", "run_t"
		if _, err := a.Evaluate.Start(context.Background(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestImportKeepsCOCOFacts: the import keeps COCO's area in its column and
// the image ids and the labelled-empty image in labelled_frame, and none of
// it in the boxes' attributes.
func TestImportKeepsCOCOFacts(t *testing.T) {
	a := openCOCOInputs(t, "a.png", "b.png", "c.png")
	ctx := context.Background()
	var got string
	err := a.Lake.DB().R.QueryRowContext(ctx, `SELECT group_concat(f.name || ':' || lf.frame || ':' || coalesce(lf.image_id, '-') || ':' ||
		coalesce((SELECT group_concat(a.area || '/' || a.attributes) FROM annotation a WHERE a.file_seq = f.seq AND a.source = 'human'), 'none'), ' ')
		FROM (SELECT * FROM labelled_frame ORDER BY image_id) lf JOIN file f ON f.seq = lf.file_seq WHERE lf.operation = 'import:truth'`).Scan(&got)
	if err != nil {
		t.Fatal(err)
	}
	if want := "b.png:0:10:2000.0/{} c.png:0:20:none a.png:0:30:500.0/{}"; got != want {
		t.Errorf("labelled frames %s, want %s", got, want)
	}
}

// TestEmptyLabelFileIsLabelledEmpty: in a YOLO folder an empty label file
// labels its image empty (judged: a model's box there is a false
// positive), where an image with no label file is not labelled (not
// judged); the same holds for a VOC file with no object.
func TestEmptyLabelFileIsLabelledEmpty(t *testing.T) {
	ctx := context.Background()
	for _, f := range []struct {
		format format.Format
		files  map[string]string
	}{
		{format.YOLO, map[string]string{"classes.txt": "car\n", "labels/empty.txt": "", "labels/boxed.txt": "0 0.5 0.5 0.2 0.2\n"}},
		{format.VOC, map[string]string{
			"Annotations/empty.xml": `<annotation><filename>empty.png</filename><size><width>200</width><height>200</height></size></annotation>`,
			"Annotations/boxed.xml": `<annotation><filename>boxed.png</filename><size><width>200</width><height>200</height></size>` +
				`<object><name>car</name><bndbox><xmin>10</xmin><ymin>10</ymin><xmax>50</xmax><ymax>50</ymax></bndbox></object></annotation>`}},
		{format.CVAT, map[string]string{"annotations.xml": `<?xml version="1.0" encoding="utf-8"?><annotations><version>1.1</version>` +
			`<meta><task><labels><label><name>car</name></label></labels></task></meta>` +
			`<image id="0" name="empty.png" width="200" height="200"></image>` +
			`<image id="1" name="boxed.png" width="200" height="200"><box label="car" xtl="10" ytl="10" xbr="50" ybr="50"></box></image>` +
			`</annotations>`}},
	} {
		t.Run(string(f.format), func(t *testing.T) {
			src := t.TempDir()
			imgDir := "images"
			if f.format == format.VOC {
				imgDir = "JPEGImages"
			}
			for i, name := range []string{"empty.png", "boxed.png", "unlabelled.png"} {
				img := image.NewRGBA(image.Rect(0, 0, 200, 200))
				img.Set(i, i, color.RGBA{G: uint8(60 * (i + 1)), A: 255})
				var buf bytes.Buffer
				png.Encode(&buf, img)
				os.MkdirAll(filepath.Join(src, imgDir), 0o755)
				os.WriteFile(filepath.Join(src, imgDir, name), buf.Bytes(), 0o644)
			}
			for name, body := range f.files {
				os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755)
				os.WriteFile(filepath.Join(src, name), []byte(body), 0o644)
			}
			a, err := appliance.Open(ctx, appliance.Config{DataDir: filepath.Join(t.TempDir(), "lake"),
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if _, err := labelimport.Run(ctx, src, labelimport.Options{Collection: "t", Format: f.format},
				labelimport.LakeSink(a.Lake, a.Annotate, "t"), a.Annotate); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := a.Lake.DB().R.QueryRowContext(ctx, `SELECT group_concat(name, ' ') FROM (SELECT f.name FROM labelled_frame lf
				JOIN file f ON f.seq = lf.file_seq WHERE lf.operation = 'import:t' ORDER BY f.name)`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != "boxed.png empty.png" {
				t.Errorf("labelled files %q, want boxed.png empty.png (unlabelled.png has no label file)", got)
			}
		})
	}
}

// TestLabelledOverHTTP: through PUT /api/v1/lake/annotations (what
// `framelake import --url` sends), a file given [] is labelled empty and
// judged, one given null is not labelled: an import's images without
// labels must not turn a model's boxes on them into false positives.
func TestLabelledOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a, err := appliance.Open(ctx, appliance.Config{DataDir: filepath.Join(t.TempDir(), "lake"), Addr: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	defer func() { cancel(); <-done; a.Close() }()
	k, secret, err := a.Keys.Create(ctx, "w", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(a.BaseURL(), k.Key, secret)
	var files []client.UploadFile
	for i, name := range []string{"empty.png", "unlabelled.png"} {
		img := image.NewRGBA(image.Rect(0, 0, 64, 64))
		img.Set(i, i, color.RGBA{B: uint8(90 * (i + 1)), A: 255})
		var buf bytes.Buffer
		png.Encode(&buf, img)
		files = append(files, client.UploadFile{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil }})
	}
	up, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "h"}, files...)
	if err != nil || len(up.Stored) != 2 {
		t.Fatalf("upload %+v %v", up, err)
	}
	if _, err := c.SetLakeAnnotations(ctx, "import:h", []client.FileBoxes{{UniqueName: up.Stored[0].UniqueName, Annotations: []client.Box{}},
		{UniqueName: up.Stored[1].UniqueName}}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := a.Lake.DB().R.QueryRowContext(ctx, `SELECT group_concat(f.name) FROM labelled_frame lf JOIN file f ON f.seq = lf.file_seq
		WHERE lf.operation = 'import:h'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "empty.png" {
		t.Errorf("labelled %q, want empty.png only", got)
	}
	// Its labels gone (null), the file is no longer labelled.
	if _, err := c.SetLakeAnnotations(ctx, "import:h", []client.FileBoxes{{UniqueName: up.Stored[0].UniqueName}}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.Lake.DB().R.QueryRowContext(ctx, `SELECT count(*) FROM labelled_frame WHERE operation = 'import:h'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d labelled frames left (%v)", n, err)
	}
}
