package appliance_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestLakeAnnotationsRoutes: PUT /lake/annotations sets an import's human
// boxes on lake files, the same boxes again change nothing, GET
// /lake/files/{uniqueName}/annotations reads them; a read key, an operation
// that is not import:..., a box outside the image, an unknown field and an
// unknown file are refused and change nothing.
func TestLakeAnnotationsRoutes(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "imp"}, memFile("a.jpg", testmedia.JPEG(64, 48, 1)))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	name := res.Stored[0].UniqueName
	boxes := []client.FileBoxes{{UniqueName: name, Annotations: []client.Box{
		{Label: "car", X: 1, Y: 2, Width: 30, Height: 20, Attributes: []byte(`{"occluded":true}`)}}}}
	if r, err := e.write.SetLakeAnnotations(ctx, "import:imp", boxes); err != nil || r.Changed != 1 {
		t.Fatalf("set: %+v %v", r, err)
	}
	if r, err := e.write.SetLakeAnnotations(ctx, "import:imp", boxes); err != nil || r.Changed != 0 || r.Unchanged != 1 {
		t.Fatalf("set again: %+v %v", r, err)
	}
	got, err := e.read.FileAnnotations(ctx, name)
	if err != nil || len(got) != 1 || got[0].Label != "car" || got[0].Width != 30 || got[0].Source != "human" ||
		got[0].Operation != "import:imp" || got[0].Attributes["occluded"] != true {
		t.Fatalf("read: %+v %v", got, err)
	}
	if other, err := e.read.FileAnnotations(ctx, name, "prj_other"); err != nil || len(other) != 0 {
		t.Errorf("operation filter: %+v %v", other, err)
	}
	refuse := func(c *client.Client, op string, fb []client.FileBoxes, status int, field string) {
		t.Helper()
		_, err := c.SetLakeAnnotations(ctx, op, fb)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != status || ce.Field != field {
			t.Errorf("%s %+v: %v, want %d naming %q", op, fb, err, status, field)
		}
	}
	refuse(e.read, "import:imp", boxes, 403, "")
	refuse(e.write, "prj_x", boxes, 400, "operation")
	outside := []client.FileBoxes{{UniqueName: name, Annotations: []client.Box{{Label: "car", X: 70, Y: 2, Width: 5, Height: 5}}}}
	refuse(e.write, "import:imp", outside, 400, "files[0].annotations[0]")
	refuse(e.write, "import:imp", []client.FileBoxes{{UniqueName: "nope"}}, 404, "")
	status, body := e.raw(t, "PUT", "/api/v1/lake/annotations", "application/json",
		strings.NewReader(`{"operation": "import:imp", "files": [{"uniqueName": "`+name+`", "annotations": [{"label": "car", "x": 1, "y": 1, "width": 2, "height": 2, "confidence": 0.5}]}]}`))
	if status != 400 || !strings.Contains(body["message"], "confidence") {
		t.Errorf("unknown field: %d %v", status, body)
	}
	if got, _ := e.read.FileAnnotations(ctx, name); len(got) != 1 || got[0].X != 1 {
		t.Errorf("after refusals: %+v", got)
	}
}
