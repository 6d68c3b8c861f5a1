package lake_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// TestCountsFromKeptCountsStayExact: the counts read from the counts that
// triggers keep (every file of a type; one label, tag or source in a lake of
// one type) equal counting the files, and follow every write at once: boxes
// replaced, tags added and removed, a file deleted, a file of another type
// added (after which the label counts, kept over every type, are counted).
func TestCountsFromKeptCountsStayExact(t *testing.T) {
	ctx := context.Background()
	l, stored := curatedLake(t)
	queries := []string{"", "annotation.label = dog", "annotation.label = cat", "annotation.label = none",
		"Tags = seen", "annotation.source = human", "annotation.source = machine"}
	check := func(when string, want ...int) {
		t.Helper()
		for _, it := range []string{"image", "other"} {
			for i, q := range queries {
				sel := lake.Selection{ItemType: it, Query: q}
				n, err := l.Count(ctx, sel)
				// a query of more than one term is counted file by file
				all := lake.Selection{ItemType: it, Query: "fileSize >= 0"}
				if q != "" {
					all.Query += " AND " + q
				}
				counted, err2 := l.Count(ctx, all)
				if err != nil || err2 != nil || n != counted {
					t.Errorf("%s: %s %q: %d %v, counted %d %v", when, it, q, n, err, counted, err2)
				}
				if it == "image" && n != want[i] {
					t.Errorf("%s: images %q: %d, want %d", when, q, n, want[i])
				}
			}
		}
	}
	check("built", 12, 4, 3, 0, 0, 4, 3)
	if _, err := l.TagSelection(ctx, lake.Selection{Query: "annotation.label = cat"}, []string{"seen"}, nil); err != nil {
		t.Fatal(err)
	}
	err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		// file 1 gets a human cat; file 3's human dogs become a cat
		box := []lake.Box{{Label: "cat", X: 1, Y: 1, W: 2, H: 2}}
		if err := lake.ReplaceBoxes(ctx, tx, stored[1].Seq(), lake.Human, "p", 0, box); err != nil {
			return err
		}
		return lake.ReplaceBoxes(ctx, tx, stored[3].Seq(), lake.Human, "p", 0, box)
	})
	if err != nil {
		t.Fatal(err)
	}
	check("tagged and boxes replaced", 12, 3, 5, 0, 3, 5, 3)
	if _, err := l.DeleteFile(ctx, stored[0].UniqueName); err != nil { // a dog, a cat, seen
		t.Fatal(err)
	}
	check("a file deleted", 11, 2, 4, 0, 2, 4, 2)
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("notes.txt", []byte("not an image"))})
	if err != nil || len(res.Stored) != 1 {
		t.Fatal(err, res.Rejected)
	}
	if err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		return lake.ReplaceBoxes(ctx, tx, res.Stored[0].Seq(), lake.Human, "p", 0, []lake.Box{{Label: "dog", X: 1, Y: 1, W: 2, H: 2}})
	}); err != nil {
		t.Fatal(err)
	}
	check("a file of another type with a dog", 11, 2, 4, 0, 2, 4, 2)
	if n, err := l.Count(ctx, lake.Selection{ItemType: "other", Query: "annotation.label = dog"}); err != nil || n != 1 {
		t.Errorf("other files with a dog: %d %v", n, err)
	}
}

// TestDeepPagesFromTheTail: a page past the middle of a listing of every
// file of a type, read from the listing's far end, is the page the forward
// walk gives, in every sort and order, up to past the last file, in a lake
// of two types.
func TestDeepPagesFromTheTail(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t, func(o *lake.Options) { o.DeepPage = 1 })
	var ups []lake.Upload
	for i := range 11 {
		ups = append(ups, mem(fmt.Sprintf("f%02d.jpg", (i*7)%11), testmedia.JPEG(16+i%3, 16, i)))
	}
	ups = append(ups, mem("a.txt", []byte("a")), mem("b.txt", []byte("b")))
	if res, err := l.Add(ctx, lake.AddOptions{}, ups); err != nil || len(res.Stored) != 13 {
		t.Fatal(err, res.Rejected)
	}
	for _, field := range []string{"date_modified", "date_created", "name", "size", "video_index"} {
		for _, order := range []string{"ASC", "DESC"} {
			s := lake.Sort{Field: field, Order: order}
			all, err := l.ListFiles(ctx, lake.Selection{}, 0, 100, s)
			if err != nil || len(all) != 11 {
				t.Fatalf("%v: %d files, %v", s, len(all), err)
			}
			for size := 1; size <= 4; size++ {
				for idx := 0; idx*size <= len(all)+size; idx++ {
					page, err := l.ListFiles(ctx, lake.Selection{}, idx, size, s)
					want := all[min(idx*size, len(all)):min(idx*size+size, len(all))]
					if err != nil || !slices.Equal(names(page), names(want)) {
						t.Errorf("%v page %d of %d: %v %v, want %v", s, idx, size, names(page), err, names(want))
					}
				}
			}
		}
	}
}

// TestSparseLabelSampleScalesToItsCount: a label on few of the lake's files
// is sampled from its newest files and scaled by its exact count. The three
// rare files are the three modified last, so a walk that scaled by the files
// it passed (three hits in three files) made them the whole lake.
func TestSparseLabelSampleScalesToItsCount(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t, func(o *lake.Options) { o.FacetSample = 2 })
	var ups []lake.Upload
	for i := range 30 {
		ups = append(ups, mem(fmt.Sprintf("f%02d.jpg", i), testmedia.JPEG(16+i, 16, i)))
	}
	res, err := l.Add(ctx, lake.AddOptions{}, ups)
	if err != nil || len(res.Stored) != 30 {
		t.Fatal(err, res.Rejected)
	}
	err = l.DB().Tx(ctx, func(tx *sql.Tx) error {
		for _, i := range []int{3, 10, 20} { // boxed last: the newest, 20 newest of all
			b := []lake.Box{{Label: "rare", X: 1, Y: 1, W: 2, H: 2}}
			if err := lake.ReplaceBoxes(ctx, tx, res.Stored[i].Seq(), lake.Human, "p", 0, b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rare := lake.Selection{Query: "annotation.label = rare"}
	// files 20 and 10 (36 and 26 px wide), each standing for 1.5 files
	h, err := l.Histogram(ctx, rare, "width", 1)
	if err != nil || !h.Estimated || h.Sampled != 2 || h.Total != 3 || h.Min != 26 || h.Max != 36 {
		t.Errorf("histogram of the rare files: %+v %v", h, err)
	}
	n, est, err := l.ClauseCounts(ctx, rare, []string{"annotation.source = human", "annotation.count = 0"})
	if err != nil || !est.Estimated || fmt.Sprint(n) != "[3 0]" {
		t.Errorf("sources of the rare files: %v %+v %v", n, est, err)
	}
}
