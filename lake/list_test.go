package lake_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/query"
)

// TestListingFallbackGivesTheSamePage forces the page budget to run out at
// once, so every listing takes the set-driven plan, and checks it returns the
// same pages as the index walk.
func TestListingFallbackGivesTheSamePage(t *testing.T) {
	ctx := context.Background()
	walk, dir := openLake(t)
	var ups []lake.Upload
	for i := range 30 {
		ups = append(ups, mem(fmt.Sprintf("f%02d.jpg", i), testmedia.JPEG(16, 16, i)))
	}
	res, err := walk.Add(ctx, lake.AddOptions{Collection: "c"}, ups)
	if err != nil || len(res.Stored) != 30 {
		t.Fatal(err)
	}
	err = walk.DB().Tx(ctx, func(tx *sql.Tx) error {
		for i, f := range res.Stored {
			if i%3 == 0 {
				if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Human, "p", 0,
					[]lake.Box{{Label: "dog", X: 1, Y: 1, W: 2, H: 2}}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	set, err := lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(dir, "media"), SigningKey: []byte("0123456789abcdef0123"),
		PageBudget: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"annotation.label = dog", "annotation.label = dgo", "", "NOT annotation.label = dog"} {
		for page := range 3 {
			a, err1 := walk.ListFiles(ctx, lake.Selection{Query: q}, page, 4, lake.Sort{Field: "name", Order: "ASC"})
			b, err2 := set.ListFiles(ctx, lake.Selection{Query: q}, page, 4, lake.Sort{Field: "name", Order: "ASC"})
			if err1 != nil || err2 != nil || fmt.Sprint(names(a)) != fmt.Sprint(names(b)) {
				t.Errorf("%q page %d: walk %v %v, set-driven %v %v", q, page, names(a), err1, names(b), err2)
			}
		}
	}
}

func names(fs []lake.File) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func TestDrivenBySet(t *testing.T) {
	cases := map[string]bool{
		`annotation.label = dog AND createdAt >= 2026-01-01`: true,
		`Tags IN (a, b)`:     true,
		`collection = north`: true,
		`annotation(label = dog AND source = machine)`: true,
		`NOT annotation.label = dog`:                   false,
		`annotation.label = dog OR width > 10`:         false,
		`Tags != sunny`:                                false,
		`annotation.count > 2`:                         false,
		`createdAt >= 2026-01-01`:                      false,
	}
	for q, want := range cases {
		e, err := query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := lake.DrivenBySet(e); got != want {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
}

// TestPageBudgetStartsWithTheTurn: a listing that waits for a reader turn
// (every turn taken by other reads, as at a click in the sidebar) keeps its
// whole page budget for its walk, instead of losing it in the queue and
// falling back to the plan that reads every selected file.
func TestPageBudgetStartsWithTheTurn(t *testing.T) {
	l := sixSmallFiles(t, func(o *lake.Options) { o.PageBudget = 2 * time.Second })
	ctx := context.Background()
	var taken []func()
	for {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		release, err := l.DB().Turn(short)
		cancel()
		if err != nil {
			break
		}
		taken = append(taken, release)
	}
	done := make(chan error)
	go func() {
		fs, err := l.ListFiles(ctx, lake.Selection{Query: "width = 16"}, 0, 4, lake.Sort{})
		if err == nil && len(fs) != 4 {
			err = fmt.Errorf("%d files", len(fs))
		}
		done <- err
	}()
	time.Sleep(2500 * time.Millisecond) // longer than the budget
	for _, release := range taken {
		release()
	}
	if err := <-done; err != nil || l.Fallbacks() != 0 {
		t.Errorf("listing after a wait for a turn: %v, %d fallbacks", err, l.Fallbacks())
	}
}

// sixSmallFiles opens a lake holding six 16x16 JPEGs.
func sixSmallFiles(t *testing.T, opts ...func(*lake.Options)) *lake.Lake {
	t.Helper()
	l, _ := openLake(t, opts...)
	var ups []lake.Upload
	for i := range 6 {
		ups = append(ups, mem(fmt.Sprintf("f%02d.jpg", i), testmedia.JPEG(16, 16, i)))
	}
	if res, err := l.Add(context.Background(), lake.AddOptions{}, ups); err != nil || len(res.Stored) != 6 {
		t.Fatal(err, res.Rejected)
	}
	return l
}

// TestPageBudgetRunningOutMidPage: a budget that runs out while a page's
// rows are read (a slow reader, a busy machine) gives the page, not the
// deadline as an error; rows found in the budget say the selection is
// common, so the walk is run again without one rather than the plan that
// reads every selected file.
func TestPageBudgetRunningOutMidPage(t *testing.T) {
	l := sixSmallFiles(t)
	// Budgets and sleeps are long enough that a loaded machine (make test
	// runs seven streams on two cores) does not run a budget out by itself.
	seqs, err := l.WalkSeqs(lake.Selection{Query: "width = 16"}, 6, 250*time.Millisecond, func() { time.Sleep(150 * time.Millisecond) })
	if err != nil || len(seqs) != 6 || l.Fallbacks() != 0 {
		t.Errorf("walk whose budget ran out mid-page: %v %v, %d fallbacks", seqs, err, l.Fallbacks())
	}
}

// TestPageBudgetRunningOutTwice: a walk that found rows at once but no more
// after them (matches bunched at the start of the sort order) runs out of
// its second budget too and takes the other plan.
func TestPageBudgetRunningOutTwice(t *testing.T) {
	l := sixSmallFiles(t)
	calls := 0
	slow := func() { // three rows at once, then one each half second
		if calls++; calls > 3 {
			time.Sleep(500 * time.Millisecond)
		}
	}
	seqs, err := l.WalkSeqs(lake.Selection{Query: "width = 16"}, 6, 100*time.Millisecond, slow) // the second budget is 20x
	if err != nil || len(seqs) != 6 || l.Fallbacks() != 1 {
		t.Errorf("walk that slowed after its first rows: %v %v, %d fallbacks", seqs, err, l.Fallbacks())
	}
}

// TestPageBudgetCommonSelection: a walk that found few rows before its
// budget ran out (a busy machine) is walked again when most of the newest
// files match, and left to the set-driven plan when few do.
func TestPageBudgetCommonSelection(t *testing.T) {
	ctx := context.Background()
	l, _ := openLake(t)
	var ups []lake.Upload
	for i := range 20 {
		w := 16
		if i == 7 {
			w = 17
		}
		ups = append(ups, mem(fmt.Sprintf("f%02d.jpg", i), testmedia.JPEG(w, 16, i)))
	}
	if res, err := l.Add(ctx, lake.AddOptions{}, ups); err != nil || len(res.Stored) != 20 {
		t.Fatal(err, res.Rejected)
	}
	for _, c := range []struct {
		query     string
		files     int
		fallbacks int64
	}{{"width = 16", 19, 0}, {"width = 17", 1, 1}} {
		calls := 0
		stall := func() { // the first row a second: past the budget
			if calls++; calls == 1 {
				time.Sleep(time.Second)
			}
		}
		before := l.Fallbacks()
		seqs, err := l.WalkSeqs(lake.Selection{Query: c.query}, 20, 500*time.Millisecond, stall)
		if err != nil || len(seqs) != c.files || l.Fallbacks()-before != c.fallbacks {
			t.Errorf("%q: %d files %v, %d fallbacks; want %d files, %d fallbacks", c.query, len(seqs), err,
				l.Fallbacks()-before, c.files, c.fallbacks)
		}
	}
}
