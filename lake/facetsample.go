package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/query"
)

// facetFiles is how a count for the sidebar reads a selection's files: all
// of them, or the first FacetSample when more are selected, each standing
// for scale selected files. Either way they are a list of files (f).
type facetFiles struct {
	from, where string
	args        []any
	sampled     int // files read when estimated; 0 when every selected file was read
	scale       float64
}

// scaled is a count over the files read, scaled to the whole selection.
func (ff facetFiles) scaled(n int) int {
	if ff.sampled == 0 {
		return n
	}
	return int(math.Round(float64(n) * ff.scale))
}

// sampleWalk is how many files, most recently modified first, the walk for
// a sample passes at most before leaving a rare selection to the plan that
// starts from its sets: a selection of at least 1 file in 20 fills a sample
// of 5,000 by then. A count of rows, not a time budget: on a machine shared
// with other work a time budget ran out on the cheap plan and fell back to
// the costly one (1.2 s of CPU for a sample of `annotation.source = machine`
// at a million files).
const sampleWalk = 20

// facetSource lists the files a facet reads of sel: the first FacetSample+1
// in the grid's default order (most recently modified first). Up to
// FacetSample are the whole selection; one more says it is larger, and then
// its first FacetSample are read and their counts scaled to its size. They
// are found by walking the files in that order, testing each (at most
// sampleWalk*FacetSample of them); the selection's size is then estimated
// from how many files the walk passed. A rarer selection is listed from its
// sets, as a grid page is, and counted. Reading every selected file took
// seconds at a million files, and a click in the sidebar asks for several
// such counts.
func (l *Lake) facetSource(ctx context.Context, sel Selection) (facetFiles, error) {
	n := l.opt.FacetSample
	seqs, passed, err := l.sampleWalk(ctx, sel, n+1, sampleWalk*n)
	if err != nil {
		return facetFiles{}, err
	}
	total := 0
	if len(seqs) > n {
		all, err := l.estimateTotal(ctx, Selection{ItemType: sel.ItemType})
		if err != nil {
			return facetFiles{}, err
		}
		total = max(n+1, int(math.Round(float64(all)*float64(len(seqs))/float64(passed))))
	} else if passed == sampleWalk*n { // not the whole lake: list it from its sets
		seqs = seqs[:0]
		// No budget: straight to the plan that starts from the sets.
		err := l.walk(ctx, sel, 0, n+1, Sort{}, query.Files, "f.seq", 0, func(rows *sql.Rows) error {
			var seq int64
			err := rows.Scan(&seq)
			seqs = append(seqs, seq)
			return err
		}, func() { seqs = seqs[:0] })
		if err == nil && len(seqs) > n {
			total, err = l.estimateTotal(ctx, sel)
		}
		if err != nil {
			return facetFiles{}, err
		}
	}
	ff := facetFiles{from: "file f", where: "f.seq IN (SELECT value FROM json_each(?))"}
	if len(seqs) > n {
		seqs, ff.sampled, ff.scale = seqs[:n], n, float64(total)/float64(n)
	}
	list, err := json.Marshal(seqs)
	ff.args = []any{string(list)}
	return ff, err
}

// sampleWalk walks the files of sel's type, most recently modified first,
// at most max of them, and returns the first want that sel selects and how
// many files it passed.
func (l *Lake) sampleWalk(ctx context.Context, sel Selection, want, most int) ([]int64, int, error) {
	c, err := l.compile(ctx, sel, query.Page)
	if err != nil {
		return nil, 0, err
	}
	if c.target != query.Files {
		return nil, 0, errs.Invalid("itemType", "itemType %s selects collections; counts are of files", sel.ItemType)
	}
	release, err := l.db.Turn(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer release()
	rows, err := l.db.R.QueryContext(ctx, `SELECT f.seq, (`+c.where+`) FROM file f WHERE f.type = ?
		ORDER BY f.updated_at DESC, f.seq DESC LIMIT `+strconv.Itoa(most), append(c.args, defaultStr(sel.ItemType, "image"))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var seqs []int64
	passed := 0
	for len(seqs) < want && rows.Next() {
		var seq int64
		var hit bool
		if err := rows.Scan(&seq, &hit); err != nil {
			return nil, 0, err
		}
		passed++
		if hit {
			seqs = append(seqs, seq)
		}
	}
	return seqs, passed, rows.Err()
}

// totalTTL is how long a selection's count is kept for scaling estimates.
const totalTTL = 10 * time.Second

// totals keeps the counts of selections that estimates were scaled by, a
// few seconds: one click in the sidebar asks for several estimates of the
// same selection at once, and each would count it again (the grid's own
// count, which must be exact, never comes from here). Requests arriving
// while a count runs wait for it.
type totals struct {
	mu sync.Mutex
	m  map[string]*total
}

type total struct {
	done chan struct{}
	n    int
	err  error
	at   time.Time
}

// estimateTotal is the number of files sel selects, counted at most
// totalTTL ago.
func (l *Lake) estimateTotal(ctx context.Context, sel Selection) (int, error) {
	key, _ := json.Marshal(sel)
	l.totals.mu.Lock()
	if l.totals.m == nil || len(l.totals.m) > 64 {
		l.totals.m = map[string]*total{}
	}
	e := l.totals.m[string(key)]
	stale := e == nil
	if e != nil {
		select {
		case <-e.done:
			stale = e.err != nil || l.now().Sub(e.at) > totalTTL
		default: // being counted
		}
	}
	if !stale {
		l.totals.mu.Unlock()
		select {
		case <-e.done:
			return e.n, e.err
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	e = &total{done: make(chan struct{})}
	l.totals.m[string(key)] = e
	l.totals.mu.Unlock()
	e.n, e.err = l.Count(ctx, sel)
	e.at = l.now()
	close(e.done)
	return e.n, e.err
}

// Estimate says whether counts were read from a sample of the selection.
type Estimate struct {
	// Estimated: the selection has more than the lake's FacetSample files,
	// so the counts are those of its newest FacetSample scaled to all of it.
	Estimated bool `json:"estimated,omitempty"`
	Sampled   int  `json:"sampled,omitempty"` // files counted when Estimated
}

func (ff facetFiles) estimate() Estimate {
	return Estimate{Estimated: ff.sampled > 0, Sampled: ff.sampled}
}

// ClauseCounts counts, for each clause (a query of its own), the files sel
// selects that the clause selects too, in one pass over sel's files (see
// facetSource for when that pass reads a sample).
func (l *Lake) ClauseCounts(ctx context.Context, sel Selection, clauses []string) ([]int, Estimate, error) {
	var sums []string
	var args []any
	for _, q := range clauses {
		// Probes, not lists: only the selection's files are tested.
		cc, err := l.compile(ctx, Selection{ItemType: sel.ItemType, Query: q}, query.Page)
		if err != nil {
			return nil, Estimate{}, err
		}
		sums, args = append(sums, "coalesce(sum("+cc.where+"), 0)"), append(args, cc.args...)
	}
	ff, err := l.facetSource(ctx, sel)
	if err != nil {
		return nil, Estimate{}, err
	}
	release, err := l.db.Turn(ctx)
	if err != nil {
		return nil, Estimate{}, err
	}
	defer release()
	out := make([]int, len(clauses))
	dst := make([]any, len(out))
	for i := range out {
		dst[i] = &out[i]
	}
	err = l.db.R.QueryRowContext(ctx, `SELECT `+strings.Join(sums, ", ")+` FROM `+ff.from+` WHERE `+ff.where,
		append(args, ff.args...)...).Scan(dst...)
	for i := range out {
		out[i] = ff.scaled(out[i])
	}
	return out, ff.estimate(), err
}

// HasType reports whether the lake has a file of type t: a lake of images
// only answers its video and other counts without counting a query.
func (l *Lake) HasType(ctx context.Context, t FileType) (bool, error) {
	var ok bool
	err := l.db.R.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM file WHERE type = ?)`, string(t)).Scan(&ok)
	return ok, err
}
