package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// TestBuildMovesShapes: a version built with a horizontal flip holds, on
// its augmented frame, the lake image's polygon, mask and keypoints
// mirrored (the mask's columns reversed, the keypoints' left and right
// names swapped by the label's declared flip pairs), each with its box; the
// version's statistics count the shapes of both frames by type.
func TestBuildMovesShapes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "t.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "lake", lake.Migrations); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "job", job.Migrations()); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "dataset", Migrations); err != nil {
		t.Fatal(err)
	}
	l, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"), SigningKey: []byte("0123456789abcdef0123456789abcdef"),
		BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 64, 48
	img := testmedia.JPEG(w, h, 1)
	res, err := l.Add(ctx, lake.AddOptions{Collection: "shapes"}, []lake.Upload{{Name: "a.jpg",
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(img)), nil }}})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("add: %+v %v", res, err)
	}
	f := res.Stored[0]
	bits := make([]byte, w*h) // columns 40..49, rows 5..14
	for x := 40; x < 50; x++ {
		for y := 5; y < 15; y++ {
			bits[x*h+y] = 1
		}
	}
	mask := &shape.EncodedMask{Size: [2]int{h, w}, Counts: shape.Encode(bits, h, w).String()}
	in := []lake.Box{
		{Label: "roof", Geometry: shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{{10, 10, 30, 10, 10, 20}}}},
		{Label: "puddle", Geometry: shape.Geometry{Type: shape.Mask, Mask: mask}},
		{Label: "hand", Geometry: shape.Geometry{Type: shape.Keypoints, Keypoints: []shape.Keypoint{
			{Name: "thumb_l", X: 20, Y: 30, V: 2}, {Name: "thumb_r", X: 30, Y: 30, V: 2}, {Name: "palm", X: 25, Y: 35, V: 1}}}},
	}
	if _, err := l.SetHumanBoxes(ctx, lake.ImportOperationPrefix+"t", []lake.FileBoxes{{UniqueName: f.UniqueName, Boxes: in}}); err != nil {
		t.Fatal(err)
	}
	hand := &shape.Skeleton{Names: []string{"thumb_l", "thumb_r", "palm"}, Flip: [][2]string{{"thumb_l", "thumb_r"}}}
	jobs := job.New(db, job.Options{Workers: 1})
	s := New(db, l, jobs, Options{Skeletons: func(_ context.Context, label string) (*shape.Skeleton, error) {
		if label == "hand" {
			return hand, nil
		}
		return nil, nil
	}})
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := jobs.Start(jctx); err != nil {
		t.Fatal(err)
	}
	col, err := l.CollectionByName(ctx, "shapes")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Create(ctx, NewDataset{Name: "d", Source: Source{CollectionID: col.ID}, CreatedBy: "me", Spec: Spec{
		Labels: []string{"roof", "puddle", "hand"}, Split: Split{Train: 100},
		Augmentation: json.RawMessage(`{"IMAGE_LEVEL": [{"id": "FLIP_IMAGE", "properties": [{"id": "FLIP_HORIZONTAL", "values": [true]}]}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := jobs.Wait(ctx, c.JobID); err != nil || j.Status != job.Completed {
		t.Fatalf("build: %+v %v", j, err)
	}
	page, err := s.Frames(ctx, c.VersionID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var aug *Frame
	for i := range page.Frames {
		if page.Frames[i].Augmented {
			aug = &page.Frames[i]
		}
	}
	if len(page.Frames) != 2 || aug == nil || len(aug.Boxes) != 3 {
		t.Fatalf("frames %+v", page.Frames)
	}
	byLabel := map[string]Box{}
	for _, b := range aug.Boxes {
		byLabel[b.Label] = b
	}
	if got, want := byLabel["roof"].Polygon, [][]float64{{54, 10, 34, 10, 54, 20}}; !reflect.DeepEqual(got, want) {
		t.Errorf("polygon %v, want %v", got, want)
	}
	if r := byLabel["roof"]; r.X != 34 || r.Y != 10 || r.W != 20 || r.H != 10 {
		t.Errorf("polygon's box %+v, want 34,10 20x10", r)
	}
	flipped := make([]byte, w*h) // columns 14..23
	for x := 14; x < 24; x++ {
		for y := 5; y < 15; y++ {
			flipped[x*h+y] = 1
		}
	}
	if got, want := byLabel["puddle"].Mask, shape.Encode(flipped, h, w).String(); got == nil || got.Counts != want {
		t.Errorf("mask %+v, want counts %q", got, want)
	}
	if r := byLabel["puddle"]; r.X != 14 || r.W != 10 {
		t.Errorf("mask's box %+v, want x 14 width 10", r)
	}
	wantKps := []shape.Keypoint{{Name: "thumb_r", X: 44, Y: 30, V: 2}, {Name: "thumb_l", X: 34, Y: 30, V: 2}, {Name: "palm", X: 39, Y: 35, V: 1}}
	if got := byLabel["hand"].Keypoints; !reflect.DeepEqual(got, wantKps) {
		t.Errorf("keypoints %v, want %v", got, wantKps)
	}
	v, err := s.Version(ctx, c.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"polygon": 2, "mask": 2, "keypoints": 2}; !reflect.DeepEqual(v.Stats.Shapes, want) {
		t.Errorf("version's shapes %v, want %v", v.Stats.Shapes, want)
	}
}
