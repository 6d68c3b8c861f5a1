package lake_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// curatedLake holds 12 images of widths 16..27: every third has two dog
// boxes (human), every fourth a cat box (machine, confidence 0.25..), the
// first six are in collection "a", the rest in "b".
func curatedLake(t *testing.T, set ...func(*lake.Options)) (*lake.Lake, []lake.File) {
	ctx := context.Background()
	l, _ := openLake(t, set...)
	var stored []lake.File
	for _, coll := range []string{"a", "b"} {
		var ups []lake.Upload
		for i := range 6 {
			n := len(stored) + i
			ups = append(ups, mem(fmt.Sprintf("f%02d.jpg", n), testmedia.JPEG(16+n, 16, n)))
		}
		res, err := l.Add(ctx, lake.AddOptions{Collection: coll}, ups)
		if err != nil || len(res.Stored) != 6 {
			t.Fatal(err, res.Rejected)
		}
		stored = append(stored, res.Stored...)
	}
	err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		for i, f := range stored {
			if i%3 == 0 {
				b := lake.Box{Label: "dog", X: 1, Y: 1, W: 2, H: 2}
				if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Human, "p", 0, []lake.Box{b, b}); err != nil {
					return err
				}
			}
			if i%4 == 0 {
				c := 0.25 + float64(i)/20
				if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Machine, "run", 0,
					[]lake.Box{{Label: "cat", X: 1, Y: 1, W: 2, H: 2, Confidence: &c}}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l, stored
}

func TestSetCountsFollowTheQuery(t *testing.T) {
	ctx := context.Background()
	l, _ := curatedLake(t)
	cases := []struct {
		set, query string
		limit      int
		want       string
		more       bool
	}{
		{"annotation.label", "", 10, "[{dog 4} {cat 3}]", false}, // two dog boxes on a file count once
		{"annotation.label", "", 1, "[{dog 4}]", true},
		{"annotation.label", "collection = a", 10, "[{cat 2} {dog 2}]", false},
		{"annotation.label", "width >= 100", 10, "[]", false},
		{"collection", "", 10, "[{a 6} {b 6}]", false},
		{"collection", "annotation.label = dog", 10, "[{a 2} {b 2}]", false},
		{"Tags", "", 10, "[]", false}, // no file has a tag
		{"Tags", "annotation.label = dog", 10, "[]", false},
	}
	for _, c := range cases {
		got, err := l.SetCounts(ctx, lake.Selection{Query: c.query}, c.set, c.limit)
		if err != nil || fmt.Sprint(got.Values) != c.want || got.More != c.more || got.Estimated {
			t.Errorf("%s for %q limit %d: %+v %v, want %s more=%v", c.set, c.query, c.limit, got, err, c.want, c.more)
		}
	}
	if _, err := l.SetCounts(ctx, lake.Selection{Query: "width >"}, "annotation.label", 5); err == nil {
		t.Error("a bad query counted")
	}
	if _, err := l.SetCounts(ctx, lake.Selection{Query: "width >"}, "Tags", 5); err == nil {
		t.Error("a bad query counted in a set no file is in")
	}
	if _, err := l.SetCounts(ctx, lake.Selection{}, "name", 5); err == nil {
		t.Error("counts by name, which is not a set")
	}
}

func TestTagAndCollectSelection(t *testing.T) {
	ctx := context.Background()
	l, stored := curatedLake(t)
	q := fmt.Sprintf("uniqueName IN (%s, %s, %s)", stored[0].UniqueName, stored[1].UniqueName, stored[2].UniqueName)
	n, err := l.TagSelection(ctx, lake.Selection{Query: q}, []string{"keep", "check"}, nil)
	if err != nil || n != 3 {
		t.Fatalf("tagged %d files, %v", n, err)
	}
	got, err := l.SetCounts(ctx, lake.Selection{}, "Tags", 10)
	if fmt.Sprint(got.Values) != "[{check 3} {keep 3}]" || err != nil {
		t.Errorf("tags after tagging: %v %v", got, err)
	}
	if n, err = l.TagSelection(ctx, lake.Selection{Query: "annotation.label = dog"}, nil, []string{"check"}); err != nil || n != 4 {
		t.Errorf("untagged %d files, %v", n, err)
	}
	if c, err := l.Count(ctx, lake.Selection{Query: "Tags = check"}); err != nil || c != 2 { // files 1 and 2 keep it
		t.Errorf("%d files still tagged check, %v", c, err)
	}
	coll, added, err := l.CollectSelection(ctx, lake.Selection{Query: "annotation.label = cat"}, "cats")
	if err != nil || added != 3 || coll.Type != lake.ImageCollection {
		t.Fatalf("collected %d into %+v, %v", added, coll, err)
	}
	if _, added, err = l.CollectSelection(ctx, lake.Selection{Query: "annotation.label IN (cat, dog)"}, "cats"); added != 3 || err != nil {
		t.Errorf("second collect added %d, %v; want the 3 dog-only files", added, err)
	}
	if c, err := l.Count(ctx, lake.Selection{Query: "collection = cats"}); err != nil || c != 6 {
		t.Errorf("collection cats has %d files, %v", c, err)
	}
	if _, err := l.TagSelection(ctx, lake.Selection{}, []string{" "}, nil); err == nil {
		t.Error("an empty tag name was stored")
	}
}

func TestHistogramAndComplete(t *testing.T) {
	ctx := context.Background()
	l, _ := curatedLake(t)
	h, err := l.Histogram(ctx, lake.Selection{}, "width", 4)
	if err != nil || h.Min != 16 || h.Max != 27 || h.Total != 12 || len(h.Bins) != 4 {
		t.Fatalf("width histogram %+v, %v", h, err)
	}
	sum := 0
	for _, b := range h.Bins {
		sum += b.Count
	}
	if sum != 12 || h.Bins[0].Count != 3 || h.Bins[0].From != 16 || h.Bins[0].To != 19 {
		t.Errorf("width bins %+v", h.Bins)
	}
	h, err = l.Histogram(ctx, lake.Selection{Query: "collection = a"}, "annotation.confidence", 5)
	if err != nil || h.Total != 2 || h.Min != 0.25 || h.Max != 0.45 {
		t.Errorf("confidence histogram %+v, %v", h, err)
	}
	for vocab, want := range map[string]string{"annotation.label": "[cat dog]", "collection": "[a b]", "Tags": "[]"} {
		got, err := l.Complete(ctx, vocab, "", 10)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("complete %s: %v %v, want %s", vocab, got, err, want)
		}
	}
	if got, err := l.Complete(ctx, "annotation.label", "d", 10); err != nil || fmt.Sprint(got) != "[dog]" {
		t.Errorf("complete labels from d: %v %v", got, err)
	}
	if got, err := l.Complete(ctx, "annotation.label", "cat", 1); err != nil || fmt.Sprint(got) != "[cat]" {
		t.Errorf("complete labels from cat: %v %v", got, err)
	}
	// One value: one bin holding every file, in both ways of reading.
	for _, field := range []string{"height", "fileSize"} {
		h, err := l.Histogram(ctx, lake.Selection{Query: "name = f03.jpg"}, field, 5)
		if err != nil || len(h.Bins) != 1 || h.Bins[0].Count != 1 || h.Total != 1 {
			t.Errorf("%s histogram of one file: %+v %v", field, h, err)
		}
	}
	if _, err := l.Complete(ctx, "width", "", 10); err == nil {
		t.Error("completed a numeric field")
	}
}

// TestQualityHistogram: quality scores have histograms over the files that
// have scores (the query narrowing them as for any field).
func TestQualityHistogram(t *testing.T) {
	ctx := context.Background()
	l, stored := curatedLake(t)
	scores := map[int64]lake.Quality{}
	for i, f := range stored[:8] { // f00..f07 scored, sharpness 10, 20, .. 80
		scores[f.Seq()] = lake.Quality{Sharpness: float64(10 * (i + 1)), Brightness: 0.5, Aspect: 1}
	}
	if err := l.PutQuality(ctx, scores); err != nil {
		t.Fatal(err)
	}
	h, err := l.Histogram(ctx, lake.Selection{}, "quality.sharpness", 7)
	if err != nil || h.Total != 8 || h.Min != 10 || h.Max != 80 || len(h.Bins) != 7 || h.Bins[0].Count != 1 || h.Bins[6].Count != 2 {
		t.Fatalf("sharpness histogram %+v, %v: want 8 scored files, 10..80, one in the first of 7 bins and two in the last", h, err)
	}
	h, err = l.Histogram(ctx, lake.Selection{Query: "collection = a AND quality.sharpness > 30"}, "quality.sharpness", 4)
	if err != nil || h.Total != 3 || h.Min != 40 || h.Max != 60 {
		t.Errorf("sharpness histogram of collection a over 30: %+v, %v; want 40, 50, 60", h, err)
	}
	h, err = l.Histogram(ctx, lake.Selection{}, "quality.brightness", 5)
	if err != nil || h.Total != 8 || len(h.Bins) != 1 || h.Bins[0].Count != 8 {
		t.Errorf("brightness histogram (one value): %+v, %v", h, err)
	}
}

// TestWholeLakeCountsFollowEdits checks the label and tag counts that
// triggers keep (used for a selection of every file) against counting the
// boxes and tags themselves, after boxes are replaced, tags added and
// removed, and a file deleted.
func TestWholeLakeCountsFollowEdits(t *testing.T) {
	ctx := context.Background()
	l, stored := curatedLake(t)
	same := func(when string) {
		t.Helper()
		for _, set := range []string{"annotation.label", "Tags"} {
			kept, err1 := l.SetCounts(ctx, lake.Selection{}, set, 50)
			counted, err2 := l.SetCounts(ctx, lake.Selection{Query: "fileSize >= 0"}, set, 50)
			if err1 != nil || err2 != nil || fmt.Sprint(kept) != fmt.Sprint(counted) {
				t.Errorf("%s: %s kept %v %v, counted %v %v", when, set, kept, err1, counted, err2)
			}
		}
	}
	same("built")
	if _, err := l.TagSelection(ctx, lake.Selection{Query: "annotation.label = dog"}, []string{"dog", "seen"}, nil); err != nil {
		t.Fatal(err)
	}
	err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		c := 0.9
		// a model tag beside the user's on file 0, and file 3's dogs become a cat and a dog
		if err := lake.AddFileTags(ctx, tx, stored[0].Seq(), []lake.Tag{{Name: "dog", Operation: "run", Confidence: &c}}); err != nil {
			return err
		}
		return lake.ReplaceBoxes(ctx, tx, stored[3].Seq(), lake.Human, "p", 0,
			[]lake.Box{{Label: "cat", X: 1, Y: 1, W: 2, H: 2}, {Label: "dog", X: 1, Y: 1, W: 2, H: 2}})
	})
	if err != nil {
		t.Fatal(err)
	}
	same("tagged and boxes replaced")
	if got, _ := l.SetCounts(ctx, lake.Selection{}, "annotation.label", 5); fmt.Sprint(got.Values) != "[{cat 4} {dog 4}]" {
		t.Errorf("labels after replacing file 3's boxes: %v", got)
	}
	if _, err := l.TagSelection(ctx, lake.Selection{Query: "uniqueName = " + stored[0].UniqueName}, nil, []string{"seen"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.DeleteFile(ctx, stored[6].UniqueName); err != nil {
		t.Fatal(err)
	}
	same("untagged and a file deleted")
	if got, _ := l.SetCounts(ctx, lake.Selection{}, "Tags", 5); fmt.Sprint(got.Values) != "[{dog 3} {seen 2}]" {
		t.Errorf("tags after untagging and deleting: %v", got)
	}
}

// TestFacetsEstimateOverSample: a selection of more than FacetSample files
// is counted from its FacetSample most recently modified, scaled to all of
// it and said to be estimated, by label counts, histograms and clause
// counts alike; a smaller one is counted whole.
func TestFacetsEstimateOverSample(t *testing.T) {
	ctx := context.Background()
	l, _ := curatedLake(t, func(o *lake.Options) { o.FacetSample = 4 })
	// The four files modified last are those whose boxes were written last:
	// 4 and 8 (cat), 6 and 9 (dog); 12 selected files scale each by 3.
	many := lake.Selection{Query: "fileSize >= 0"}
	got, err := l.SetCounts(ctx, many, "annotation.label", 10)
	if err != nil || !got.Estimated || got.Sampled != 4 || fmt.Sprint(got.Values) != "[{cat 6} {dog 6}]" {
		t.Errorf("estimate: %+v %v", got, err)
	}
	// A selection of every file reads the kept counts.
	got, err = l.SetCounts(ctx, lake.Selection{}, "annotation.label", 10)
	if err != nil || got.Estimated || fmt.Sprint(got.Values) != "[{dog 4} {cat 3}]" {
		t.Errorf("whole lake: %+v %v", got, err)
	}
	// They are 20, 22, 24 and 25 px wide.
	h, err := l.Histogram(ctx, many, "width", 4)
	if err != nil || !h.Estimated || h.Sampled != 4 || h.Total != 12 || h.Min != 20 || h.Max != 25 || fmt.Sprint(h.Bins) != "[{20 22 3} {22 24 3} {24 26 6}]" {
		t.Errorf("width histogram: %+v %v", h, err)
	}
	// Four dog files (0, 3, 6, 9) are no more than the sample: read whole.
	dogs := lake.Selection{Query: "annotation.label = dog"}
	if h, err := l.Histogram(ctx, dogs, "width", 2); err != nil || h.Estimated || h.Total != 4 || h.Min != 16 || h.Max != 25 {
		t.Errorf("dog width histogram: %+v %v", h, err)
	}
	sources := []string{"annotation.source = human", "annotation.source = machine", "annotation.count = 0"}
	n, est, err := l.ClauseCounts(ctx, many, sources)
	if err != nil || !est.Estimated || est.Sampled != 4 || fmt.Sprint(n) != "[6 6 0]" {
		t.Errorf("sources of the sample: %v %+v %v", n, est, err)
	}
	n, est, err = l.ClauseCounts(ctx, dogs, sources)
	if err != nil || est.Estimated || fmt.Sprint(n) != "[4 1 0]" {
		t.Errorf("sources of the dog files: %v %+v %v", n, est, err)
	}
}
