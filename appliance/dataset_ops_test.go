package appliance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

func TestDatasetOperationList(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	labels := []string{"car", "bus", "person"}
	for _, c := range []struct {
		ops  []string
		want map[string]int
	}{
		{nil, map[string]int{"car": 12, "bus": 4, "person": 3}},
		{[]string{}, map[string]int{}},
		{[]string{"run_b"}, map[string]int{"bus": 4}},
		{[]string{"prj_a", "prj_c"}, map[string]int{"car": 12, "person": 3}},
	} {
		b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "ops", fx.colls["cars"], client.DatasetSpec{
			SplitInfo: client.SplitInfo{Train: 100}, Labels: labels, OperationList: c.ops}))
		got := boxLabels(t, e.frames(t, b.VersionID, "rcnn"))
		if len(got) != len(c.want) {
			t.Errorf("operation_list %v: boxes %v, want %v", c.ops, got, c.want)
		}
		for l, n := range c.want {
			if got[l] != n {
				t.Errorf("operation_list %v: boxes %v, want %v", c.ops, got, c.want)
			}
		}
		if len(e.frames(t, b.VersionID, "yolo")) != 12 {
			t.Errorf("operation_list %v: frames without boxes must stay", c.ops)
		}
	}
}

// TestDatasetOperationListKnowsProjectsAndRuns: a real project with no boxes
// yet and a real model run that found nothing are annotation sources, not
// unknown ids; an id that is neither (and that no annotation carries) is a
// 404 naming operation_list that creates nothing.
func TestDatasetOperationListKnowsProjectsAndRuns(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	prj, err := e.write.CreateProject(ctx, client.Project{Name: "not started", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	det := modelFolder(t, map[string]string{"code/inference.py": redDetector, "code/requirements.txt": "",
		"label_list.yaml": "- red_square\n", "model.pt": "weights"})
	if _, err := e.admin.RegisterModel(ctx, det, "reds", "autotagging"); err != nil {
		t.Fatal(err)
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "blank"},
		memFile("white1.png", redSquarePNG(100, 80, 0, 0, 0)), memFile("white2.png", redSquarePNG(90, 60, 0, 0, 0)))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	blank, err := e.a.Lake.CollectionByName(ctx, "blank")
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.write.AutoTagCollection(ctx, blank.ID, client.AnalysisOptions{ModelName: "reds"})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := e.write.WaitJob(ctx, run.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("run %+v %v", j, err)
	}
	if r, err := e.a.Analysis.Run(ctx, run.RunID); err != nil || r.Counts.Items != 2 || r.Counts.Boxes != 0 {
		t.Fatalf("the run must find nothing: %+v %v", r.Counts, err)
	}

	for _, c := range []struct {
		coll          string
		ops           []string
		frames, boxes int
	}{
		{fx.colls["cars"], []string{prj}, 12, 0},
		{blank.ID, []string{run.RunID}, 2, 0},
		{fx.colls["cars"], []string{prj, run.RunID, "prj_a"}, 12, 12},
	} {
		b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "known ops", c.coll, client.DatasetSpec{
			SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"}, OperationList: c.ops}))
		if st := e.version(t, b.VersionID).Stats; st.TotalFrames != c.frames || st.TotalBoxes != c.boxes {
			t.Errorf("operation_list %v: %d frames %d boxes, want %d and %d", c.ops, st.TotalFrames, st.TotalBoxes,
				c.frames, c.boxes)
		}
	}

	groups, err := e.read.DatasetList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"prj_nope", "run_nope"} {
		body := fmt.Sprintf(`{"dataset_name": "x", "collection_id": %q, "labels": ["car"],
			"split_info": {"train": 100}, "operation_list": [%q]}`, fx.colls["cars"], op)
		status, eb := e.raw(t, "POST", "/api/v1/client/create_dataset_from_collection", "application/json",
			strings.NewReader(body))
		if status != 404 || eb["field"] != "operation_list" || !strings.Contains(eb["message"], op) {
			t.Errorf("unknown operation %s: %d %v", op, status, eb)
		}
	}
	if after, err := e.read.DatasetList(ctx); err != nil || len(after) != len(groups) {
		t.Errorf("unknown operations created datasets: %d groups, was %d (%v)", len(after), len(groups), err)
	}
}
