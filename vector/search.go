package vector

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
)

// Get returns the vectors of model for names, in the order asked (each name
// once), and the names that have none (no such lake file, or no vector for
// the model). An unknown model is not_found.
func (s *Store) Get(ctx context.Context, modelName string, names []string) (found []Record, missing []string, err error) {
	m, err := mustModel(ctx, s.db.R, modelName)
	if err != nil {
		return nil, nil, err
	}
	names = dedupe(names)
	const step = 10000 // bounds the JSON argument
	for off := 0; off < len(names); off += step {
		part := names[off:min(off+step, len(names))]
		vecs, err := s.readByName(ctx, m, part)
		if err != nil {
			return nil, nil, fmt.Errorf("vector: get: %w", err)
		}
		for _, name := range part {
			if v, ok := vecs[name]; ok {
				found = append(found, Record{UniqueName: name, Vector: v})
			} else {
				missing = append(missing, name)
			}
		}
	}
	return found, missing, nil
}

func (s *Store) readByName(ctx context.Context, m *model, names []string) (map[string][]float32, error) {
	seqs, err := lake.SeqsOfNames(ctx, s.db.R, names)
	if err != nil {
		return nil, err
	}
	nameOf := make(map[int64]string, len(names))
	for i, seq := range seqs {
		if seq != 0 {
			nameOf[seq] = names[i]
		}
	}
	// vec0 turns "rowid IN (...)" into a full scan; CROSS JOIN keeps the keys
	// outside, so each is one rowid lookup.
	rows, err := s.db.R.QueryContext(ctx, `SELECT v.rowid, v.embedding
		FROM json_each(?) AS j CROSS JOIN `+m.table+` AS v ON v.rowid = j.value`, jsonInts(slices.Collect(maps.Keys(nameOf))))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string][]float32, len(names))
	for rows.Next() {
		var seq int64
		var b []byte
		if err := rows.Scan(&seq, &b); err != nil {
			return nil, err
		}
		out[nameOf[seq]] = decode(b)
	}
	return out, rows.Err()
}

func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Search returns the K nearest neighbours of the query among the files with
// a vector for the model that the filter allows, nearest first. Results are
// exact (a full scan, in memory or in sqlite-vec).
func (s *Store) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	if q.K < 1 || q.K > MaxK {
		return nil, errs.Invalid("k", "k must be 1..%d, got %d", MaxK, q.K)
	}
	if (q.UniqueName == "") == (q.Vector == nil) {
		return nil, errs.Invalid("unique_name", "give exactly one of unique_name and vector")
	}
	m, err := mustModel(ctx, s.db.R, q.Model)
	if err != nil {
		return nil, err
	}
	if q.Vector != nil {
		if err := checkVector("vector", q.Vector, m.dim); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		// Another pass when a hit's file was deleted under us: the next one
		// catches up with the delete and ranks a replacement.
		hits, stale, err := s.search(ctx, m, q)
		if err != nil || !stale || attempt == 2 {
			return hits, err
		}
	}
}

func (s *Store) search(ctx context.Context, m *model, q SearchQuery) (hits []Hit, stale bool, err error) {
	qv, self, err := s.queryVector(ctx, m, q)
	if err != nil {
		return nil, false, err
	}
	if q.IncludeSelf {
		self = 0
	}
	c, err := s.ready(ctx, m)
	if err != nil {
		return nil, false, fmt.Errorf("vector: search: %w", err)
	}
	var best []scored
	if c != nil {
		best, err = s.searchCopy(ctx, c, qv, q, self)
	}
	if c == nil || errors.Is(err, errDropped) {
		best, err = s.searchVec(ctx, m, qv, q, self)
	}
	if err != nil {
		return nil, false, fmt.Errorf("vector: search: %w", err)
	}
	return s.name(ctx, m, best)
}

// queryVector returns the query as given, or the vector of the named file
// together with that file's seq.
func (s *Store) queryVector(ctx context.Context, m *model, q SearchQuery) ([]float32, int64, error) {
	if q.UniqueName == "" {
		return q.Vector, 0, nil
	}
	seqs, err := lake.SeqsOfNames(ctx, s.db.R, []string{q.UniqueName})
	if err != nil {
		return nil, 0, fmt.Errorf("vector: search: %w", err)
	}
	seq := seqs[0]
	if seq == 0 {
		return nil, 0, errs.New(errs.NotFound, "unique_name", "no lake file has uniqueName %q", q.UniqueName)
	}
	var b []byte
	err = s.db.R.QueryRowContext(ctx, `SELECT embedding FROM `+m.table+` WHERE rowid = ?`, seq).Scan(&b)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("vector: search: %w", err)
	}
	if b == nil {
		return nil, 0, errs.New(errs.NotFound, "unique_name", "%q has no embedding for model %q", q.UniqueName, m.name)
	}
	return decode(b), seq, nil
}

func (s *Store) searchCopy(ctx context.Context, c *modelCache, qv []float32, q SearchQuery, self int64) ([]scored, error) {
	var allow bitset
	if q.Filter.active() {
		seqs, err := s.allowed(ctx, q.Filter)
		if err != nil {
			return nil, err
		}
		allow = newBitset(seqs)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	x := c.m
	if x == nil { // dropped between catching up and now
		return nil, errDropped
	}
	qn := slices.Clone(qv)
	if x.cosine {
		normalize(qn)
	}
	return x.scan(qn, q.K, allow, self, s.opt.Workers), nil
}

var errDropped = errors.New("in-memory copy dropped during search")

// allowed runs the filter: file seqs matching Where and in Seqs.
func (s *Store) allowed(ctx context.Context, f *Filter) ([]int64, error) {
	if f.Where == "" {
		return f.Seqs, nil
	}
	query, args := filterSQL(f)
	return sqlitedb.Int64s(ctx, s.db.R, query, args...)
}

func (f *Filter) active() bool { return f != nil && (f.Where != "" || f.Seqs != nil) }

// filterSQL selects the seqs a filter allows.
func filterSQL(f *Filter) (string, []any) {
	where, args := "1", []any(nil)
	if f.Where != "" {
		where, args = "("+f.Where+")", append(args, f.Args...)
	}
	if f.Seqs != nil {
		where += " AND f.seq IN (SELECT value FROM json_each(?))"
		args = append(args, jsonInts(f.Seqs))
	}
	return lake.FileSeqsSQL(where), args
}

// searchVec runs sqlite-vec's KNN (an exact scan in C); the filter becomes
// a rowid constraint, which vec0 applies before ranking.
func (s *Store) searchVec(ctx context.Context, m *model, qv []float32, q SearchQuery, self int64) ([]scored, error) {
	k := q.K
	if self != 0 {
		k++ // self is its own nearest; drop it below
	}
	query := `SELECT rowid, distance FROM ` + m.table + ` WHERE embedding MATCH ? AND k = ?`
	args := []any{encode(qv), k}
	if q.Filter.active() {
		fq, fargs := filterSQL(q.Filter)
		query += ` AND rowid IN (` + fq + `)`
		args = append(args, fargs...)
	}
	rows, err := s.db.R.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]scored, 0, k)
	for rows.Next() {
		var seq int64
		var d float64
		if err := rows.Scan(&seq, &d); err != nil {
			return nil, err
		}
		if seq != self {
			out = append(out, scored{seq: seq, score: fromDistance(m.metric, d)})
		}
	}
	return out[:min(len(out), q.K)], rows.Err()
}

// fromDistance maps a sqlite-vec distance to a score and toDistance back,
// so both search paths share one ranking and one output.
func fromDistance(metric string, d float64) float32 {
	if metric == Cosine {
		return float32(1 - d)
	}
	return -float32(d * d)
}

func toDistance(metric string, score float32) float64 {
	if metric == Cosine {
		return 1 - float64(score)
	}
	return math.Sqrt(float64(-score))
}

// name turns scored seqs into hits; stale reports a seq with no file (deleted
// after the copy caught up), in which case hits are incomplete.
func (s *Store) name(ctx context.Context, m *model, best []scored) (hits []Hit, stale bool, err error) {
	seqs := make([]int64, len(best))
	for i, b := range best {
		seqs[i] = b.seq
	}
	names, err := lake.NamesOfSeqs(ctx, s.db.R, seqs)
	if err != nil {
		return nil, false, fmt.Errorf("vector: search: %w", err)
	}
	hits = make([]Hit, 0, len(best))
	for _, b := range best {
		n, ok := names[b.seq]
		if !ok {
			stale = true
			continue
		}
		hits = append(hits, Hit{UniqueName: n, Distance: toDistance(m.metric, b.score)})
	}
	return hits, stale, nil
}
