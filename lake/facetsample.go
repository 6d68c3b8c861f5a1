package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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
	key, _ := json.Marshal(sel)
	v, err := l.keep(ctx, "sample "+string(key), func() (any, bool, error) {
		ff, err := l.findSample(ctx, sel)
		return ff, ff.sampled > 0, err
	})
	ff, _ := v.(facetFiles)
	return ff, err
}

// findSample is facetSource without the keeping.
func (l *Lake) findSample(ctx context.Context, sel Selection) (facetFiles, error) {
	n := l.opt.FacetSample
	if ff, ok, err := l.labelSample(ctx, sel, n); ok || err != nil {
		return ff, err
	}
	if ff, ok, err := l.sparseSample(ctx, sel, n); ok || err != nil {
		return ff, err
	}
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
	return sampleOf(seqs, n, total)
}

// sampleOf is the facetFiles of the files seqs: all of them, or, when they
// are more than n, their first n standing for a selection of total files.
func sampleOf(seqs []int64, n, total int) (facetFiles, error) {
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
	// A field may be missing (NULL) on a file, eval.<key>.fp on a file the
	// evaluation did not cover: the query is two-valued, so that file is
	// not selected.
	rows, err := l.db.R.QueryContext(ctx, `SELECT f.seq, coalesce((`+c.where+`), 0) FROM file f WHERE f.type = ?
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

// keptTTL is how long a selection's sample and count are kept for estimates.
const keptTTL = 10 * time.Second

// kept holds, a few seconds, what estimates of a selection are made from:
// its sample and its count. One click in the sidebar asks for several
// estimates of the same selection at once, and each would find them again;
// requests arriving while they are found wait for them. Only estimates use
// it: a selection read whole, and the grid's own count, are read anew.
type kept struct {
	mu sync.Mutex
	m  map[string]*keptValue
}

type keptValue struct {
	done chan struct{}
	v    any
	err  error
	at   time.Time
}

// keep returns find's value for key, found at most keptTTL ago; find says
// whether its value may be kept.
func (l *Lake) keep(ctx context.Context, key string, find func() (any, bool, error)) (any, error) {
	k := &l.kept
	k.mu.Lock()
	if k.m == nil || len(k.m) > 64 {
		k.m = map[string]*keptValue{}
	}
	e := k.m[key]
	stale := e == nil
	if e != nil {
		select {
		case <-e.done:
			stale = e.err != nil || l.now().Sub(e.at) > keptTTL
		default: // being found
		}
	}
	if !stale {
		k.mu.Unlock()
		select {
		case <-e.done:
			if e.err != nil && ctx.Err() == nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
				return l.keep(ctx, key, find) // the caller who ran it gave up; this one has not
			}
			return e.v, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e = &keptValue{done: make(chan struct{})}
	k.m[key] = e
	k.mu.Unlock()
	var ok bool
	e.v, ok, e.err = find()
	e.at = l.now()
	if !ok {
		e.at = time.Time{} // stale at once
	}
	close(e.done)
	return e.v, e.err
}

// estimateTotal is the number of files sel selects, counted at most
// keptTTL ago.
func (l *Lake) estimateTotal(ctx context.Context, sel Selection) (int, error) {
	key, _ := json.Marshal(sel)
	v, err := l.keep(ctx, "count "+string(key), func() (any, bool, error) {
		n, err := l.count(ctx, sel)
		return n, true, err
	})
	n, _ := v.(int)
	return n, err
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
