package appliance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

// TestDatasetBlobOutlivesLakeFile: an augmented frame's bytes uploaded into
// the lake share its blob; deleting that lake file must not take the bytes
// from the dataset, which no file row names.
func TestDatasetBlobOutlivesLakeFile(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "kept", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"}, AugmentationList: json.RawMessage(flipConfig)}))
	var aug client.DatasetFrame
	for _, f := range e.frames(t, b.VersionID, "yolo") {
		if f.Augmented {
			aug = f
			break
		}
	}
	if aug.URL == "" {
		t.Fatal("no augmented frame")
	}
	get := func() (int, []byte) {
		resp, err := http.Get(aug.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	status, want := get()
	if status != 200 || len(want) == 0 {
		t.Fatalf("augmented frame: %d, %d bytes", status, len(want))
	}
	up, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "reuploads"}, memFile("aug.jpg", want))
	if err != nil || len(up.Stored) != 1 {
		t.Fatalf("re-upload: %+v %v", up, err)
	}
	if err := e.a.Lake.Delete(ctx, up.Stored[0].UniqueName); err != nil {
		t.Fatal(err)
	}
	if status, got := get(); status != 200 || !bytes.Equal(got, want) {
		t.Errorf("after deleting the lake file that shared its bytes: %d, %d bytes (want 200, %d)", status, len(got), len(want))
	}
}
