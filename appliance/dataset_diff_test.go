package appliance_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/lake"
)

func TestDatasetVersionDiff(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 40, Test: 30, Validation: 30},
		Labels: []string{"car", "bus", "person"}}
	v1 := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "diffed", fx.colls["cars"], spec))

	// Between the builds: cars00's car box moves, cars01's goes, cars02 gets
	// a second car far from the first.
	l := e.a.Lake
	err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		for i, boxes := range [][]lake.Box{
			{{Label: "car", X: 3, Y: 3, W: 10, H: 8, Source: lake.Human}},
			nil,
			{{Label: "car", X: 2, Y: 3, W: 10, H: 8, Source: lake.Human}, {Label: "car", X: 40, Y: 30, W: 5, H: 5, Source: lake.Human}},
		} {
			f, err := l.File(ctx, fx.names["cars"][i])
			if err != nil {
				return err
			}
			if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Human, "prj_a", 0, boxes); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v2 := e.built(t)(e.write.UpdateDatasetVersionFromCollection(ctx, v1.VersionID, fx.colls["extra"], true, spec))

	d, err := e.read.DiffDatasetVersions(ctx, v1.VersionID, v2.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	f := d.Frames
	if f.Added != 6 || f.Removed != 0 || f.Moved != 0 || f.Kept != 12 || f.BoxesChanged != 3 || !d.SameDataset ||
		len(d.AddedNames) != 6 || len(d.RemovedNames) != 0 || len(d.Moves) != 0 {
		t.Errorf("frames %+v same %v added %v", f, d.SameDataset, d.AddedNames)
	}
	// car: 6 new frames' boxes and cars02's second added, cars01's removed,
	// cars00's changed, cars02's first and cars03..11's as they were; bus (cars 0, 3, 6, 9) and
	// person (0, 4, 8) unchanged.
	for label, want := range map[string]client.BoxChanges{
		"car":    {Added: 7, Removed: 1, Changed: 1, Unchanged: 10},
		"bus":    {Unchanged: 4},
		"person": {Unchanged: 3},
	} {
		if d.Boxes[label] != want {
			t.Errorf("%s boxes %+v, want %+v", label, d.Boxes[label], want)
		}
	}
	if d.From.Stats.TotalFrames != 12 || d.To.Stats.TotalFrames != 18 || d.From.VersionNo != "1.0" || d.To.VersionNo != "2.0" {
		t.Errorf("sides %+v / %+v", d.From, d.To)
	}

	// Re-bucketing everything into train moves every frame not in train.
	v3 := e.built(t)(e.write.CreateDatasetVersion(ctx, v1.DatasetID, 100, 0, 0))
	d, err = e.read.DiffDatasetVersions(ctx, v2.VersionID, v3.VersionID)
	if err != nil {
		t.Fatal(err)
	}
	notTrain := 18 - d.From.Stats.Splits["train"].Frames
	moved := 0
	for pair, n := range d.MovedBetween {
		if !strings.HasSuffix(pair, "->train") {
			t.Errorf("moved %s", pair)
		}
		moved += n
	}
	if notTrain == 0 || d.Frames.Moved != notTrain || moved != notTrain || len(d.Moves) != notTrain ||
		d.Frames.Added+d.Frames.Removed+d.Frames.BoxesChanged != 0 || d.Boxes["car"].Unchanged != 18 {
		t.Errorf("re-bucketed: %+v moved %v (%d not in train)", d.Frames, d.MovedBetween, notTrain)
	}

	// Backwards, and against another dataset.
	d, err = e.read.DiffDatasetVersions(ctx, v2.VersionID, v1.VersionID)
	if err != nil || d.Frames.Removed != 6 || d.Boxes["car"].Removed != 7 || d.Boxes["car"].Added != 1 {
		t.Errorf("backwards: %+v %+v %v", d.Frames, d.Boxes, err)
	}
	cats := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "cats", fx.colls["cats"],
		client.DatasetSpec{SplitInfo: spec.SplitInfo, Labels: []string{"cat"}}))
	d, err = e.read.DiffDatasetVersions(ctx, v1.VersionID, cats.VersionID)
	if err != nil || d.SameDataset || d.Frames.Added != 3 || d.Frames.Removed != 12 || d.Boxes["cat"].Added != 3 {
		t.Errorf("other dataset: %+v %v", d.Frames, err)
	}

	for body, field := range map[string]string{
		`{"from_version_id": "dsv_nope", "to_version_id": "` + v1.VersionID + `"}`: "from_version_id",
		`{"from_version_id": "` + v1.VersionID + `", "to_version_id": "dsv_nope"}`: "to_version_id",
		`{"from_version_id": "` + v1.VersionID + `"}`:                              "to_version_id",
	} {
		status, errBody := e.raw(t, "POST", "/api/v1/client/diff_dataset_versions", "application/json", strings.NewReader(body))
		if status/100 != 4 || errBody["field"] != field {
			t.Errorf("%s: %d %v, want a 4xx on %s", body, status, errBody, field)
		}
	}
}
