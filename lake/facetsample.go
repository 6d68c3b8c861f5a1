package lake

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"time"

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

// sampleBudget is how long the walk for a sample may try the plan of a
// listing's page before the set-driven plan takes over (see walk): a sample
// is a page of FacetSample files, not of a few hundred.
const sampleBudget = 100 * time.Millisecond

// facetSource lists the files a facet reads of sel: the first FacetSample+1
// in the grid's default order (most recently modified first), planned as a
// page of the grid is. Up to FacetSample are the whole selection; one more
// says it is larger, and then its first FacetSample are read and their
// counts scaled by its size. Reading every selected file took seconds at a
// million files, and a click in the sidebar asks for several such counts.
func (l *Lake) facetSource(ctx context.Context, sel Selection) (facetFiles, error) {
	n := l.opt.FacetSample
	seqs := make([]int64, 0, n+1)
	err := l.walk(ctx, sel, 0, n+1, Sort{}, query.Files, "f.seq", sampleBudget, func(rows *sql.Rows) error {
		var seq int64
		err := rows.Scan(&seq)
		seqs = append(seqs, seq)
		return err
	}, func() { seqs = seqs[:0] })
	if err != nil {
		return facetFiles{}, err
	}
	ff := facetFiles{from: "file f", where: "f.seq IN (SELECT value FROM json_each(?))"}
	if len(seqs) > n {
		total, err := l.estimateTotal(ctx, sel)
		if err != nil {
			return facetFiles{}, err
		}
		seqs, ff.sampled, ff.scale = seqs[:n], n, float64(total)/float64(n)
	}
	list, err := json.Marshal(seqs)
	ff.args = []any{string(list)}
	return ff, err
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
