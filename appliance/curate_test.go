package appliance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testphotos"
	"github.com/framelake/framelake/internal/vips"
)

// curatePhotos are real photos and near-duplicate copies: dog twice
// (re-encoded at quality 40, cropped by 10% on every side), horses once
// (brighter).
func curatePhotos(t *testing.T) map[string][]byte {
	t.Helper()
	read := func(name string) []byte { return testphotos.Read(t, testphotos.Darknet+name) }
	dog, horses := read("dog.jpg"), read("horses.jpg")
	return map[string][]byte{"dog.jpg": dog, "dog-q40.jpg": testphotos.Edit(t, dog, 40, nil),
		"dog-crop.jpg": testphotos.Edit(t, dog, 90, func(r *vips.Raster) (*vips.Raster, error) {
			return r.Crop(77, 58, 768-2*77, 576-2*58) // dog.jpg is 768x576
		}), "horses.jpg": horses,
		"horses-bright.jpg": testphotos.Edit(t, horses, 90, testphotos.Brighter),
		"eagle.jpg":         read("eagle.jpg"), "giraffe.jpg": read("giraffe.jpg"), "kite.jpg": read("kite.jpg")}
}

// uploadPhotos uploads curatePhotos into collection curate and returns
// the photos and their uniqueNames by name.
func (e *env) uploadPhotos(t *testing.T) (map[string][]byte, map[string]string) {
	t.Helper()
	photos := curatePhotos(t)
	var files []client.UploadFile
	for _, n := range slices.Sorted(maps.Keys(photos)) {
		files = append(files, memFile(n, photos[n]))
	}
	res, err := e.write.UploadFiles(context.Background(), client.UploadOptions{Collection: "curate"}, files...)
	if err != nil || len(res.Stored) != len(photos) {
		t.Fatalf("upload: %+v %v", res, err)
	}
	un := map[string]string{}
	for _, f := range res.Stored {
		un[f.Name] = f.UniqueName
	}
	return photos, un
}

func (e *env) job(t *testing.T, id string, err error, out any) client.Job {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	j, err := e.read.WaitJob(ctx, id)
	if err != nil || j.Status != "completed" {
		t.Fatalf("job %s: %+v %v", id, j, err)
	}
	if out != nil {
		if err := json.Unmarshal(j.Result, out); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

func (e *env) count(t *testing.T, query string) int {
	t.Helper()
	out, err := e.read.GetItemCountFromLake(context.Background(), "", query, nil)
	if err != nil || len(out) != 1 {
		t.Fatalf("count %q: %v %v", query, out, err)
	}
	return out[0].Count
}

// TestQualityScores: uploads are scored at ingest; the scores are
// queryable, sortable and in file details; compute_quality scores the
// files that lack scores, once.
func TestQualityScores(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	photos, byName := e.uploadPhotos(t)
	if n := e.count(t, "quality.sharpness > 0 AND quality.entropy > 5"); n != len(photos) {
		t.Fatalf("%d of %d uploads have scores", n, len(photos))
	}
	d, err := e.read.GetFileDetails(ctx, byName["dog.jpg"], map[string]bool{"quality": true, "duplicates": true})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := d["quality"].(map[string]any)
	if q == nil || q["aspect"] != 768.0/576 || q["sharpness"].(float64) < 100 || d["duplicates"] != nil {
		t.Fatalf("details of dog.jpg: %v", d)
	}
	items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{Query: "collection = curate",
		SortOrder: &client.SortOrder{SortByField: "quality.sharpness", SortOrder: "ASC"}, PageSize: 100})
	if err != nil || len(items) != len(photos) {
		t.Fatalf("sorted by sharpness: %v %v", items, err)
	}
	prev := -1.0
	for _, it := range items {
		d, err := e.read.GetFileDetails(ctx, it.UniqueName, map[string]bool{"quality": true})
		if err != nil {
			t.Fatal(err)
		}
		s := d["quality"].(map[string]any)["sharpness"].(float64)
		if s < prev {
			t.Fatalf("quality.sharpness ASC lists %s (%.1f) after %.1f", it.Name, s, prev)
		}
		prev = s
	}
	if _, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{SortOrder: &client.SortOrder{SortByField: "quality.blur"}}); client.CodeOf(err) != "invalid_argument" {
		t.Fatalf("unknown sort field: %v", err)
	}

	// Files stored before scores existed: compute_quality scores them, and
	// only them.
	if _, err := e.a.Lake.DB().W.ExecContext(ctx, `DELETE FROM file_quality WHERE file_seq IN
		(SELECT seq FROM file WHERE name LIKE 'dog%')`); err != nil {
		t.Fatal(err)
	}
	var qr struct{ Scored, Skipped int }
	jobID, err := e.write.ComputeQuality(ctx, "collection = curate")
	e.job(t, jobID, err, &qr)
	if qr.Scored != 3 || e.count(t, "quality.sharpness > 0") != len(photos) {
		t.Fatalf("compute_quality scored %+v", qr)
	}
	jobID, err = e.write.ComputeQuality(ctx, "")
	if e.job(t, jobID, err, &qr); qr.Scored != 0 {
		t.Fatalf("a second compute_quality scored %+v", qr)
	}
	// Files scored before centre hashes existed (migration 007) are scored
	// again, so near-duplicate search finds their centred crops too.
	res, err := e.a.Lake.DB().W.ExecContext(ctx, `DELETE FROM file_centre_hash WHERE file_seq IN
		(SELECT seq FROM file WHERE name LIKE 'dog%')`)
	if n, _ := res.RowsAffected(); err != nil || n != 3 {
		t.Fatalf("dropping centre hashes: %d rows, %v", n, err)
	}
	jobID, err = e.write.ComputeQuality(ctx, "")
	var centres int
	e.job(t, jobID, err, &qr)
	e.a.Lake.DB().R.QueryRowContext(ctx, `SELECT count(*) FROM file_centre_hash`).Scan(&centres)
	if qr.Scored != 3 || centres != len(photos) {
		t.Fatalf("compute_quality over files without centre hashes scored %+v, %d of %d have them", qr, centres, len(photos))
	}
	if _, err := e.read.ComputeQuality(ctx, ""); client.CodeOf(err) != "permission_denied" {
		t.Fatalf("a read key computed quality: %v", err)
	}
	if _, err := e.write.ComputeQuality(ctx, "quality.sharpness <"); client.CodeOf(err) != "invalid_argument" {
		t.Fatalf("a broken query: %v", err)
	}
}

// TestNearDuplicatesAndLeakage: find_duplicates by perceptual hash groups
// the copies with their originals (keeper: the largest), records groups the
// query language reads and tags the copies; a dataset version reports the
// pairs its splits separate, in get_dataset_leakage and its statistics, and
// keep_duplicates_together separates none; by embedding, groups follow the
// vectors, and the copies leave a collection.
func TestNearDuplicatesAndLeakage(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	photos, un := e.uploadPhotos(t)
	var dr client.DuplicatesResult
	jobID, err := e.write.FindDuplicates(ctx, client.DuplicatesQuery{TagDuplicates: true})
	e.job(t, jobID, err, &dr)
	groups := map[string][]string{}
	for _, g := range dr.GroupList {
		for _, m := range g.Members {
			groups[g.Keeper] = append(groups[g.Keeper], m.UniqueName)
		}
	}
	// dog.jpg is the largest of its group; horses.jpg and its brighter copy
	// have as many pixels, so the larger file keeps.
	horsesKeeper, horsesCopy := "horses.jpg", "horses-bright.jpg"
	if len(photos["horses-bright.jpg"]) > len(photos["horses.jpg"]) {
		horsesKeeper, horsesCopy = horsesCopy, horsesKeeper
	}
	if dr.Groups != 2 || dr.Duplicates != 3 || dr.Tagged != 3 || dr.Method != "phash" || dr.Threshold != 10 ||
		fmt.Sprint(groups[un[horsesKeeper]]) != fmt.Sprint([]string{un[horsesKeeper], un[horsesCopy]}) ||
		len(groups[un["dog.jpg"]]) != 3 || groups[un["dog.jpg"]][0] != un["dog.jpg"] ||
		!slices.Contains(groups[un["dog.jpg"]], un["dog-q40.jpg"]) || !slices.Contains(groups[un["dog.jpg"]], un["dog-crop.jpg"]) {
		t.Fatalf("groups %+v; want dog.jpg keeping its two copies, %s keeping %s", dr, horsesKeeper, horsesCopy)
	}
	for q, want := range map[string]int{"duplicates.count > 1": 5, "duplicates.count = 3": 3,
		fmt.Sprintf("duplicates.group = %q", un["dog.jpg"]): 3, "Tags = near-duplicate": 3,
		"duplicates.count = 1": 3} {
		if n := e.count(t, q); n != want {
			t.Errorf("%s: %d files, want %d", q, n, want)
		}
	}
	d, err := e.read.GetFileDetails(ctx, un["dog-crop.jpg"], map[string]bool{"duplicates": true})
	if dup, _ := d["duplicates"].(map[string]any); err != nil || dup["group"] != un["dog.jpg"] || dup["count"] != 3.0 {
		t.Fatalf("details: %v %v", d, err)
	}

	// Leakage: pairs are (dog, dog-q40), (dog, dog-crop), (dog-q40, dog-crop), (horses, horses-bright).
	spec := client.DatasetSpec{SplitInfo: client.SplitInfo{Train: 34, Test: 33, Validation: 33}, Labels: []string{"x"}}
	// A split is drawn from the group's seed and the files' random names, so
	// about one group in 27 keeps every pair together: another group is
	// made until one separates a pair, which the test needs.
	var b client.DatasetBuild
	var want map[string]int
	crossing := 0
	for try := 0; crossing == 0 && try < 10; try++ {
		b = e.built(t)(e.write.CreateDatasetFromDatalake(ctx, fmt.Sprintf("leaky%d", try), "", spec))
		splits := splitsOf(e.frames(t, b.VersionID, "yolo"))
		want = map[string]int{"train/test": 0, "train/validation": 0, "test/validation": 0}
		for _, p := range [][2]string{{"dog.jpg", "dog-q40.jpg"}, {"dog.jpg", "dog-crop.jpg"}, {"dog-q40.jpg", "dog-crop.jpg"},
			{"horses.jpg", "horses-bright.jpg"}} {
			a, c := splits[un[p[0]]], splits[un[p[1]]]
			if a != c {
				crossing++
				order := map[string]int{"train": 0, "test": 1, "validation": 2}
				if order[a] > order[c] {
					a, c = c, a
				}
				want[a+"/"+c]++
			}
		}
	}
	leak, err := e.read.GetDatasetLeakage(ctx, b.VersionID, nil)
	if err != nil || leak.Pairs != 4 || leak.Crossing != crossing || fmt.Sprint(leak.SplitPairs) != fmt.Sprint(want) ||
		leak.Frames != 8 || len(leak.Examples) != crossing {
		t.Fatalf("leakage %+v %v; want %d crossing %v", leak, err, crossing, want)
	}
	v := e.version(t, b.VersionID)
	if v.Stats.Leakage == nil || v.Stats.Leakage.Crossing != crossing || fmt.Sprint(v.Stats.Leakage.SplitPairs) != fmt.Sprint(want) {
		t.Fatalf("dataset list statistics: %+v", v.Stats.Leakage)
	}
	if crossing == 0 {
		t.Fatal("the fixture's split separates no pair: the test proves nothing about keep_duplicates_together")
	}
	spec.KeepDuplicatesTogether = true
	b2 := e.built(t)(e.write.CreateDatasetFromDatalake(ctx, "together", "", spec))
	leak2, err := e.read.GetDatasetLeakage(ctx, b2.VersionID, nil)
	if err != nil || leak2.Pairs != 4 || leak2.Crossing != 0 {
		t.Fatalf("keep_duplicates_together: %+v %v", leak2, err)
	}
	s2 := splitsOf(e.frames(t, b2.VersionID, "yolo"))
	if g := s2[un["dog.jpg"]]; s2[un["dog-q40.jpg"]] != g || s2[un["dog-crop.jpg"]] != g {
		t.Fatalf("dog's group split %s %s %s", g, s2[un["dog-q40.jpg"]], s2[un["dog-crop.jpg"]])
	}
	if _, err := e.read.GetDatasetLeakage(ctx, "dsv_nope", nil); client.CodeOf(err) != "not_found" {
		t.Fatalf("unknown version: %v", err)
	}

	// By embedding: dog and its copies near one vector, the rest apart.
	var embs []client.Embedding
	for i, n := range slices.Sorted(maps.Keys(photos)) {
		v := make([]float32, 8)
		if strings.HasPrefix(n, "dog") {
			v[0], v[1] = 1, 0.01*float32(i)
		} else {
			v[i%8], v[(i+3)%8] = 1, 0.5
		}
		embs = append(embs, client.Embedding{UniqueName: un[n], Embeddings: v})
	}
	if _, err := e.write.InsertImageEmbeddings(ctx, embs, "test-clip", 8); err != nil {
		t.Fatal(err)
	}
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection", Query: "name = curate"})
	if err != nil || len(colls) != 1 {
		t.Fatal(colls, err)
	}
	jobID, err = e.write.FindDuplicates(ctx, client.DuplicatesQuery{Method: "embedding", ModelName: "test-clip",
		RemoveFromCollection: colls[0].ID})
	e.job(t, jobID, err, &dr)
	if dr.Groups != 1 || dr.Removed != 2 || dr.GroupList[0].Keeper != un["dog.jpg"] {
		t.Fatalf("by embedding: %+v", dr)
	}
	if n := e.count(t, "collection = curate"); n != len(photos)-2 {
		t.Fatalf("%d files left in the collection", n)
	}
	if n := e.count(t, "duplicates.count > 1"); n != 3 {
		t.Fatalf("after the embedding run %d files are in groups", n)
	}
	for _, bad := range []client.DuplicatesQuery{{Method: "sift"}, {Method: "embedding"}, {Method: "embedding", ModelName: "nope"},
		{Threshold: ptr(3.5)}, {Threshold: ptr(17.0)}, {Method: "embedding", ModelName: "test-clip", Threshold: ptr(0.0)},
		{RemoveFromCollection: "col_nope"}} {
		if _, err := e.write.FindDuplicates(ctx, bad); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

func ptr[T any](v T) *T { return &v }
