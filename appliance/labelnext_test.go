package appliance_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
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

// selFixture is 8 images f0..f7 with 4-d vectors of model "sel" in five
// clusters ({f0, f1, f2} near the x axis, {f3, f4} near y, f5 on z, f6 on w,
// f7 opposite f0) and machine boxes of operation run-sel: f0 0.95, f1 0.9
// and 0.55, f2 0.2, f3 0.7; f4 has a human box only.
type selFixture struct {
	names []string          // f0..f7 uniqueNames
	by    map[string]string // uniqueName -> f0..f7
}

func selectionFixture(t *testing.T, e *env) selFixture {
	t.Helper()
	ctx := context.Background()
	var ups []client.UploadFile
	for i := range 8 {
		ups = append(ups, memFile(fmt.Sprintf("f%d.jpg", i), testmedia.JPEG(40, 30, 100+i)))
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "pool"}, ups...)
	if err != nil || len(res.Stored) != 8 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	fx := selFixture{by: map[string]string{}}
	for i := range 8 {
		for _, f := range res.Stored {
			if f.Name == fmt.Sprintf("f%d.jpg", i) {
				fx.names = append(fx.names, f.UniqueName)
				fx.by[f.UniqueName] = fmt.Sprintf("f%d", i)
			}
		}
	}
	vecs := [][]float32{{1, 0, 0, 0}, {0.99, 0.1, 0, 0}, {0.98, 0, 0.1, 0}, {0, 1, 0, 0}, {0, 0.99, 0.1, 0},
		{0, 0, 1, 0}, {0, 0, 0, 1}, {-1, 0, 0, 0}}
	var list []client.Embedding
	for i, v := range vecs {
		list = append(list, client.Embedding{UniqueName: fx.names[i], Embeddings: v})
	}
	if _, err := e.write.InsertImageEmbeddings(ctx, list, "sel", 4); err != nil {
		t.Fatal(err)
	}
	l := e.a.Lake
	err = l.DB().Tx(ctx, func(tx *sql.Tx) error {
		put := func(i int, src lake.Source, confs ...float64) error {
			f, err := l.File(ctx, fx.names[i])
			if err != nil {
				return err
			}
			var boxes []lake.Box
			for j, c := range confs {
				b := lake.Box{Label: "car", X: float64(j), Y: 1, W: 5, H: 5, Source: src}
				if src == lake.Machine {
					b.Confidence = &c
				}
				boxes = append(boxes, b)
			}
			op := "run-sel"
			if src == lake.Human {
				op = "prj-sel"
			}
			return lake.ReplaceBoxes(ctx, tx, f.Seq(), src, op, 0, boxes)
		}
		for _, p := range []struct {
			i     int
			src   lake.Source
			confs []float64
		}{{0, lake.Machine, []float64{0.95}}, {1, lake.Machine, []float64{0.9, 0.55}}, {2, lake.Machine, []float64{0.2}},
			{3, lake.Machine, []float64{0.7}}, {4, lake.Human, []float64{1}}} {
			if err := put(p.i, p.src, p.confs...); err != nil {
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

// selected runs a selection to completion and returns its result, with the
// files named f0..f7.
func (e *env) selected(t *testing.T, fx selFixture, req client.SelectRequest) (client.Selection, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	jobID, err := e.write.SelectSamples(ctx, req)
	if err != nil {
		t.Fatalf("select %+v: %v", req, err)
	}
	j, err := e.read.WaitJob(ctx, jobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("select %+v: job %+v %v", req, j, err)
	}
	var res client.Selection
	if err := json.Unmarshal(j.Result, &res); err != nil {
		t.Fatal(err)
	}
	var short []string
	for _, n := range res.UniqueNames {
		short = append(short, fx.by[n])
	}
	return res, short
}

func TestSelectByUncertainty(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := selectionFixture(t, e)
	ctx := context.Background()
	// Least confidence: 1 - lowest box (f2 0.8, f1 0.45, f3 0.3, f0 0.05);
	// margin and entropy: the box nearest 0.5 (f1's 0.55, f3's 0.7, f2's 0.2, f0's 0.95).
	for _, c := range []struct {
		measure string
		want    []string
		score   float64
	}{
		{"least_confidence", []string{"f2", "f1", "f3"}, 0.8},
		{"margin", []string{"f1", "f3", "f2"}, 0.9},
		{"entropy", []string{"f1", "f3", "f2"}, 0.99277}, // H(0.55) in bits
		{"", []string{"f2", "f1", "f3"}, 0.8},
	} {
		res, got := e.selected(t, fx, client.SelectRequest{Strategy: "uncertainty", RunID: "run-sel", Budget: 3,
			Measure: c.measure, Tag: "label-next-" + c.measure})
		if !slices.Equal(got, c.want) || res.Candidates != 4 || len(res.Scores) != 3 ||
			res.Scores[0] < c.score-1e-4 || res.Scores[0] > c.score+1e-4 {
			t.Errorf("%s: %v %+v, want %v first scoring %v of 4 candidates", c.measure, got, res, c.want, c.score)
		}
	}
	// The chosen files carry the tag, and the pool is the query's.
	items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{Query: "Tags = label-next-margin"})
	if err != nil || len(items) != 3 {
		t.Errorf("tagged files: %+v %v", items, err)
	}
	_, got := e.selected(t, fx, client.SelectRequest{Strategy: "uncertainty", RunID: "run-sel", Budget: 5,
		Query: "name != f2.jpg"})
	if !slices.Equal(got, []string{"f1", "f3", "f0"}) {
		t.Errorf("pool without f2: %v", got)
	}
	// Without a tag the job's id tags them.
	res, _ := e.selected(t, fx, client.SelectRequest{Strategy: "uncertainty", RunID: "run-sel", Budget: 1})
	if items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{Query: "Tags = " + res.Tag}); err != nil ||
		len(items) != 1 || len(res.Tag) < 5 || res.Tag[:4] != "job_" {
		t.Errorf("default tag %q: %+v %v", res.Tag, items, err)
	}
}

func TestSelectByEmbeddings(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := selectionFixture(t, e)
	cluster := map[string]int{"f0": 0, "f1": 0, "f2": 0, "f3": 1, "f4": 1, "f5": 2, "f6": 3, "f7": 4}
	// Diversity: five picks cover the five clusters; the same seed picks the
	// same files in the same order.
	var firsts []string
	for seed := range int64(6) {
		res, got := e.selected(t, fx, client.SelectRequest{Strategy: "diversity", Model: "sel", Budget: 5, Seed: seed})
		seen := map[int]bool{}
		for _, n := range got {
			seen[cluster[n]] = true
		}
		if len(got) != 5 || len(seen) != 5 || res.Candidates != 8 {
			t.Errorf("seed %d: %v %+v covers clusters %v", seed, got, res, seen)
		}
		if _, again := e.selected(t, fx, client.SelectRequest{Strategy: "diversity", Model: "sel", Budget: 5, Seed: seed}); !slices.Equal(got, again) {
			t.Errorf("seed %d: %v, then %v", seed, got, again)
		}
		// From the x-axis cluster the farthest file is f7, opposite f0.
		if got[0] == "f0" && got[1] != "f7" {
			t.Errorf("seed %d: after f0 came %s, want f7", seed, got[1])
		}
		firsts = append(firsts, got[0])
	}
	sort.Strings(firsts)
	if firsts = slices.Compact(firsts); len(firsts) < 2 {
		t.Errorf("every seed started from %v", firsts)
	}
	// Uniqueness: mean cosine distance to the 3 nearest; f6 and f7 are 1 from
	// everything near them, f5 0.93; the x-axis cluster least unique.
	_, got := e.selected(t, fx, client.SelectRequest{Strategy: "uniqueness", Model: "sel", Budget: 8})
	if top := slices.Sorted(slices.Values(got[:3])); !slices.Equal(top, []string{"f5", "f6", "f7"}) ||
		!slices.Equal(slices.Sorted(slices.Values(got[5:])), []string{"f0", "f1", "f2"}) {
		t.Errorf("by uniqueness: %v", got)
	}
	// Hybrid: candidates have a score and a vector (f0..f3); it starts at the
	// most uncertain (f2) and then weighs distance by uncertainty: f3 (0.3 x
	// 1.41) beats f1 (0.45 x 0.14).
	res, got := e.selected(t, fx, client.SelectRequest{Strategy: "hybrid", Model: "sel", RunID: "run-sel", Budget: 2})
	if !slices.Equal(got, []string{"f2", "f3"}) || res.Candidates != 4 {
		t.Errorf("hybrid: %v %+v", got, res)
	}
}

func TestComputeUniquenessIsQueryable(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := selectionFixture(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	jobID, err := e.write.ComputeUniqueness(ctx, "sel", "")
	if err != nil {
		t.Fatal(err)
	}
	j, err := e.read.WaitJob(ctx, jobID)
	var res client.UniquenessResult
	if err != nil || j.Status != "completed" || json.Unmarshal(j.Result, &res) != nil || res.Files != 8 || res.K != 3 {
		t.Fatalf("uniqueness job %+v %v", j, err)
	}
	for q, want := range map[string][]string{
		"uniqueness > 0.9":                      {"f5", "f6", "f7"},
		"uniqueness < 0.5":                      {"f0", "f1", "f2"},
		"uniqueness > 0.5 AND uniqueness < 0.9": {"f3", "f4"},
	} {
		items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{Query: q})
		var got []string
		for _, it := range items {
			got = append(got, fx.by[it.UniqueName])
		}
		if sort.Strings(got); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", q, got, err, want)
		}
	}
}

func TestSelectBadInput(t *testing.T) {
	e := start(t, appliance.Config{})
	selectionFixture(t, e)
	for _, c := range []struct {
		body   string
		status int
		field  string
	}{
		{`{"budget": 3, "strategy": "random"}`, 400, "strategy"},
		{`{"budget": 0, "strategy": "diversity", "model_name": "sel"}`, 400, "budget"},
		{`{"budget": 100001, "strategy": "diversity", "model_name": "sel"}`, 400, "budget"},
		{`{"budget": 3, "strategy": "uncertainty"}`, 400, "run_id"},
		{`{"budget": 3, "strategy": "uncertainty", "run_id": "run-nope"}`, 404, "run_id"},
		{`{"budget": 3, "strategy": "uncertainty", "run_id": "run-sel", "measure": "gini"}`, 400, "measure"},
		{`{"budget": 3, "strategy": "diversity", "model_name": "nope"}`, 404, "model_name"},
		{`{"budget": 3, "strategy": "hybrid", "model_name": "sel"}`, 400, "run_id"},
		{`{"budget": 3, "strategy": "diversity", "model_name": "sel", "query": "name =="}`, 400, "query"},
		{`{"budget": 3, "strategy": "diversity", "model_name": "sel", "tag": "  "}`, 400, "tag"},
		{`{"strategy": "diversity", "model_name": "sel"}`, 400, "budget"},
	} {
		var out struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		status, _, body := e.send(t, "POST", "/api/v1/client/select_samples", "application/json", strings.NewReader(c.body))
		json.Unmarshal(body, &out)
		if status != c.status || out.Error.Field != c.field {
			t.Errorf("%s: %d %s, want %d on %s", c.body, status, body, c.status, c.field)
		}
	}
	if status, _, body := e.send(t, "POST", "/api/v1/client/compute_uniqueness", "application/json",
		strings.NewReader(`{"model_name": "nope"}`)); status != http.StatusNotFound {
		t.Errorf("uniqueness of an unknown model: %d %s", status, body)
	}
}
