package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// TestShapesOverREST: Upload Files with Labelling takes a polygon, a mask,
// keypoints, a polyline and a class beside a box, through the real server;
// Download Annotations answers the box in annotations as docs/spec/rest.md shows it
// and the others in shapes, each with its type, shape, derived box and
// area. A malformed shape is a 400 naming labels, and the frame is not
// written.
func TestShapesOverREST(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	pid := e.project(t, client.ContentImage)
	up, err := e.write.InitializeUpload(ctx, pid, "batch-01", 2)
	if err != nil {
		t.Fatal(err)
	}
	geo := func(g shape.Geometry) client.Box { return client.Box{Label: "car", Geometry: g} }
	labels := []client.Box{carBox(1),
		geo(shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{10, 10, 30, 10, 30, 30, 10, 30}}}),
		geo(shape.Geometry{Type: shape.Mask, Mask: &shape.EncodedMask{Size: [2]int{48, 64}, Counts: shape.RLE{
			Height: 48, Width: 64, Counts: []uint32{0, 4, 3068}}.String()}}),
		geo(shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{{Name: "front", X: 5, Y: 6, V: 2}}}),
		geo(shape.Geometry{Type: shape.Polyline, Points: []float64{0, 40, 20, 44}}),
		{Label: "bus", Geometry: shape.Geometry{Type: shape.Class}},
	}
	bad := append(labels[:1:1], geo(shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{1, 1, 5, 5}}}))
	_, err = e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(1), Boxes: bad})
	if err == nil || !strings.Contains(err.Error(), "polygon ring 0 has 2 points") || !strings.Contains(err.Error(), "labels[1]") {
		t.Fatalf("a two-point polygon: %v", err)
	}
	if n := e.rows(t, "annotation"); n != 0 {
		t.Fatalf("the refused frame wrote %d annotations", n)
	}
	if _, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: jpegFrame(1), Boxes: labels}); err != nil {
		t.Fatal(err)
	}
	d, err := e.read.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: pid})
	if err != nil || len(d.Data) != 1 || len(d.Data[0].Frames) != 1 {
		t.Fatalf("download %+v %v", d, err)
	}
	fr := d.Data[0].Frames[0]
	if len(fr.Annotations) != 1 || fr.Annotations[0].Type != "" || fr.Annotations[0].Width != 10 {
		t.Errorf("annotations %+v: the box alone, as before", fr.Annotations)
	}
	if len(fr.Shapes) != 5 {
		t.Fatalf("shapes %+v", fr.Shapes)
	}
	want := []struct {
		typ        shape.Type
		x, y, w, h float64
		area       float64 // -1: none
	}{
		{shape.Polygon, 10, 10, 20, 20, 400},
		{shape.Mask, 0, 0, 1, 4, 4},
		{shape.Keypoints, 5, 6, 1e-6, 1e-6, 0}, // one point: the box of the lake's precision, no area
		{shape.Polyline, 0, 40, 20, 4, -1},
		{shape.Class, 0, 0, 64, 48, -1},
	}
	for i, w := range want {
		s := fr.Shapes[i]
		if s.Type != w.typ || s.X != w.x || s.Y != w.y || s.Width != w.w || s.Height != w.h ||
			(w.area < 0) != (s.Area == nil) || (s.Area != nil && *s.Area != w.area) {
			t.Errorf("shape %d: %+v (area %v), want %+v", i, s, s.Area, w)
		}
	}
	if fr.Shapes[0].Polygon == nil || fr.Shapes[1].Mask == nil || len(fr.Shapes[2].Keypoints) != 1 || len(fr.Shapes[3].Points) != 4 {
		t.Errorf("shapes lost their geometry: %+v", fr.Shapes)
	}
}

// TestShapesInDatasets: a version holds every shape as its box and no class
// label (a label on the whole frame is no object in it): a polygon and a
// class on one file, a box on another give 2 boxes, the polygon's its
// bounds.
func TestShapesInDatasets(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "s"},
		memFile("a.jpg", testmedia.JPEG(64, 48, 1)), memFile("b.jpg", testmedia.JPEG(64, 48, 2)))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("upload %+v %v", res, err)
	}
	poly := lake.Box{Label: "car", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{10, 10, 30, 10, 30, 30}}},
		Attributes: json.RawMessage(`{"occluded": true, "color": "red"}`)}
	night := lake.Box{Label: "night", Geometry: shape.Geometry{Type: shape.Class}}
	if _, err := e.a.Lake.SetHumanBoxes(ctx, "import:s", []lake.FileBoxes{
		{UniqueName: res.Stored[0].UniqueName, Boxes: []lake.Box{poly, night}},
		{UniqueName: res.Stored[1].UniqueName, Boxes: []lake.Box{{Label: "car", X: 1, Y: 2, W: 3, H: 4}}}}); err != nil {
		t.Fatal(err)
	}
	col, err := e.a.Lake.CollectionByName(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "shapes", col.ID, client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car", "night"}, ExportTypes: []string{"RAW"}}))
	boxes := map[string][]float64{}
	for _, fr := range e.frames(t, b.VersionID, "rcnn") {
		var anns []map[string]any
		if err := json.Unmarshal(fr.Annotations, &anns); err != nil {
			t.Fatal(err)
		}
		for _, a := range anns {
			boxes[fr.UniqueName] = append(boxes[fr.UniqueName], a["xmin"].(float64), a["ymin"].(float64),
				a["xmax"].(float64), a["ymax"].(float64))
			if a["label"] != "car" {
				t.Errorf("%s: a %v box", fr.UniqueName, a["label"])
			}
		}
	}
	if got := boxes[res.Stored[0].UniqueName]; len(got) != 4 || got[0] != 10 || got[2] != 30 || got[3] != 30 {
		t.Errorf("the polygon's box %v, want 10,10 to 30,30 and no class", got)
	}
	if n := len(boxes[res.Stored[1].UniqueName]); n != 4 {
		t.Errorf("b.jpg: %d numbers, want one box", n)
	}
	// The version's statistics count shapes by type; a box is stored as
	// versions always stored boxes (no type).
	groups, err := e.read.DatasetList(ctx)
	if err != nil || len(groups) != 1 {
		t.Fatal(groups, err)
	}
	v := groups[0].VersionList[0]
	if v.Stats.Shapes["box"] != 1 || v.Stats.Shapes["polygon"] != 1 || len(v.Stats.Shapes) != 2 {
		t.Errorf("stats shapes %v", v.Stats.Shapes)
	}
	// The polygon's attributes reach the export: CVAT's occluded flag and
	// its <attribute> elements.
	dir, err := e.read.DownloadDataset(ctx, b.VersionID, "CVAT", t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	var xml []byte
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "annotations.xml" {
			xml, err = os.ReadFile(p)
		}
		return err
	})
	if !bytes.Contains(xml, []byte(`occluded="1"`)) || !bytes.Contains(xml, []byte(`<attribute name="color">red</attribute>`)) {
		t.Errorf("the CVAT export lost the polygon's attributes:\n%s", xml)
	}
}
