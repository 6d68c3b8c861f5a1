package appliance_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// dsFixture is a small lake for datasets: 12 images in "cars", 6 in "extra",
// 3 in "cats". Every cars image has a human car box (project prj_a); every
// third a machine bus box (run_b); every fourth a human person box. Every
// extra image has a car box, every cats image a cat box.
type dsFixture struct {
	colls map[string]string   // collection name -> id
	names map[string][]string // collection name -> uniqueNames, upload order
}

const flipConfig = `{"IMAGE_LEVEL": [{"id": "FLIP_IMAGE", "properties": [{"id": "FLIP_HORIZONTAL", "values": [true]}]}]}`

func datasetFixture(t *testing.T, e *env) dsFixture {
	t.Helper()
	ctx := context.Background()
	fx := dsFixture{colls: map[string]string{}, names: map[string][]string{}}
	seed := 0
	for _, c := range []struct {
		name string
		n    int
	}{{"cars", 12}, {"extra", 6}, {"cats", 3}} {
		var ups []client.UploadFile
		for i := range c.n {
			seed++
			ups = append(ups, memFile(fmt.Sprintf("%s%02d.jpg", c.name, i), testmedia.JPEG(64, 48, seed)))
		}
		res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: c.name}, ups...)
		if err != nil || len(res.Stored) != c.n {
			t.Fatalf("upload %s: %+v %v", c.name, res, err)
		}
		for _, f := range res.Stored {
			fx.names[c.name] = append(fx.names[c.name], f.UniqueName)
		}
		col, err := e.a.Lake.CollectionByName(ctx, c.name)
		if err != nil {
			t.Fatal(err)
		}
		fx.colls[c.name] = col.ID
	}
	l := e.a.Lake
	conf := 0.8
	err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		put := func(name string, src lake.Source, op string, b lake.Box) error {
			f, err := l.File(ctx, name)
			if err != nil {
				return err
			}
			b.Source = src
			if src == lake.Machine {
				b.Confidence = &conf
			}
			return lake.ReplaceBoxes(ctx, tx, f.Seq(), src, op, 0, []lake.Box{b})
		}
		for i, n := range fx.names["cars"] {
			if err := put(n, lake.Human, "prj_a", lake.Box{Label: "car", X: 2, Y: 3, W: 10, H: 8}); err != nil {
				return err
			}
			if i%3 == 0 {
				if err := put(n, lake.Machine, "run_b", lake.Box{Label: "bus", X: 20, Y: 10, W: 12, H: 9}); err != nil {
					return err
				}
			}
			if i%4 == 0 {
				if err := put(n, lake.Human, "prj_c", lake.Box{Label: "person", X: 40, Y: 20, W: 6, H: 14}); err != nil {
					return err
				}
			}
		}
		for _, n := range fx.names["extra"] {
			if err := put(n, lake.Human, "prj_a", lake.Box{Label: "car", X: 5, Y: 5, W: 20, H: 10}); err != nil {
				return err
			}
		}
		for _, n := range fx.names["cats"] {
			if err := put(n, lake.Human, "prj_a", lake.Box{Label: "cat", X: 1, Y: 1, W: 30, H: 30}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// built returns a function that waits for a dataset build to complete:
// e.built(t)(e.write.CreateDatasetFromCollection(...)).
func (e *env) built(t *testing.T) func(client.DatasetBuild, error) client.DatasetBuild {
	return func(b client.DatasetBuild, err error) client.DatasetBuild {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		j, err := e.read.WaitJob(ctx, b.JobID)
		if err != nil || j.Status != "completed" {
			t.Fatalf("build %s: %+v %v", b.VersionID, j, err)
		}
		return b
	}
}

// frames reads every frame of a version through REST Download Dataset.
func (e *env) frames(t *testing.T, versionID, format string) []client.DatasetFrame {
	t.Helper()
	var out []client.DatasetFrame
	for i := 0; ; i++ {
		p, err := e.read.DownloadDatasetPage(context.Background(), versionID, format, i, 7)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Frames...)
		if len(p.Frames) < 7 {
			if len(out) != p.TotalFrames {
				t.Fatalf("paged %d frames, totalFrames %d", len(out), p.TotalFrames)
			}
			return out
		}
	}
}

// rawJSON posts a JSON body with the write key and decodes a 200 answer.
func (e *env) rawJSON(t *testing.T, path, body string, out any) error {
	t.Helper()
	req, _ := http.NewRequest("POST", e.base+path, strings.NewReader(body))
	req.SetBasicAuth(e.wkey, e.wsecret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

type rcnnBox struct {
	Label                  string
	XMin, YMin, XMax, YMax float64
}

func rcnn(t *testing.T, f client.DatasetFrame) []rcnnBox {
	t.Helper()
	var bs []rcnnBox
	if err := json.Unmarshal(f.Annotations, &bs); err != nil {
		t.Fatal(err)
	}
	return bs
}

func splitsOf(frames []client.DatasetFrame) map[string]string {
	m := map[string]string{}
	for _, f := range frames {
		m[f.UniqueName] = f.Split
	}
	return m
}

func boxLabels(t *testing.T, frames []client.DatasetFrame) map[string]int {
	n := map[string]int{}
	for _, f := range frames {
		for _, b := range rcnn(t, f) {
			n[b.Label]++
		}
	}
	return n
}

func (e *env) version(t *testing.T, id string) client.DatasetVersion {
	t.Helper()
	v, err := e.read.DatasetVersion(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDatasetFromCollectionListAndStats(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "streets", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 50, Test: 25, Validation: 25}, Labels: []string{"car", "bus"},
		ExportTypes: []string{"YOLO Darknet", "RAW"}}))
	if b.VersionNo != "1.0" || !strings.HasPrefix(b.DatasetID, "dsg_") {
		t.Fatalf("created %+v", b)
	}
	if j, _ := e.read.Job(ctx, b.JobID); j.Type != "dataset.build" || j.Total != 12 || j.Done != 12 || j.Progress != 100 {
		t.Errorf("build job %+v", j)
	}
	// Dataset List, raw: the fields of docs/spec/interface.md 2.4.
	req, _ := http.NewRequest("GET", e.base+"/api/v1/datasets", nil)
	req.SetBasicAuth(e.wkey, e.wsecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]any
	json.NewDecoder(resp.Body).Decode(&raw)
	resp.Body.Close()
	if len(raw) != 1 {
		t.Fatalf("list %v", raw)
	}
	for _, k := range []string{"id", "name", "createdAt", "versionList"} {
		if _, ok := raw[0][k]; !ok {
			t.Errorf("group lacks %s: %v", k, raw[0])
		}
	}
	rv := raw[0]["versionList"].([]any)[0].(map[string]any)
	for _, k := range []string{"versionId", "createdAt", "createdBy", "statsSummary", "versionNo", "versionDetails"} {
		if _, ok := rv[k]; !ok {
			t.Errorf("version lacks %s: %v", k, rv)
		}
	}
	if _, ok := rv["versionDetails"].(string); !ok || rv["createdBy"] != "write" {
		t.Errorf("versionDetails %v createdBy %v", rv["versionDetails"], rv["createdBy"])
	}

	groups, err := e.read.DatasetList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := groups[0].VersionList[0]
	// 12 frames, 12 car boxes and 4 bus boxes; person boxes are not in the labels.
	if groups[0].Name != "streets" || v.VersionNo != "1.0" || v.StatsSummary.TotalFrames != 12 ||
		v.StatsSummary.TotalBoxes != 16 || v.Status != "ready" {
		t.Fatalf("version %+v", v)
	}
	st := v.Stats
	if st.Labels["car"].Boxes != 12 || st.Labels["bus"].Boxes != 4 || st.Labels["bus"].Frames != 4 || len(st.Labels) != 2 {
		t.Errorf("label stats %+v", st.Labels)
	}
	sum := 0
	for _, s := range []string{"train", "test", "validation"} {
		sum += st.Splits[s].Frames
	}
	if sum != 12 || !strings.Contains(v.VersionDetails, "12 frames") || len(v.ExportTypes) != 2 {
		t.Errorf("splits %+v details %q export %v", st.Splits, v.VersionDetails, v.ExportTypes)
	}
	frames := e.frames(t, v.VersionID, "rcnn")
	counts := map[string]int{}
	for _, f := range frames {
		counts[f.Split]++
		if f.Augmented || f.Width != 64 || f.Height != 48 {
			t.Errorf("frame %+v", f)
		}
	}
	for s, n := range counts {
		if st.Splits[s].Frames != n {
			t.Errorf("split %s: %d frames listed, stats %d", s, n, st.Splits[s].Frames)
		}
	}
	if got := boxLabels(t, frames); got["car"] != 12 || got["bus"] != 4 || got["person"] != 0 {
		t.Errorf("boxes %v", got)
	}
	// The frame URLs are signed media links that work without a key.
	resp, err = http.Get(frames[0].URL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("frame url: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestDatasetFromLakeQueryAndItemTypes(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	cars := fx.names["cars"]
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 80, Test: 10, Validation: 10}, Labels: []string{"car"}}
	build := func(itemType, query string) []string {
		t.Helper()
		spec.Query = query
		b := e.built(t)(e.write.CreateDatasetFromDatalake(ctx, itemType+" "+query, itemType, spec))
		var names []string
		for _, f := range e.frames(t, b.VersionID, "yolo") {
			names = append(names, f.UniqueName)
		}
		sort.Strings(names)
		return names
	}
	// Buses are on cars00, 03, 06, 09: the only built dataset when item_type
	// dataset is asked below.
	if got, want := build("image", "annotation.label = bus"), []string{cars[0], cars[3], cars[6], cars[9]}; !slices.Equal(got, want) {
		t.Errorf("image, bus: %v, want %v", got, want)
	}
	// One query, three item types, three answers. Persons are on cars00, 04,
	// 08; of those only cars00 is a frame of a built dataset; the collection
	// holding persons is cars, with 12 images.
	person := "annotation.label = person"
	if got, want := build("dataset", person), []string{cars[0]}; !slices.Equal(got, want) {
		t.Errorf("dataset, person: %v, want %v", got, want)
	}
	if got, want := build("image", person), []string{cars[0], cars[4], cars[8]}; !slices.Equal(got, want) {
		t.Errorf("image, person: %v, want %v", got, want)
	}
	all := append([]string{}, cars...)
	sort.Strings(all)
	if got := build("image_collection", person); !slices.Equal(got, all) {
		t.Errorf("image_collection, person: %v, want the 12 of cars", got)
	}

	spec.Query = ""
	whole := e.built(t)(e.write.CreateDatasetFromDatalake(ctx, "all", "", spec))
	if v := e.version(t, whole.VersionID); v.Stats.TotalFrames != 21 || v.Stats.TotalBoxes != 18 {
		t.Errorf("whole lake: %+v", v.Stats)
	}
	spec.Query = "name ~ cars0"
	spec.Filter = &client.Filter{AnnotationTypes: []string{"machine"}}
	coll := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "filtered", fx.colls["cars"], spec))
	if v := e.version(t, coll.VersionID); v.Stats.TotalFrames != 4 { // cars00, 03, 06, 09 have machine boxes
		t.Errorf("collection with query and filter: %+v", v.Stats)
	}
}

func TestDatasetSplitsStableAcrossVersions(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 40, Test: 30, Validation: 30}, Labels: []string{"car"}}
	v1 := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "stable", fx.colls["cars"], spec))
	before := splitsOf(e.frames(t, v1.VersionID, "yolo"))
	seen := map[string]bool{}
	for _, s := range before {
		seen[s] = true
	}
	if len(seen) < 2 {
		t.Fatalf("12 files all in one split: %v", before)
	}

	// A new version from another collection with other percentages: old files
	// keep their split, new ones are added, version 1.0 is untouched.
	spec.SplitInfo = client.SplitInfo{Train: 10, Test: 10, Validation: 80}
	v2 := e.built(t)(e.write.UpdateDatasetVersionFromCollection(ctx, v1.VersionID, fx.colls["extra"], true, spec))
	if v2.VersionNo != "2.0" || v2.VersionID == v1.VersionID || v2.DatasetID != v1.DatasetID {
		t.Fatalf("new version %+v from %+v", v2, v1)
	}
	after := splitsOf(e.frames(t, v2.VersionID, "yolo"))
	if len(after) != 18 {
		t.Fatalf("version 2.0 has %d frames, want 18", len(after))
	}
	for n, s := range before {
		if after[n] != s {
			t.Errorf("%s moved from %s to %s", n, s, after[n])
		}
	}
	if again := splitsOf(e.frames(t, v1.VersionID, "yolo")); len(again) != 12 {
		t.Errorf("version 1.0 changed: %d frames", len(again))
	}

	// In place: the same version, its frames plus the new ones, splits kept.
	in := e.built(t)(e.write.UpdateDatasetVersionFromDatalake(ctx, v1.VersionID, "", false,
		client.DatasetSpec{SplitInfo: spec.SplitInfo, Labels: []string{"car"}, Query: "collection = cats"}))
	if in.VersionID != v1.VersionID || in.VersionNo != "1.0" {
		t.Fatalf("in place: %+v", in)
	}
	inPlace := splitsOf(e.frames(t, v1.VersionID, "yolo"))
	if len(inPlace) != 15 {
		t.Fatalf("in place: %d frames, want 15", len(inPlace))
	}
	for n, s := range before {
		if inPlace[n] != s {
			t.Errorf("in place: %s moved from %s to %s", n, s, inPlace[n])
		}
	}
	// The alias pair dataset_id + version_id names the source version too.
	body := fmt.Sprintf(`{"dataset_id": %q, "version_id": %q, "collection_id": %q, "labels": ["car"],
		"split_info": {"train": 100}, "is_new_version_required": true}`, v1.DatasetID, v1.VersionID, fx.colls["cats"])
	var alias client.DatasetBuild
	if err := e.rawJSON(t, "/api/v1/client/update_dataset_version_from_collection", body, &alias); err != nil {
		t.Fatalf("alias parameters: %v", err)
	}
	e.built(t)(alias, nil)
	// Create Dataset Version (REST) re-buckets every frame of the latest version.
	cv, err := e.write.CreateDatasetVersion(ctx, v1.DatasetID, 100, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cv.VersionNo != "4.0" {
		t.Errorf("next version %+v", cv)
	}
	e.built(t)(cv, nil)
	for n, s := range splitsOf(e.frames(t, cv.VersionID, "yolo")) {
		if s != "train" {
			t.Errorf("%s in %s after a 100/0/0 version", n, s)
		}
	}
	// Lowering train% moves files from train into validation, never into test.
	v5 := e.built(t)(e.write.CreateDatasetVersion(ctx, v1.DatasetID, 60, 30, 10))
	v6 := e.built(t)(e.write.CreateDatasetVersion(ctx, v1.DatasetID, 30, 30, 40))
	s5, s6 := splitsOf(e.frames(t, v5.VersionID, "yolo")), splitsOf(e.frames(t, v6.VersionID, "yolo"))
	for n, s := range s5 {
		if s6[n] != s && s6[n] != "validation" && s != "validation" {
			t.Errorf("%s moved from %s to %s when train went from 60%% to 30%%", n, s, s6[n])
		}
	}
	groups, _ := e.read.DatasetList(ctx)
	var nos []string
	for _, v := range groups[0].VersionList {
		nos = append(nos, v.VersionNo)
	}
	if strings.Join(nos, ",") != "1.0,2.0,3.0,4.0,5.0,6.0" {
		t.Errorf("versions %v", nos)
	}
}

func TestDatasetAugmentation(t *testing.T) { onBothMedia(t, testDatasetAugmentation) }

func testDatasetAugmentation(t *testing.T, cfg appliance.Config) {
	e := start(t, cfg)
	fx := datasetFixture(t, e)
	ctx := context.Background()
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "flipped", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 60, Test: 20, Validation: 20}, Labels: []string{"car"},
		AugmentationList: json.RawMessage(flipConfig)}))
	v := e.version(t, b.VersionID)
	train := v.Stats.Splits["train"]
	real := 12
	if v.Stats.AugmentedFrames != train.Frames-train.Augmented || v.Stats.TotalFrames != real+v.Stats.AugmentedFrames ||
		train.Augmented != v.Stats.AugmentedFrames || v.Stats.Splits["test"].Augmented != 0 {
		t.Fatalf("stats %+v", v.Stats)
	}
	if v.Stats.TotalBoxes != v.Stats.TotalFrames { // one car box on every frame, flips keep it
		t.Errorf("boxes %d, frames %d", v.Stats.TotalBoxes, v.Stats.TotalFrames)
	}
	frames := e.frames(t, b.VersionID, "rcnn")
	bySource := map[string]int{}
	for _, f := range frames {
		if !f.Augmented {
			continue
		}
		bySource[f.DerivedFrom]++
		if f.Split != "train" || !strings.HasPrefix(f.UniqueName, f.DerivedFrom+"-aug") {
			t.Errorf("augmented frame %+v", f)
		}
		bs := rcnn(t, f)
		if len(bs) != 1 || bs[0].XMin != 64-2-10 || bs[0].XMax != 64-2 || bs[0].YMin != 3 {
			t.Errorf("flipped box %+v", bs)
		}
		if !strings.Contains(string(f.Params), "FLIP_HORIZONTAL") {
			t.Errorf("params %s", f.Params)
		}
		resp, err := http.Get(f.URL)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(resp.Body)
		resp.Body.Close()
		if err != nil || resp.Header.Get("Content-Type") != "image/jpeg" || img.Bounds().Dx() != 64 {
			t.Errorf("augmented media: %v %s", err, resp.Header.Get("Content-Type"))
		}
	}
	for src, n := range bySource {
		if n != 1 { // a flip alone draws nothing: its second output would repeat the first
			t.Errorf("%s has %d augmented frames", src, n)
		}
	}
	// A range to draw from gives two different outputs per training frame.
	rot := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "turned", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"},
		AugmentationList: json.RawMessage(`{"IMAGE_LEVEL": [{"id": "IMAGE_ROTATION",
			"properties": [{"id": "PERCENTAGE_SCALE", "values": [-20, 20]}]}]}`)}))
	if st := e.version(t, rot.VersionID).Stats; st.AugmentedFrames != 24 || st.TotalFrames != 36 {
		t.Errorf("rotation: %+v", st)
	}
	// A rebuild in place (selecting only frames it has) makes the same bytes: the store gains nothing.
	blobs := e.blobs(t)
	e.built(t)(e.write.UpdateDatasetVersionFromDatalake(ctx, b.VersionID, "", false, client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 60, Test: 20, Validation: 20}, Labels: []string{"car"},
		Query: "collection = cars", AugmentationList: json.RawMessage(flipConfig)}))
	if after := e.blobs(t); after != blobs {
		t.Errorf("rebuild stored %d new blobs", after-blobs)
	}
	if again := e.frames(t, b.VersionID, "rcnn"); len(again) != len(frames) {
		t.Errorf("rebuild: %d frames, was %d", len(again), len(frames))
	}
}

func TestDatasetDownloadPagesPerFormat(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "formats", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"bus", "car"}}))
	p, err := e.read.DownloadDatasetPage(ctx, b.VersionID, "yolo", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.PageSize != 100 || p.TotalFrames != 12 || len(p.Frames) != 12 || strings.Join(p.Labels, ",") != "bus,car" {
		t.Fatalf("page %+v", p)
	}
	f := p.Frames[0] // cars00: a car and a bus box
	if f.UniqueName != fx.names["cars"][0] {
		t.Fatalf("first frame %s, want %s", f.UniqueName, fx.names["cars"][0])
	}
	var yolo []struct{ ClassID, CX, CY, W, H float64 }
	if err := json.Unmarshal(f.Annotations, &yolo); err != nil {
		t.Fatalf("yolo annotations %s: %v", f.Annotations, err)
	}
	sort.Slice(yolo, func(i, j int) bool { return yolo[i].ClassID < yolo[j].ClassID })
	if len(yolo) != 2 || yolo[0].ClassID != 0 || yolo[1].ClassID != 1 || yolo[1].CX != (2+5)/64.0 || yolo[1].W != 10/64.0 {
		t.Errorf("yolo %+v", yolo)
	}
	// tensorflow: classes from 1 in label order, corners normalized.
	p, err = e.read.DownloadDatasetPage(ctx, b.VersionID, "tensorflow", 0, 1)
	if err != nil || len(p.Frames) != 1 || p.Frames[0].UniqueName != fx.names["cars"][0] {
		t.Fatalf("tensorflow page %+v %v", p, err)
	}
	type tfBox struct {
		Label                  string
		ClassID                int
		XMin, YMin, XMax, YMax float64
	}
	var tf []tfBox
	if err := json.Unmarshal(p.Frames[0].Annotations, &tf); err != nil {
		t.Fatalf("tensorflow annotations %s: %v", p.Frames[0].Annotations, err)
	}
	sort.Slice(tf, func(i, j int) bool { return tf[i].ClassID < tf[j].ClassID })
	want := []tfBox{{"bus", 1, 20 / 64.0, 10 / 48.0, 32 / 64.0, 19 / 48.0}, {"car", 2, 2 / 64.0, 3 / 48.0, 12 / 64.0, 11 / 48.0}}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	if len(tf) != len(want) {
		t.Fatalf("tensorflow boxes %+v, want %+v", tf, want)
	}
	for i, w := range want {
		g := tf[i]
		if g.Label != w.Label || g.ClassID != w.ClassID || !near(g.XMin, w.XMin) || !near(g.YMin, w.YMin) ||
			!near(g.XMax, w.XMax) || !near(g.YMax, w.YMax) {
			t.Errorf("tensorflow box %+v, want %+v", g, w)
		}
	}
	if p, err = e.read.DownloadDatasetPage(ctx, b.VersionID, "rcnn", 3, 5); err != nil || len(p.Frames) != 0 ||
		p.PageIndex != 3 || p.TotalFrames != 12 {
		t.Errorf("page past the end: %+v %v", p, err)
	}
	for _, c := range []struct{ query, field string }{
		{"exportFormat=yolo&pageSize=10001", "pageSize"},
		{"exportFormat=coco", "exportFormat"},
		{"", "exportFormat"},
		{"exportFormat=yolo&pageIndex=-1", "pageIndex"},
	} {
		if status, eb := e.raw(t, "GET", "/api/v1/dataset-versions/"+b.VersionID+"/data?"+c.query, "", nil); status != 400 || eb["field"] != c.field {
			t.Errorf("%s: %d %v", c.query, status, eb)
		}
	}
	if status, eb := e.raw(t, "GET", "/api/v1/dataset-versions/dsv_nope/data?exportFormat=yolo", "", nil); status != 404 {
		t.Errorf("unknown version: %d %v", status, eb)
	}
}

func TestDatasetBadInputCreatesNothing(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	coll := fx.colls["cars"]
	base := fmt.Sprintf(`"dataset_name": "x", "collection_id": %q, "labels": ["car"]`, coll)
	split := `"split_info": {"train": 70, "test": 20, "validation": 10}`
	cases := []struct {
		fn, body string
		status   int
		field    string
	}{
		{"create_dataset_from_collection", `{` + base + `, "split_info": {"train": 70, "test": 20, "validation": 5}}`, 400, "split_info"},
		{"create_dataset_from_collection", `{` + base + `, "split_info": {"train": -10, "test": 100, "validation": 10}}`, 400, "split_info.train"},
		{"create_dataset_from_collection", `{` + base + `, "split_info": {"train": 100, "tst": 0}}`, 400, "tst"},
		{"create_dataset_from_collection", `{` + base + `}`, 400, "split_info"},
		{"create_dataset_from_collection", fmt.Sprintf(`{"dataset_name": "x", "collection_id": %q, %s}`, coll, split), 400, "labels"},
		{"create_dataset_from_collection", fmt.Sprintf(`{"dataset_name": "x", "collection_id": %q, "labels": [], %s}`, coll, split), 400, "labels"},
		{"create_dataset_from_collection", fmt.Sprintf(`{"dataset_name": "x", "collection_id": %q, "labels": ["a", "a"], %s}`, coll, split), 400, "labels[1]"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "export_types": ["PDF"]}`, 400, "export_types"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "augmentation_list": {"IMAGE_LEVEL": [{"id": "FLIP_IMAGE", "properties": [{"id": "SPIN", "values": [true]}]}]}}`, 400, "augmentation_list"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "augmentation_list": {"IMAGE_LEVEL": [{"id": "IMAGE_BLUR", "properties": [{"id": "BLUR", "values": [0, 99]}]}]}}`, 400, "augmentation_list"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "augmentation_list": {"PIXEL_LEVEL": []}}`, 400, "augmentation_list"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "operation_list": ["prj_nope"]}`, 404, "operation_list"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "query": "colour = red"}`, 400, "query"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "query": "name = nothing"}`, 400, "query"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "filter": {"annotation_types": ["drawn"]}}`, 400, "filter.annotation_types"},
		{"create_dataset_from_collection", `{` + base + `, ` + split + `, "colour": "red"}`, 400, "colour"},
		{"create_dataset_from_collection", `{"dataset_name": "x", "collection_id": "col_nope", "labels": ["car"], ` + split + `}`, 404, "collection_id"},
		{"create_dataset_from_collection", `{"dataset_name": "x", "labels": ["car"], ` + split + `}`, 400, "collection_id"},
		{"create_dataset_from_collection", fmt.Sprintf(`{"dataset_name": " ", "collection_id": %q, "labels": ["car"], %s}`, coll, split), 400, "dataset_name"},
		{"create_dataset_from_datalake", `{"dataset_name": "x", "labels": ["car"], "item_type": "video", ` + split + `}`, 400, "video_frames"},
		{"create_dataset_from_datalake", `{"dataset_name": "x", "labels": ["car"], "item_type": "video", "video_frames": {"sample": "some"}, ` + split + `}`, 400, "video_frames.sample"},
		{"create_dataset_from_datalake", `{"dataset_name": "x", "labels": ["car"], "item_type": "dataset", ` + split + `}`, 400, "item_type"},
		{"update_dataset_version_from_datalake", `{"dataset_version_id": "dsv_nope", "labels": ["car"], ` + split + `}`, 404, "dataset_version_id"},
		{"update_dataset_version_from_datalake", `{"labels": ["car"], ` + split + `}`, 400, "dataset_version_id"},
		{"update_dataset_version_from_collection", `{"version_id": "dsv_nope", "labels": ["car"], ` + split + `}`, 400, "collection_id"},
		{"download_dataset", `{"version_id": "dsv_nope", "export_type": "PDF"}`, 400, "export_type"},
		{"download_dataset", `{"version_id": "dsv_nope", "export_type": "RAW"}`, 404, "version_id"},
	}
	for _, c := range cases {
		status, eb := e.raw(t, "POST", "/api/v1/client/"+c.fn, "application/json", strings.NewReader(c.body))
		if status != c.status || eb["field"] != c.field || eb["message"] == "" {
			t.Errorf("%s %s: %d %v; want %d field %q", c.fn, c.body, status, eb, c.status, c.field)
		}
	}
	for _, c := range []struct {
		path, body string
		status     int
		field      string
	}{
		{"/api/v1/datasets/dsg_nope/versions", `{"trainingSetPercentage": 70, "testingSetPercentage": 20, "validationSetPercentage": 10}`, 404, "datasetGroupId"},
		{"/api/v1/datasets/dsg_nope/versions", `{"trainingSetPercentage": 70, "testingSetPercentage": 20, "validationSetPercentage": 20}`, 400, "validationSetPercentage"},
		{"/api/v1/datasets/dsg_nope/versions", `{"trainingSetPercentage": 70, "testingSetPercentage": 30}`, 400, "validationSetPercentage"},
		{"/api/v1/datasets/dsg_nope/versions", `{"trainingSetPercentage": 170, "testingSetPercentage": -70, "validationSetPercentage": 0}`, 400, "trainingSetPercentage"},
		{"/api/v1/datasets/dsg_nope/versions", `{"trainingSetPercentage": 70, "testingSetPercentage": 20, "validationSetPercentage": 10, "seed": 1}`, 400, "seed"},
	} {
		if status, eb := e.raw(t, "POST", c.path, "application/json", strings.NewReader(c.body)); status != c.status || eb["field"] != c.field {
			t.Errorf("%s %s: %d %v; want %d field %q", c.path, c.body, status, eb, c.status, c.field)
		}
	}
	if g, v, j := e.rows(t, "dataset_group"), e.rows(t, "dataset_version"), e.rows(t, "job"); g+v+j != 0 {
		t.Errorf("bad requests left %d groups, %d versions, %d jobs", g, v, j)
	}
	// A read key may list and download but not create.
	_, err := e.read.CreateDatasetFromCollection(context.Background(), "x", coll, client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"}})
	if client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key create: %v", err)
	}
}

func TestDatasetFailedBuildListedAndRetried(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	// Take one image's bytes away: the augmenting build cannot read it.
	f, _ := e.a.Lake.File(ctx, fx.names["cars"][5])
	path, _, _ := e.a.Lake.Store().Local(ctx, f.Blob, f.Ext) // the blob itself: media is local
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"},
		AugmentationList: json.RawMessage(flipConfig)}
	b, err := e.write.CreateDatasetFromCollection(ctx, "fragile", fx.colls["cars"], spec)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := e.read.WaitJob(ctx, b.JobID)
	if j.Status != "failed" || !strings.Contains(j.Error, fx.names["cars"][5]) {
		t.Fatalf("job %+v", j)
	}
	if groups, _ := e.read.DatasetList(ctx); len(groups) != 1 || groups[0].VersionList[0].Status != "failed" ||
		groups[0].VersionList[0].JobID != b.JobID {
		t.Errorf("failed build not listed as failed: %+v", groups)
	}
	if v := e.version(t, b.VersionID); v.Status != "failed" || v.Error == "" || v.StatsSummary.TotalFrames != 0 {
		t.Errorf("failed version %+v", v)
	}
	if _, err := e.read.DownloadDatasetPage(ctx, b.VersionID, "yolo", 0, 0); client.CodeOf(err) != "failed_precondition" {
		t.Errorf("frames of a failed version: %v", err)
	}
	if _, err := e.write.UpdateDatasetVersionFromCollection(ctx, b.VersionID, fx.colls["extra"], true, spec); client.CodeOf(err) != "failed_precondition" {
		t.Errorf("update of a version never built: %v", err)
	}
	if _, err := e.write.CreateDatasetVersion(ctx, b.DatasetID, 50, 50, 0); client.CodeOf(err) != "failed_precondition" {
		t.Errorf("new version of a group never built: %v", err)
	}

	os.Rename(path+".away", path)
	r := e.built(t)(e.write.RetryDatasetVersion(ctx, b.VersionID))
	if r.VersionID != b.VersionID || r.VersionNo != "1.0" || r.JobID == b.JobID {
		t.Errorf("retry %+v", r)
	}
	if _, err := e.write.RetryDatasetVersion(ctx, b.VersionID); client.CodeOf(err) != "failed_precondition" {
		t.Errorf("retry of a ready version: %v", err)
	}
	groups, _ := e.read.DatasetList(ctx)
	if len(groups) != 1 || groups[0].VersionList[0].StatsSummary.TotalFrames != 24 {
		t.Fatalf("after retry: %+v", groups)
	}

	// A failed in-place update leaves the version as it was.
	os.Rename(path, path+".away")
	u, err := e.write.UpdateDatasetVersionFromCollection(ctx, b.VersionID, fx.colls["extra"], false, spec)
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := e.read.WaitJob(ctx, u.JobID); j.Status != "failed" {
		t.Fatalf("update job %+v", j)
	}
	v := e.version(t, b.VersionID)
	if v.Status != "failed" || v.StatsSummary.TotalFrames != 24 || len(e.frames(t, b.VersionID, "yolo")) != 24 {
		t.Errorf("after a failed update: %+v", v)
	}
	os.Rename(path+".away", path)
	e.built(t)(e.write.RetryDatasetVersion(ctx, b.VersionID))
	if v := e.version(t, b.VersionID); v.Status != "ready" || v.StatsSummary.TotalFrames != 36 {
		t.Errorf("after retrying the update: %+v", v.StatsSummary)
	}
	var stale int
	e.a.Lake.DB().R.QueryRow(`SELECT count(*) FROM version_item vi JOIN dataset_version v ON v.seq = vi.version_seq
		WHERE vi.build <> v.current_build`).Scan(&stale)
	if stale != 0 {
		t.Errorf("%d items of old builds left", stale)
	}
}

// TestDatasetLakeDeleteKeepsVersions: versions are immutable snapshots, so a
// deleted lake file stays in the version with its augmented frames.
func TestDatasetLakeDeleteKeepsVersions(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := datasetFixture(t, e)
	ctx := context.Background()
	b := e.built(t)(e.write.CreateDatasetFromCollection(ctx, "deletions", fx.colls["cars"], client.DatasetSpec{
		SplitInfo: client.SplitInfo{Train: 100}, Labels: []string{"car"}, AugmentationList: json.RawMessage(flipConfig)}))
	if err := e.a.Lake.Delete(ctx, fx.names["cars"][0]); err != nil {
		t.Fatal(err)
	}
	v := e.version(t, b.VersionID)
	if v.Stats.TotalFrames != 24 || v.Stats.AugmentedFrames != 12 || len(e.frames(t, b.VersionID, "yolo")) != 24 {
		t.Errorf("after deleting a file: %+v", v.Stats)
	}
	if !strings.Contains(v.VersionDetails, "24 frames") {
		t.Errorf("details %q", v.VersionDetails)
	}
}
