package appliance_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/augment"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/lake"
)

// modelsDir is where `make models` put the system default packages.
func modelsDir(t testing.TB) string {
	if testing.Short() {
		t.Skip("-short: starts Python (a model's venv and worker)")
	}
	dir := os.Getenv("FRAMELAKE_MODELS_DIR")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "build", "models"))
	}
	if _, err := os.Stat(filepath.Join(dir, "auto_tagging")); err != nil {
		t.Fatalf("the system default models are not built in %s: run make models", dir)
	}
	return dir
}

// photo reads one of Debian darknet's sample photos.
func photo(t testing.TB, name string) []byte {
	b, err := os.ReadFile(filepath.Join("/usr/share/darknet/data", name))
	if err != nil {
		t.Fatalf("%v: install Debian's darknet package (make test does)", err)
	}
	return b
}

func iou(a lake.Box, x1, y1, x2, y2 float64) float64 {
	ix := max(0, min(a.X+a.W, x2)-max(a.X, x1))
	iy := max(0, min(a.Y+a.H, y2)-max(a.Y, y1))
	inter := ix * iy
	return inter / (a.W*a.H + (x2-x1)*(y2-y1) - inter)
}

// TestDefaultModels runs the system default models through jobs, as a user
// would with no model_name: COCO tags and boxes on real photos, embeddings
// that find a photo from a flipped copy, and a prompt mapped onto COCO.
func TestDefaultModels(t *testing.T) {
	e := start(t, appliance.Config{ModelsDir: modelsDir(t)})
	ctx := context.Background()
	photos := []string{"dog.jpg", "person.jpg", "giraffe.jpg"}
	var ups, flips []client.UploadFile
	for _, p := range photos {
		b := photo(t, p)
		ups = append(ups, memFile(p, b))
		out, err := augment.ApplySteps(ctx, b, nil, []augment.Step{{Type: augment.FlipImage, Property: augment.FlipHorizontal}}, augment.Options{})
		if err != nil {
			t.Fatal(err)
		}
		flips = append(flips, memFile("flipped-"+p, out.Image))
	}
	stored := map[string]client.StoredFile{}
	for coll, files := range map[string][]client.UploadFile{"photos": ups, "edits": flips} {
		res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: coll}, files...)
		if err != nil || len(res.Stored) != len(files) {
			t.Fatalf("upload %s: %+v %v", coll, res, err)
		}
		for _, f := range res.Stored {
			stored[f.Name] = f
		}
	}
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection"})
	if err != nil || len(colls) != 2 {
		t.Fatalf("collections %+v %v", colls, err)
	}
	run := func(name string, started client.RunStarted, err error) client.Job {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		j, err := e.write.WaitJob(ctx, started.JobID)
		if err != nil || j.Status != "completed" {
			t.Fatalf("%s job: %+v %v", name, j, err)
		}
		return j
	}
	var annotated client.RunStarted
	var annotateJob client.Job
	for _, c := range colls {
		s, err := e.write.GenerateEmbeddingsForCollection(ctx, c.ID, client.AnalysisOptions{})
		run("embeddings "+c.Name, s, err)
		if c.Name == "photos" {
			s, err := e.write.AutoTagCollection(ctx, c.ID, client.AnalysisOptions{InputResolution: []int{416, 416}})
			run("auto tag", s, err)
			annotated, err = e.write.AutoAnnotateCollection(ctx, c.ID, []client.Prompt{{Label: "puppy", Description: "a young dog"},
				{Label: "volcano", Description: "a mountain that erupts"}}, client.AnalysisOptions{})
			annotateJob = run("auto annotate", annotated, err)
		}
	}
	checkTags(t, e, stored, map[string][]string{"dog.jpg": {"dog", "bicycle"}, "person.jpg": {"person", "horse"},
		"giraffe.jpg": {"giraffe", "zebra"}})
	checkDogBoxes(t, e, stored["dog.jpg"])
	// No COCO class answers "volcano": the run says so instead of finding nothing.
	var res struct{ Unsupported []string }
	if err := json.Unmarshal(annotateJob.Result, &res); err != nil || !slices.Equal(res.Unsupported, []string{"volcano"}) {
		t.Errorf("auto annotate job result %s (%v): want unsupported [volcano]", annotateJob.Result, err)
	}
	if r, err := e.read.Run(ctx, annotated.RunID); err != nil || !slices.Equal(r.Unsupported, []string{"volcano"}) {
		t.Errorf("auto annotate run %+v %v: want unsupported [volcano]", r, err)
	}
	for _, p := range photos {
		near, err := e.read.FindSimilar(ctx, client.SimilarQuery{ModelName: "default",
			UniqueName: stored["flipped-"+p].UniqueName, K: 1, Query: "collection = photos"})
		if err != nil || len(near) != 1 || near[0].UniqueName != stored[p].UniqueName {
			t.Errorf("nearest to flipped %s: %+v %v", p, near, err)
		}
	}
}

// checkDogBoxes wants the dog of dog.jpg, at (128,224)-(314,537), boxed both
// by the COCO tagger as "dog" and, under the user's prompt label as the
// contract says, as "puppy".
func checkDogBoxes(t *testing.T, e *env, stored client.StoredFile) {
	t.Helper()
	dog, _ := e.a.Lake.File(context.Background(), stored.UniqueName)
	boxes, err := e.a.Lake.Boxes(context.Background(), lake.BoxQuery{FileSeqs: []int64{dog.Seq()}, Labels: []string{"dog", "puppy"}})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	for _, b := range boxes {
		if v := iou(b, 128, 224, 314, 537); v < 0.6 {
			t.Errorf("%s box %+v overlaps the dog by IoU %.2f", b.Label, b, v)
		}
		found[b.Label]++
	}
	if found["dog"] == 0 || found["puppy"] == 0 {
		t.Errorf("dog.jpg boxes by label %v: want the dog boxed as dog and as puppy", found)
	}
}

func checkTags(t *testing.T, e *env, stored map[string]client.StoredFile, want map[string][]string) {
	t.Helper()
	for name, tags := range want {
		d, err := e.read.GetFileDetails(context.Background(), stored[name].UniqueName, map[string]bool{"Tags": true})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tag := range d["Tags"].([]any) {
			got = append(got, tag.(string))
		}
		for _, w := range tags {
			if !slices.Contains(got, w) {
				t.Errorf("%s tags %v, want %s among them", name, got, w)
			}
		}
	}
}
