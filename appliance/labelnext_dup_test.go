package appliance_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// withCopy adds f8 to the selection fixture: the same bytes as f2 under
// another name, with f2's vector and f2's machine box (0.2 of run-sel).
func withCopy(t *testing.T, e *env, fx selFixture) selFixture {
	t.Helper()
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "pool"}, memFile("f8.jpg", testmedia.JPEG(40, 30, 102)))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("upload the copy: %+v %v", res, err)
	}
	n := res.Stored[0].UniqueName
	fx.names = append(fx.names, n)
	fx.by[n] = "f8"
	if _, err := e.write.InsertImageEmbeddings(ctx, []client.Embedding{{UniqueName: n, Embeddings: []float32{0.98, 0, 0.1, 0}}},
		"sel", 4); err != nil {
		t.Fatal(err)
	}
	l := e.a.Lake
	f, err := l.File(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := l.File(ctx, fx.names[2])
	if f.Blob != f2.Blob {
		t.Fatalf("f8 is not a byte copy of f2: %s %s", f.Blob, f2.Blob)
	}
	conf := 0.2
	if err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		return lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Machine, "run-sel", 0,
			[]lake.Box{{Label: "car", X: 0, Y: 1, W: 5, H: 5, Source: lake.Machine, Confidence: &conf}})
	}); err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestSelectSkipsCopies (issue 31, item 5): uncertainty picked two
// byte-identical images; now a selection skips copies of what it chose
// (keep_duplicates brings them back), for every strategy.
func TestSelectSkipsCopies(t *testing.T) {
	e := start(t, appliance.Config{})
	fx := withCopy(t, e, selectionFixture(t, e))
	res, got := e.selected(t, fx, client.SelectRequest{Strategy: "uncertainty", RunID: "run-sel", Budget: 3, Tag: "a"})
	if len(got) != 3 || got[1] != "f1" || got[2] != "f3" || (got[0] != "f2" && got[0] != "f8") || res.SkippedDuplicates != 1 {
		t.Errorf("uncertainty: %v %+v", got, res)
	}
	res, got = e.selected(t, fx, client.SelectRequest{Strategy: "uncertainty", RunID: "run-sel", Budget: 3, Tag: "b",
		KeepDuplicates: true})
	if top := slices.Sorted(slices.Values(got[:2])); !slices.Equal(top, []string{"f2", "f8"}) || res.SkippedDuplicates != 0 {
		t.Errorf("uncertainty keeping duplicates: %v %+v", got, res)
	}
	for _, strategy := range []string{"diversity", "uniqueness"} {
		res, got := e.selected(t, fx, client.SelectRequest{Strategy: strategy, Model: "sel", Budget: 9, Tag: "c-" + strategy})
		if len(got) != 8 || (slices.Contains(got, "f2") && slices.Contains(got, "f8")) || res.SkippedDuplicates != 1 || res.Candidates != 9 {
			t.Errorf("%s: %v %+v", strategy, got, res)
		}
	}
	res, got = e.selected(t, fx, client.SelectRequest{Strategy: "hybrid", Model: "sel", RunID: "run-sel", Budget: 5, Tag: "d"})
	if len(got) != 4 || (slices.Contains(got, "f2") && slices.Contains(got, "f8")) || res.SkippedDuplicates != 1 {
		t.Errorf("hybrid: %v %+v", got, res)
	}
}

// TestSelectionProgressIsWholeWhenDone (issue 31, item 6): a completed
// selection job's progress reads done = total (it showed 5/6: k-center did
// not count its first pick, and uncertainty set no total).
func TestSelectionProgressIsWholeWhenDone(t *testing.T) {
	e := start(t, appliance.Config{})
	selectionFixture(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, req := range []client.SelectRequest{
		{Strategy: "uncertainty", RunID: "run-sel", Budget: 3},
		{Strategy: "diversity", Model: "sel", Budget: 6},
		{Strategy: "uniqueness", Model: "sel", Budget: 4},
		{Strategy: "hybrid", Model: "sel", RunID: "run-sel", Budget: 3},
	} {
		id, err := e.write.SelectSamples(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		j, err := e.read.WaitJob(ctx, id)
		if err != nil || j.Status != "completed" {
			t.Fatalf("%s: %+v %v", req.Strategy, j, err)
		}
		var res client.Selection
		json.Unmarshal(j.Result, &res)
		if j.Total == 0 || j.Done != j.Total || j.Progress != 100 {
			t.Errorf("%s: completed with %d/%d (%d%%), result %+v", req.Strategy, j.Done, j.Total, j.Progress, res)
		}
	}
}
