package main_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/testmedia"
)

// TestWebAppPolish checks what issue 31 found a person would see in the web
// app (web/ui/test/polish.mjs in Chromium): a 500 x 375 image fitted to the
// item view's and the workspace's pane with labels that do not overlap; a query
// error keeping the last counts, greyed; a read key's workspace without
// drawing hints; model dropdowns as wide as their names; one entry per
// embedding model; grid captions that tell apart two files of one name;
// review crops with label and confidence, relabelled and rejected in bulk;
// label-next results with thumbnails; job progress that reads 100% only when
// done; a failed job's Retry; the sidebar saying which clause its counts
// ignore; a dataset's leakage. Like the other browser tests it fails, never
// skips, when Node, Chromium or playwright-core is missing.
func TestWebAppPolish(t *testing.T) {
	needBrowser(t)
	// With the system default models registered, the model dropdowns hold their long names (default-auto-tagging).
	s := startUIServer(t, "--models", builtModelsDir(t))
	crowd := `[{"label":"car","x":100,"y":100,"width":90,"height":60},{"label":"car","x":104,"y":103,"width":90,"height":60},
		{"label":"person","x":108,"y":106,"width":40,"height":90},{"label":"person","x":112,"y":109,"width":40,"height":90},
		{"label":"car","x":116,"y":112,"width":90,"height":60},{"label":"person","x":300,"y":200,"width":60,"height":120}]`
	labels := []string{crowd}
	for i := 1; i < 12; i++ {
		l := []string{"car", "person"}[i%2]
		labels = append(labels, fmt.Sprintf(`[{"label":%q,"x":%d,"y":40,"width":120,"height":100}]`, l, 20+10*i))
	}
	names := s.uploadLabelled(t, 500, 375, labels)
	s.machineBoxes(t, `collection = "batch"`)
	vecs := map[string][]float32{}
	for i, n := range names {
		vecs[n] = []float32{float32(i), float32(i%3) * 0.2, 1}
	}
	s.embeddings(t, vecs)

	// Two files named alike in two collections, with boxes of an import to review.
	same := map[string]string{}
	for i, col := range []string{"voc", "coco"} {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("files", "2011_000025.jpg")
		fw.Write(testmedia.JPEG(320, 240, 900+i))
		mw.WriteField("collectionName", col)
		mw.Close()
		var up struct{ Stored []struct{ UniqueName string } }
		s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, &up)
		same[col] = up.Stored[0].UniqueName
		s.call(t, s.admin, "PUT", "/api/v1/lake/annotations", "application/json", strings.NewReader(fmt.Sprintf(
			`{"operation":"import:%s","files":[{"uniqueName":%q,"annotations":[{"label":"dog","x":40,"y":30,"width":120,"height":100}]}]}`,
			col, same[col])), nil)
	}

	// A file with a class (a label on the whole frame) and a polygon: drawn
	// as a chip and as the polygon's box.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("files", "night.jpg")
	fw.Write(testmedia.JPEG(320, 240, 950))
	mw.WriteField("collectionName", "shapes")
	mw.Close()
	var up struct{ Stored []struct{ UniqueName string } }
	s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, &up)
	shapes := up.Stored[0].UniqueName
	s.call(t, s.admin, "PUT", "/api/v1/lake/annotations", "application/json", strings.NewReader(fmt.Sprintf(
		`{"operation":"import:shapes","files":[{"uniqueName":%q,"annotations":[{"label":"night","type":"class"},`+
			`{"label":"kite","type":"polygon","polygon":[[40,30,160,30,100,130]]}]}]}`, shapes)), nil)

	// A dataset whose build measured leakage.
	var ds struct{ DatasetID string }
	s.call(t, s.admin, "POST", "/api/v1/client/create_dataset_from_datalake", "application/json", strings.NewReader(
		`{"dataset_name":"streets","labels":["car","person"],"split_info":{"train":50,"test":50,"validation":0}}`), &ds)
	var leak map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; {
		var d map[string]any
		s.call(t, s.read, "GET", "/api/v1/datasets/"+ds.DatasetID, "", nil, &d)
		vs, _ := d["versionList"].([]any)
		if len(vs) > 0 {
			v := vs[len(vs)-1].(map[string]any)
			if v["status"] == "ready" {
				leak, _ = v["leakage"].(map[string]any)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("dataset not built: %v", d)
		}
		time.Sleep(300 * time.Millisecond)
	}

	failed := s.failedImport(t)
	var projects struct{ ProjectList []struct{ ProjectID string } }
	s.call(t, s.admin, "GET", "/api/v1/projects", "", nil, &projects)
	var tasks struct{ TaskList []struct{ ID string } }
	s.call(t, s.admin, "GET", "/api/v1/tasks?projectId="+projects.ProjectList[0].ProjectID, "", nil, &tasks)
	if len(tasks.TaskList) == 0 {
		t.Fatal("no task for the workspace")
	}
	key, secret := namedWriteKey(t, s.data, "curator")
	expect := map[string]any{"crowded": names[0], "names": names, "taskId": tasks.TaskList[0].ID, "same": same,
		"datasetId": ds.DatasetID, "leakage": leak, "failedJob": failed, "longModel": "default-auto-tagging",
		"shapes": shapes}
	out := s.browserCheck(t, "polish.mjs", map[string]string{"key": key, "secret": secret}, expect, shotsDir(t, "ui-polish"),
		"READ_KEY="+s.read["key"], "READ_SECRET="+s.read["secret"])
	if !strings.Contains(out, "polish checks passed") {
		t.Fatal("polish.mjs ended without passing")
	}
	// What the page changed, read back through the API.
	var dogs, cats struct{ PatchCount int }
	s.call(t, s.read, "GET", "/api/v1/lake/patches?label=dog", "", nil, &dogs)
	s.call(t, s.read, "GET", "/api/v1/lake/patches?label=cat", "", nil, &cats)
	if dogs.PatchCount != 0 || cats.PatchCount != 1 {
		t.Errorf("after the review's relabel and reject: %d dog and %d cat boxes, want 0 and 1", dogs.PatchCount, cats.PatchCount)
	}
}

// failedImport imports an archive of one unlabelled image as YOLO: a labelled
// format that finds no labels fails the job. It returns the job's id.
func (s *uiServer) failedImport(t *testing.T) string {
	t.Helper()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("plain.jpg")
	w.Write(testmedia.JPEG(64, 48, 7))
	zw.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "plain.zip")
	fw.Write(zb.Bytes())
	mw.WriteField("format", "yolo")
	mw.Close()
	var r struct {
		JobID string `json:"jobId"`
	}
	s.call(t, s.admin, "POST", "/api/v1/lake/imports", mw.FormDataContentType(), &body, &r)
	for deadline := time.Now().Add(60 * time.Second); ; {
		var j struct{ Status string }
		s.call(t, s.read, "GET", "/api/v1/jobs/"+r.JobID, "", nil, &j)
		if j.Status == "failed" {
			return r.JobID
		}
		if j.Status == "completed" || time.Now().After(deadline) {
			b, _ := json.Marshal(j)
			t.Fatalf("the yolo import of an unlabelled image did not fail: %s", b)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// TestWebAppMapFit: the embedding map fills its canvas on both axes, with a
// margin, when the server's layout is long and thin (vectors along a line),
// and its legend counts the lassoed points, not all of them
// (web/ui/test/mapfit.mjs in Chromium).
func TestWebAppMapFit(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	var labels []string
	for i := 0; i < 12; i++ {
		labels = append(labels, fmt.Sprintf(`[{"label":%q,"x":20,"y":40,"width":120,"height":100}]`, []string{"car", "person"}[i%2]))
	}
	names := s.uploadLabelled(t, 160, 120, labels)
	vecs := map[string][]float32{}
	for i, n := range names {
		vecs[n] = []float32{float32(i), float32(i%3) * 0.2, 1}
	}
	s.embeddings(t, vecs)
	var p map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; {
		s.call(t, s.read, "GET", "/api/v1/models/lens/projection", "", nil, &p)
		if st := p["projection"].(map[string]any)["status"]; st == "current" {
			break
		} else if st == "failed" || time.Now().After(deadline) {
			t.Fatalf("projection: %v", p["projection"])
		}
		time.Sleep(500 * time.Millisecond)
	}
	out := s.browserCheck(t, "mapfit.mjs", s.read, map[string]any{"points": len(names)}, shotsDir(t, "ui-mapfit"))
	if !strings.Contains(out, "map checks passed") {
		t.Fatal("mapfit.mjs ended without passing")
	}
}
