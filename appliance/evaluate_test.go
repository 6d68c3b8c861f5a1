package appliance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
)

// TestEvaluationOverHTTP: a real model run (the red-square detector in its
// Python worker) against human boxes drawn in an annotation project, through
// the server: figures, per-box outcomes, eval.<key>.* queries, file details,
// comparison, deletion, and label disagreements.
func TestEvaluationOverHTTP(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	det := modelFolder(t, map[string]string{"code/inference.py": redDetector, "code/requirements.txt": "",
		"label_list.yaml": "- red_square\n", "model.pt": "weights"})
	if _, err := e.admin.RegisterModel(ctx, det, "reds", "autotagging"); err != nil {
		t.Fatal(err)
	}
	pid, err := e.write.CreateProject(ctx, client.Project{Name: "squares", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "red_square"}, {Name: "blue_square"}}})
	if err != nil {
		t.Fatal(err)
	}
	up, err := e.write.InitializeUpload(ctx, pid, "sq", 3)
	if err != nil {
		t.Fatal(err)
	}
	square := func(label string, x, y, s float64) client.Box {
		return client.Box{Label: label, X: x, Y: y, Width: s, Height: s}
	}
	// hit: labelled where the square is; miss: labelled elsewhere (the model's
	// box is an fp, the human one an fn); wrong: the model's label differs.
	frames := []client.Frame{
		{File: memFile("hit.png", redSquarePNG(400, 300, 100, 60, 80)), Boxes: []client.Box{square("red_square", 100, 60, 80)}},
		{File: memFile("miss.png", redSquarePNG(400, 300, 20, 20, 50)), Boxes: []client.Box{square("red_square", 300, 200, 60)}},
		{File: memFile("wrong.png", redSquarePNG(400, 300, 200, 100, 90)), Boxes: []client.Box{square("blue_square", 200, 100, 90)}},
	}
	names := make([]string, len(frames))
	for i, f := range frames {
		r, err := e.write.UploadFrame(ctx, up.UploadID, f)
		if err != nil {
			t.Fatal(err)
		}
		names[i] = r.UniqueName
	}
	coll, err := e.a.Lake.CollectionByName(ctx, "sq")
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.write.AutoTagCollection(ctx, coll.ID, client.AnalysisOptions{ModelName: "reds"})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := e.write.WaitJob(ctx, run.JobID); err != nil || j.Status != "completed" {
		t.Fatalf("run: %+v %v", j, err)
	}

	ev := evaluate(t, e, client.EvaluationRequest{PredRunID: run.RunID, Key: "reds1", GTOperations: []string{pid}})
	red, blue := ev.Labels["red_square"], ev.Labels["blue_square"]
	if red.TP != 1 || red.FP != 2 || red.FN != 1 || blue.TP != 0 || blue.FP != 0 || blue.FN != 1 {
		t.Errorf("labels %+v", ev.Labels)
	}
	// red_square: one hit ranked among three boxes of equal score, 2 human boxes.
	if ev.MAP < 0 || ev.MAP > 0.5 || blue.AP != 0 || ev.VOCAP50 < 0 || ev.Params.IoU != 0.5 {
		t.Errorf("mAP %v blue AP %v VOC %v params %+v", ev.MAP, blue.AP, ev.VOCAP50, ev.Params)
	}
	wantConf := "[blue_square red_square background] [[0 1 0] [0 1 1] [0 1 0]]"
	if got := toText(ev.Confusion.Labels) + " " + toText(ev.Confusion.Matrix); got != wantConf {
		t.Errorf("confusion %s, want %s", got, wantConf)
	}
	if c := ev.PR["red_square"]; len(c.Recall) != 101 || len(c.Precision) != 101 {
		t.Errorf("pr %+v", ev.PR)
	}
	if got, _ := e.read.GetEvaluation(ctx, "reds1"); got.MAP != ev.MAP || got.Key != "reds1" {
		t.Errorf("get_evaluation %+v", got)
	}

	// Mistakes are queryable, sortable, and in the file details.
	count := func(q string) int {
		t.Helper()
		n, err := e.read.GetItemCountFromLake(ctx, "image", q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n[0].Count
	}
	if fp, tp, fn := count("eval.reds1.fp > 0"), count("eval.reds1.tp = 1"), count("eval.reds1.fn > 0"); fp != 2 || tp != 1 || fn != 2 {
		t.Errorf("fp>0 %d, tp=1 %d, fn>0 %d; want 2 1 2", fp, tp, fn)
	}
	items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image", Query: "eval.reds1.fp > 0"})
	if err != nil || len(items) != 2 {
		t.Errorf("list fp > 0: %+v %v", items, err)
	}
	d, err := e.read.GetFileDetails(ctx, names[1], map[string]bool{"evaluations": true})
	if err != nil || toText(d["evaluations"]) != "map[reds1:map[fn:1 fp:1 tp:0]]" || d["uniqueName"] != names[1] {
		t.Errorf("details %v %v", d, err)
	}
	// Each box's outcome: the blue human box and the red model box on it are a mismatch.
	boxes, err := e.read.GetEvaluationBoxes(ctx, "reds1", names[2])
	if err != nil || len(boxes.Boxes) != 2 {
		t.Fatalf("boxes %+v %v", boxes.Boxes, err)
	}
	h, m := boxes.Boxes[0], boxes.Boxes[1]
	if h.Source != "human" || h.Outcome != "fn" || !h.Mismatch || h.MatchID != m.ID || m.Outcome != "fp" || m.MatchID != h.ID ||
		h.IoU == nil || *h.IoU < 0.9 {
		t.Errorf("outcomes %+v %+v", h, m)
	}

	// A second evaluation, stricter, compared and deleted.
	if _, err := e.write.EvaluateDetections(ctx, client.EvaluationRequest{PredRunID: run.RunID, Key: "reds1"}); client.CodeOf(err) != "already_exists" {
		t.Errorf("same key: %v", err)
	}
	if _, err := e.write.EvaluateDetections(ctx, client.EvaluationRequest{PredRunID: run.RunID, Key: "no spaces"}); client.CodeOf(err) != "invalid_argument" {
		t.Errorf("bad key: %v", err)
	}
	if _, err := e.write.EvaluateDetections(ctx, client.EvaluationRequest{PredRunID: "run_nope", Key: "x"}); client.CodeOf(err) != "not_found" {
		t.Errorf("unknown run: %v", err)
	}
	evaluate(t, e, client.EvaluationRequest{PredRunID: run.RunID, Key: "strict", IoU: 0.99, Query: "name = hit.png"})
	cmp, err := e.read.CompareEvaluations(ctx, "reds1", "strict")
	if err != nil || len(cmp.Labels) != 2 || cmp.Labels[1].Label != "red_square" || cmp.Labels[1].A == nil || cmp.Labels[1].B == nil {
		t.Fatalf("compare %+v %v", cmp, err)
	}
	if list, err := e.read.ListEvaluations(ctx); err != nil || len(list) != 2 || list[0].Key != "strict" || list[0].Status != "completed" {
		t.Errorf("list %+v %v", list, err)
	}
	if err := e.write.DeleteEvaluation(ctx, "strict"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.read.GetEvaluation(ctx, "strict"); client.CodeOf(err) != "not_found" {
		t.Errorf("deleted: %v", err)
	}
	if n := count("eval.strict.tp >= 0"); n != 0 {
		t.Errorf("deleted evaluation still counts %d files", n)
	}

	// Label disagreements of the same run against every human box.
	jobID, err := e.write.FindLabelDisagreements(ctx, run.RunID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	j, err := e.write.WaitJob(ctx, jobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("disagreements: %+v %v", j, err)
	}
	dis, err := client.LabelDisagreementsOf(j)
	if err != nil || dis.Checked != 3 || dis.WithAny != 2 || dis.Missed != 1 || dis.Extra != 1 || dis.Mismatched != 1 ||
		len(dis.Files) != 2 || dis.Files[1].Mismatched[0].Human.Label != "blue_square" ||
		dis.Files[1].Mismatched[0].Predicted.Label != "red_square" || dis.Files[0].Extra[0].Confidence == nil {
		t.Errorf("disagreements %+v %v", dis, err)
	}
	if n := count("disagreement.count > 0"); n != 2 {
		t.Errorf("disagreement.count > 0: %d files, want 2", n)
	}

	// With no gt_operations and no files named, the truth is the files the
	// run covered (its collection sq), not every labelled file of the lake:
	// a labelled file elsewhere is not a miss of this run (issue 31).
	other, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "elsewhere"},
		memFile("other.png", redSquarePNG(400, 300, 10, 10, 40)))
	if err != nil || len(other.Stored) != 1 {
		t.Fatalf("upload %+v %v", other, err)
	}
	if _, err := e.write.SetLakeAnnotations(ctx, "import:elsewhere", []client.FileBoxes{{UniqueName: other.Stored[0].UniqueName,
		Annotations: []client.Box{square("red_square", 10, 10, 40)}}}); err != nil {
		t.Fatal(err)
	}
	ev = evaluate(t, e, client.EvaluationRequest{PredRunID: run.RunID, Key: "unscoped"})
	if tr := ev.Truth; tr.Scope != "run" || tr.CollectionID != coll.ID || tr.Files != 3 || tr.Frames != 3 ||
		toText(tr.Operations) != "["+pid+"]" {
		t.Errorf("truth %+v, want the run's 3 files judged against %s", tr, pid)
	}
	if red := ev.Labels["red_square"]; red.TP != 1 || red.FN != 1 {
		t.Errorf("red_square %+v: the file outside the run counted", red)
	}
	// Named truth keeps the request's scope: the lake's images, the import's file among them.
	ev = evaluate(t, e, client.EvaluationRequest{PredRunID: run.RunID, Key: "elsewhere", GTOperations: []string{"import:elsewhere"}})
	if tr := ev.Truth; tr.Scope != "request" || tr.Files != 1 || toText(tr.Operations) != "[import:elsewhere]" {
		t.Errorf("truth %+v", tr)
	}

	// "No objects" in the workspace labels the frame empty: still judged,
	// the model's box there now a false positive (pycocotools' rule).
	if _, err := e.write.ReplaceFrameAnnotations(ctx, pid, names[0], []client.Box{}); err != nil {
		t.Fatal(err)
	}
	ev = evaluate(t, e, client.EvaluationRequest{PredRunID: run.RunID, Key: "noobjects", GTOperations: []string{pid}})
	if tr, red := ev.Truth, ev.Labels["red_square"]; tr.Frames != 3 || tr.EmptyFrames != 1 || red.TP != 0 || red.FP != 3 || red.FN != 1 {
		t.Errorf("truth %+v red_square %+v: hit.png labelled empty, its model box a false positive", tr, red)
	}
}

// evaluate runs an evaluation to its end and returns the job's result.
func evaluate(t *testing.T, e *env, r client.EvaluationRequest) client.Evaluation {
	t.Helper()
	ctx := context.Background()
	jobID, err := e.write.EvaluateDetections(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	j, err := e.write.WaitJob(ctx, jobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("evaluation job: %+v %v", j, err)
	}
	var ev client.Evaluation
	if err := json.Unmarshal(j.Result, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func toText(v any) string { return fmt.Sprint(v) }
