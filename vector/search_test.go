package vector

import (
	"context"
	"math/rand/v2"
	"testing"
)

// TestSearchExact compares both search paths, with and without pre-filters,
// against a float64 brute force over the same vectors.
func TestSearchExact(t *testing.T) {
	ctx := context.Background()
	const n, dim = 3000, 48
	r := rand.New(rand.NewPCG(5, 5))
	for _, path := range []struct {
		name string
		opt  Options
	}{{"memory", Options{NoBackgroundLoad: true}}, {"sqlite-vec", Options{CacheBytes: -1}}} {
		t.Run(path.name, func(t *testing.T) {
			s, db := newStore(t, path.opt)
			names := addFiles(t, db, n)
			vecs := randVecs(r, n, dim)
			if _, err := s.InsertMany(ctx, "cos", dim, records(names, vecs)); err != nil {
				t.Fatal(err)
			}
			if err := s.CreateModel(ctx, "euclid", dim, L2); err != nil {
				t.Fatal(err)
			}
			if _, err := s.InsertMany(ctx, "euclid", dim, records(names, vecs)); err != nil {
				t.Fatal(err)
			}
			if path.opt.CacheBytes >= 0 {
				for _, m := range []string{"cos", "euclid"} {
					if err := s.Warm(ctx, m); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The filter keeps files with size 3 (seq % 10 == 3, see addFiles).
			var fNames []string
			var fVecs [][]float32
			var fSeqs []int64
			for i := range names {
				if (i+1)%10 == 3 {
					fNames, fVecs = append(fNames, names[i]), append(fVecs, vecs[i])
					fSeqs = append(fSeqs, int64(i+1))
				}
			}
			for _, metric := range []string{Cosine, L2} {
				model := map[string]string{Cosine: "cos", L2: "euclid"}[metric]
				for qi := range 20 {
					q := randVecs(r, 1, dim)[0]
					k := []int{1, 10, 100, 1000}[qi%4]
					hits, err := s.Search(ctx, SearchQuery{Model: model, Vector: q, K: k})
					if err != nil {
						t.Fatal(err)
					}
					checkExact(t, hits, bruteForce(q, names, vecs, metric, k))
					for _, f := range []*Filter{
						{Where: "f.size = ?", Args: []any{3}},
						{Seqs: fSeqs},
						{Where: "f.type = ?", Args: []any{"image"}, Seqs: fSeqs},
					} {
						hits, err := s.Search(ctx, SearchQuery{Model: model, Vector: q, K: k, Filter: f})
						if err != nil {
							t.Fatal(err)
						}
						checkExact(t, hits, bruteForce(q, fNames, fVecs, metric, k))
					}
				}
				// By name: the file itself is left out unless asked for.
				hits, err := s.Search(ctx, SearchQuery{Model: model, UniqueName: names[7], K: 5})
				if err != nil {
					t.Fatal(err)
				}
				want := bruteForce(vecs[7], append(names[:7:7], names[8:]...), append(vecs[:7:7], vecs[8:]...), metric, 5)
				checkExact(t, hits, want)
				hits, err = s.Search(ctx, SearchQuery{Model: model, UniqueName: names[7], K: 5, IncludeSelf: true})
				if err != nil || hits[0].UniqueName != names[7] || hits[0].Distance > 1e-5 {
					t.Fatalf("include self: %+v, %v", hits, err)
				}
			}
			hits, err := s.Search(ctx, SearchQuery{Model: "cos", Vector: vecs[0], K: 10, Filter: &Filter{Seqs: []int64{}}})
			if err != nil || len(hits) != 0 {
				t.Fatalf("empty allow-list: %+v, %v", hits, err)
			}
		})
	}
}

// TestCopyFollowsOtherWriters checks that a loaded copy catches up with
// writes made by another Store (another process) through the change log.
func TestCopyFollowsOtherWriters(t *testing.T) {
	ctx := context.Background()
	a, db := newStore(t, Options{NoBackgroundLoad: true})
	b := openStore(t, db, Options{CacheBytes: -1})
	names := addFiles(t, db, 200)
	r := rand.New(rand.NewPCG(6, 6))
	vecs := randVecs(r, 200, 16)
	if _, err := a.Insert(ctx, "m", 16, records(names[:100], vecs[:100])); err != nil {
		t.Fatal(err)
	}
	if err := a.Warm(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	// b adds 100 and replaces 10 of a's; a's copy did not see either.
	if _, err := b.Insert(ctx, "m", 16, records(names[100:], vecs[100:])); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		vecs[i] = randVecs(r, 1, 16)[0]
	}
	if _, err := b.Insert(ctx, "m", 16, records(names[:10], vecs[:10])); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Insert(ctx, "m", 16, records(names[10:11], vecs[10:11])); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		q := randVecs(r, 1, 16)[0]
		hits, err := a.Search(ctx, SearchQuery{Model: "m", Vector: q, K: 50})
		if err != nil {
			t.Fatal(err)
		}
		checkExact(t, hits, bruteForce(q, names, vecs, Cosine, 50))
	}
	ms, _ := a.Models(ctx)
	if !ms[0].Cached || ms[0].CacheRows != 200 {
		t.Fatalf("copy: %+v", ms[0])
	}
}

// TestCacheBudget checks that a model too big for the budget is searched
// through sqlite-vec, exactly.
func TestCacheBudget(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{CacheBytes: 10_000})
	names := addFiles(t, db, 100)
	vecs := randVecs(rand.New(rand.NewPCG(7, 7)), 100, 32)
	if _, err := s.Insert(ctx, "m", 32, records(names, vecs)); err != nil {
		t.Fatal(err)
	}
	if err := s.Warm(ctx, "m"); err == nil {
		t.Fatal("warm fitted 100x32 floats in 10 kB")
	}
	hits, err := s.Search(ctx, SearchQuery{Model: "m", Vector: vecs[3], K: 7})
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, hits, bruteForce(vecs[3], names, vecs, Cosine, 7))
	if s.used != 0 {
		t.Fatalf("budget leaked: %d bytes", s.used)
	}
}
