package appliance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/format"
)

// listVersion is a version as Dataset List sends it, read raw.
type listVersion struct {
	VersionID       string          `json:"versionId"`
	CreatedBy       string          `json:"createdBy"`
	VersionDetails  string          `json:"versionDetails"`
	Status          string          `json:"status"`
	JobID           string          `json:"jobId"`
	Error           string          `json:"error"`
	Labels          []string        `json:"labels"`
	ExportTypes     []string        `json:"exportTypes"`
	DownloadFormats []string        `json:"downloadFormats"`
	BaseVersionID   string          `json:"baseVersionId"`
	Augmentation    json.RawMessage `json:"augmentationList"`
	Source          *struct {
		CollectionID string `json:"collection_id"`
		Query        string `json:"query"`
	} `json:"source"`
	StatsSummary struct{ TotalFrames int }     `json:"statsSummary"`
	Stats        struct{ AugmentedFrames int } `json:"stats"`
	BuiltAt      *time.Time                    `json:"builtAt"`
}

// datasetList reads Dataset List over HTTP: version id -> version, and the
// group names in the order listed.
func (e *env) datasetList(t *testing.T) (map[string]listVersion, []string) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.base+"/api/v1/datasets", nil)
	req.SetBasicAuth(e.wkey, e.wsecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var groups []struct {
		Name        string        `json:"name"`
		VersionList []listVersion `json:"versionList"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&groups); err != nil || resp.StatusCode != 200 {
		t.Fatalf("dataset list: %d %v", resp.StatusCode, err)
	}
	out := map[string]listVersion{}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
		for _, v := range g.VersionList {
			out[v.VersionID] = v
		}
	}
	return out, names
}

// TestDatasetListShowsEveryVersion: Dataset List shows every version from
// the moment it is created, with its latest build's status and job:
// building while queued, cancelled, failed with the reason, ready once built.
func TestDatasetListShowsEveryVersion(t *testing.T) {
	e := start(t, appliance.Config{JobWorkers: -1}) // builds wait until the workers start below
	fx := datasetFixture(t, e)
	ctx := context.Background()
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"},
		ExportTypes: []string{"yolo darknet", "RAW", "YOLO Darknet"}}
	queued, err := e.write.CreateDatasetFromCollection(ctx, "queued", fx.colls["cars"], spec)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := e.datasetList(t)
	v := list[queued.VersionID]
	if v.Status != "building" || v.JobID != queued.JobID || v.StatsSummary.TotalFrames != 0 || v.BuiltAt != nil ||
		!strings.Contains(v.VersionDetails, "not built yet") || v.CreatedBy != "write" {
		t.Errorf("queued version %+v", v)
	}
	// export_types are the advertised formats: canonical, once each, offered first.
	if !slices.Equal(v.ExportTypes, []string{"YOLO Darknet", "RAW"}) || len(v.DownloadFormats) != len(format.ExportTypes()) ||
		!slices.Equal(v.DownloadFormats[:2], v.ExportTypes) {
		t.Errorf("formats %v, offered %v", v.ExportTypes, v.DownloadFormats)
	}

	cancelled, err := e.write.CreateDatasetFromCollection(ctx, "cancelled", fx.colls["extra"], spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.write.CancelJob(ctx, cancelled.JobID); err != nil {
		t.Fatal(err)
	}
	// The augmenting build cannot read an image whose bytes are gone.
	f, _ := e.a.Lake.File(ctx, fx.names["cars"][5])
	path, _, _ := e.a.Lake.Store().Local(ctx, f.Blob, f.Ext) // the blob itself: media is local
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	spec.AugmentationList = json.RawMessage(flipConfig)
	failed, err := e.write.CreateDatasetFromCollection(ctx, "failed", fx.colls["cars"], spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.a.Jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.a.Jobs.Stop(context.Background()) })
	for _, id := range []string{queued.JobID, failed.JobID} {
		if _, err := e.read.WaitJob(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	list, names := e.datasetList(t)
	if strings.Join(names, ",") != "failed,cancelled,queued" {
		t.Errorf("groups %v, want newest first", names)
	}
	for _, c := range []struct {
		b      client.DatasetBuild
		status string
		frames int
	}{{queued, "ready", 12}, {cancelled, "cancelled", 0}, {failed, "failed", 0}} {
		v := list[c.b.VersionID]
		if v.Status != c.status || v.JobID != c.b.JobID || v.StatsSummary.TotalFrames != c.frames {
			t.Errorf("%s: status %q job %s frames %d; want %s, job %s, %d frames", c.b.VersionID, v.Status, v.JobID,
				v.StatsSummary.TotalFrames, c.status, c.b.JobID, c.frames)
		}
	}
	if v := list[failed.VersionID]; !strings.Contains(v.Error, fx.names["cars"][5]) ||
		!strings.Contains(v.VersionDetails, "latest build failed") {
		t.Errorf("failed version %+v", v)
	}
	// A cancelled build is retried like a failed one.
	r := e.built(t)(e.write.RetryDatasetVersion(ctx, cancelled.VersionID))
	if list, _ := e.datasetList(t); list[cancelled.VersionID].Status != "ready" || list[cancelled.VersionID].JobID != r.JobID {
		t.Errorf("retried: %+v", list[cancelled.VersionID])
	}
	os.Rename(path+".away", path)
}

// TestDatasetUpdateKeepsAndRecords: an update whose query selects nothing is
// a 400 naming query that changes nothing; an update without
// augmentation_list keeps the source's augmentation (its augmented frames
// are made again) and export types; each version shows the query, labels
// and augmentation it used.
func TestDatasetUpdateKeepsAndRecords(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	var v1 client.DatasetBuild
	body := fmt.Sprintf(`{"dataset_name": "kept", "collection_id": %q, "labels": ["car"], "split_info": {"train": 100},
		"export_types": ["RAW"], "augmentation_list": %s}`, fx.colls["cars"], flipConfig)
	if err := e.rawJSON(t, "/api/v1/client/create_dataset_from_collection", body, &v1); err != nil {
		t.Fatal(err)
	}
	e.built(t)(v1, nil)
	for _, c := range []struct{ fn, body string }{
		{"update_dataset_version_from_datalake", fmt.Sprintf(`{"dataset_version_id": %q, "labels": ["car"],
			"split_info": {"train": 100}, "query": "name = nothing.jpg", "is_new_version_required": true}`, v1.VersionID)},
		{"update_dataset_version_from_datalake", fmt.Sprintf(`{"dataset_version_id": %q, "labels": ["bus"],
			"split_info": {"train": 100}, "query": "name = nothing.jpg"}`, v1.VersionID)},
		{"update_dataset_version_from_collection", fmt.Sprintf(`{"dataset_version_id": %q, "collection_id": %q,
			"labels": ["car"], "split_info": {"train": 100}, "query": "annotation.label = cat"}`, v1.VersionID, fx.colls["extra"])},
	} {
		status, eb := e.raw(t, "POST", "/api/v1/client/"+c.fn, "application/json", strings.NewReader(c.body))
		if status != 400 || eb["field"] != "query" || !strings.Contains(eb["message"], "holds no images") {
			t.Errorf("%s selecting nothing: %d %v", c.fn, status, eb)
		}
	}
	if n := e.rows(t, "dataset_version"); n != 1 {
		t.Errorf("%d versions after refused updates", n)
	}
	before, _ := e.datasetList(t)
	if v := before[v1.VersionID]; v.Status != "ready" || v.Stats.AugmentedFrames != 12 || v.Labels[0] != "car" {
		t.Errorf("source version changed by refused updates: %+v", v)
	}

	var v2 client.DatasetBuild
	if err := e.rawJSON(t, "/api/v1/client/update_dataset_version_from_datalake", fmt.Sprintf(`{"dataset_version_id": %q,
		"labels": ["car", "cat"], "split_info": {"train": 100}, "query": "collection = extra",
		"is_new_version_required": true, "augmentation_list": null}`, v1.VersionID), &v2); err != nil {
		t.Fatal(err)
	}
	e.built(t)(v2, nil)
	list, _ := e.datasetList(t)
	v := list[v2.VersionID]
	if v.StatsSummary.TotalFrames != 36 || v.Stats.AugmentedFrames != 18 || !slices.Equal(v.ExportTypes, []string{"RAW"}) {
		t.Errorf("update without augmentation_list: %d frames, %d augmented, formats %v; want 36, 18, [RAW]",
			v.StatsSummary.TotalFrames, v.Stats.AugmentedFrames, v.ExportTypes)
	}
	var aug any
	if json.Unmarshal(v.Augmentation, &aug) != nil || !strings.Contains(string(v.Augmentation), "FLIP_HORIZONTAL") ||
		v.Source == nil || v.Source.Query != "collection = extra" || v.BaseVersionID != v1.VersionID ||
		!slices.Equal(v.Labels, []string{"car", "cat"}) {
		t.Errorf("recorded: augmentation %s source %+v base %s labels %v", v.Augmentation, v.Source, v.BaseVersionID, v.Labels)
	}
	for _, want := range []string{`query "collection = extra"`, "labels car, cat", "augmentation FLIP_IMAGE", "36 frames"} {
		if !strings.Contains(v.VersionDetails, want) {
			t.Errorf("versionDetails %q lacks %q", v.VersionDetails, want)
		}
	}
	if one := list[v1.VersionID]; one.Source == nil || one.Source.CollectionID != fx.colls["cars"] {
		t.Errorf("version 1.0 source %+v", one.Source)
	}

	// A configuration replaces the source's: {} selects nothing, so no augmentation.
	var v3 client.DatasetBuild
	if err := e.rawJSON(t, "/api/v1/client/update_dataset_version_from_datalake", fmt.Sprintf(`{"dataset_version_id": %q,
		"labels": ["car"], "split_info": {"train": 100}, "query": "collection = cats", "is_new_version_required": true,
		"augmentation_list": {}, "export_types": []}`, v2.VersionID), &v3); err != nil {
		t.Fatal(err)
	}
	e.built(t)(v3, nil)
	list, _ = e.datasetList(t)
	if v := list[v3.VersionID]; v.Stats.AugmentedFrames != 0 || v.StatsSummary.TotalFrames != 21 ||
		string(v.Augmentation) != "null" || len(v.ExportTypes) != 0 || !strings.Contains(v.VersionDetails, "augmentation none") {
		t.Errorf("update with augmentation_list {}: %+v", v)
	}
	// A wrong exportFormat is not "required": it says the value is not allowed.
	status, eb := e.raw(t, "GET", "/api/v1/dataset-versions/"+v2.VersionID+"/data?exportFormat=coco", "", nil)
	if status != 400 || eb["field"] != "exportFormat" || strings.Contains(eb["message"], "required") ||
		!strings.Contains(eb["message"], `"coco" is not one of the allowed values`) {
		t.Errorf("exportFormat coco: %d %v", status, eb)
	}
	// download_dataset without export_type takes the first advertised format.
	req, _ := http.NewRequest("POST", e.base+"/api/v1/client/download_dataset",
		strings.NewReader(fmt.Sprintf(`{"version_id": %q, "is_media_include": false}`, v2.VersionID)))
	req.SetBasicAuth(e.wkey, e.wsecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cd := resp.Header.Get("Content-Disposition"); resp.StatusCode != 200 || !strings.Contains(cd, "-raw.zip") {
		t.Errorf("download without export_type: %d %q", resp.StatusCode, cd)
	}
	status, eb = e.raw(t, "POST", "/api/v1/client/download_dataset", "application/json",
		strings.NewReader(fmt.Sprintf(`{"version_id": %q}`, v3.VersionID)))
	if status != 400 || eb["field"] != "export_type" || !strings.Contains(eb["message"], "advertises no formats") {
		t.Errorf("download without export_type of a version advertising none: %d %v", status, eb)
	}
}
