package appliance_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestBuildKeepsIdenticalFilesInOneSplit (issue 31, item 5): a build put
// byte-identical images in train and test, and the leakage its job counted
// was not in the dataset's answers. Now each set of identical files lands in
// one split by default (keep_identical_together: false splits them as
// before), and GET /datasets/{id}, Dataset List and the version carry
// "leakage" at the top.
func TestBuildKeepsIdenticalFilesInOneSplit(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	var ups []client.UploadFile
	for i := range 8 {
		b := testmedia.JPEG(64, 48, 300+i)
		ups = append(ups, memFile(fmt.Sprintf("p%d-a.jpg", i), b), memFile(fmt.Sprintf("p%d-b.jpg", i), b))
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "twins"}, ups...)
	if err != nil || len(res.Stored) != 16 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	un := map[string]string{}
	for _, f := range res.Stored {
		un[f.Name] = f.UniqueName
	}
	crossingPairs := func(versionID string) int {
		t.Helper()
		splits := splitsOf(e.frames(t, versionID, "yolo"))
		n := 0
		for i := range 8 {
			if splits[un[fmt.Sprintf("p%d-a.jpg", i)]] != splits[un[fmt.Sprintf("p%d-b.jpg", i)]] {
				n++
			}
		}
		return n
	}
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 50, Test: 50}, Labels: []string{"x"}}
	b := e.built(t)(e.write.CreateDatasetFromDatalake(ctx, "twins", "", spec))
	if n := crossingPairs(b.VersionID); n != 0 {
		t.Errorf("default build: %d identical pairs split apart", n)
	}
	v := e.version(t, b.VersionID)
	if v.Leakage == nil || v.Leakage.Crossing != 0 || v.Leakage.Pairs < 8 {
		t.Errorf("version's leakage: %+v", v.Leakage)
	}

	spec.SplitIdentical = true
	b2 := e.built(t)(e.write.CreateDatasetFromDatalake(ctx, "twins split", "", spec))
	n := crossingPairs(b2.VersionID)
	if n == 0 {
		t.Fatal("with keep_identical_together false no pair crossed: the fixture proves nothing")
	}
	g, err := e.read.Dataset(ctx, b2.DatasetID)
	if err != nil || g.ID != b2.DatasetID || len(g.VersionList) != 1 {
		t.Fatalf("GET /datasets/%s: %+v %v", b2.DatasetID, g, err)
	}
	if l := g.VersionList[0].Leakage; l == nil || l.Crossing != n {
		t.Errorf("GET /datasets/{id} leakage: %+v, want %d crossing", l, n)
	}
	groups, err := e.read.DatasetList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, gr := range groups {
		for _, ver := range gr.VersionList {
			if ver.Leakage == nil {
				t.Errorf("Dataset List: version %s has no leakage", ver.VersionID)
			}
		}
	}
	if _, err := e.read.Dataset(ctx, "dsg_nope"); client.CodeOf(err) != "not_found" {
		t.Errorf("GET /datasets/dsg_nope: %v", err)
	}
}
