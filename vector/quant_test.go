package vector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// quantMatrix builds an in-memory copy with its quantized twin from rows
// put under shuffled seqs, so row order and seq order differ (ties are
// broken by seq).
func quantMatrix(r *rand.Rand, dim int, cosine bool, rows [][]float32) *matrix {
	x := &matrix{dim: dim, cosine: cosine, row: map[int64]int32{}, quant: newQuant(dim, 0)}
	seqs := r.Perm(len(rows))
	for i, v := range rows {
		x.put(int64(seqs[i]+1), v)
	}
	return x
}

// trickyRows are random rows of a few scales plus exact duplicates (equal
// scores under any query), near duplicates and a zero row (l2 only).
func trickyRows(r *rand.Rand, n, dim int, cosine bool) [][]float32 {
	rows := make([][]float32, 0, n)
	for len(rows) < n {
		v := make([]float32, dim)
		switch i := len(rows); {
		case i%7 == 3: // an exact copy of an earlier row
			copy(v, rows[r.IntN(i)])
		case i%11 == 5: // a near copy
			for j, c := range rows[r.IntN(i)] {
				v[j] = c + float32(r.NormFloat64()*1e-4)
			}
		case i == 50 && !cosine:
		default:
			scale := []float64{1, 1e-3, 1e3}[i%3]
			if cosine {
				scale = 1
			}
			for j := range v {
				v[j] = float32(r.NormFloat64() * scale)
			}
		}
		rows = append(rows, v)
	}
	return rows
}

// TestQuantScanEqualsExact: the two-pass search returns exactly what scoring
// every row returns (the same seqs, scores and order, ties included), for
// both metrics, odd dimensions, filters, a skipped seq, and after rows were
// replaced and removed.
func TestQuantScanEqualsExact(t *testing.T) {
	for _, cosine := range []bool{true, false} {
		for _, dim := range []int{37, 128} {
			t.Run(fmt.Sprintf("cosine=%v/dim=%d", cosine, dim), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(dim), 7))
				rows := trickyRows(r, 6001, dim, cosine)
				x := quantMatrix(r, dim, cosine, rows)
				checkQuant(t, r, x, rows)
				// Churn: replace, remove (the last row moves) and add rows.
				for i := range 500 {
					seq := x.seqs[r.IntN(len(x.seqs))]
					switch i % 3 {
					case 0:
						x.put(seq, rows[r.IntN(len(rows))])
					case 1:
						x.remove(seq)
					default:
						x.put(int64(len(rows)+i+1), rows[r.IntN(len(rows))])
					}
				}
				checkQuant(t, r, x, rows)
			})
		}
	}
}

func checkQuant(t *testing.T, r *rand.Rand, x *matrix, rows [][]float32) {
	t.Helper()
	allowHalf := make([]int64, 0, len(x.seqs)/2)
	for _, seq := range x.seqs {
		if r.IntN(2) == 0 {
			allowHalf = append(allowHalf, seq)
		}
	}
	for qi := range 30 {
		q := slices.Clone(rows[r.IntN(len(rows))]) // a stored row: ties at the top
		if qi%2 == 1 {
			for j := range q {
				q[j] = float32(r.NormFloat64())
			}
		}
		if x.cosine {
			normalize(q)
		}
		checkBounds(t, x, q)
		for _, k := range []int{1, 10, 100} {
			var allow bitset
			if qi%3 == 0 {
				allow = newBitset(allowHalf)
			}
			skip := int64(0)
			if qi%4 == 0 {
				skip = x.seqs[r.IntN(len(x.seqs))]
			}
			for _, workers := range []int{1, 3} {
				want := x.scanExact(q, k, allow, skip, workers)
				got := x.scanQuant(q, k, allow, skip, workers)
				if !slices.Equal(got, want) {
					t.Fatalf("query %d k=%d workers=%d: two-pass search\n%v\nwant\n%v", qi, k, workers, got, want)
				}
			}
		}
	}
}

// checkBounds: every row's interval holds the score the exact scan computes.
func checkBounds(t *testing.T, x *matrix, q []float32) {
	t.Helper()
	p := x.quant.prepare(q, x.cosine)
	var raw [qLanes]int64
	for b := 0; b*qLanes < len(x.seqs); b++ {
		block8(x.quant.words[b*x.quant.dp:(b+1)*x.quant.dp], p.v, &raw)
		for l := range qLanes {
			i := b*qLanes + l
			if i >= len(x.seqs) {
				break
			}
			var want int64
			for j := range x.dim {
				want += int64(x.quant.words[b*x.quant.dp+j]>>(8*l)&0xff) * int64(p.v[j])
			}
			if raw[l] != want {
				t.Fatalf("row %d: kernel gives %d, want %d", i, raw[l], want)
			}
			lo, hi := p.bounds(x.quant.rows[i], raw[l])
			if s := float64(x.score(q, i)); s < lo || s > hi {
				t.Fatalf("row %d: score %v outside [%v, %v]", i, s, lo, hi)
			}
		}
	}
}

// TestQuantPrunes: on random 512-d unit vectors the first pass leaves under
// 1% of the rows to score exactly; more would mean bounds too loose to beat
// the plain scan.
func TestQuantPrunes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim = 20000, 512
	rows := randVecs(r, n, dim)
	x := quantMatrix(r, dim, true, rows)
	q := randVecs(r, 1, dim)[0]
	normalize(q)
	los, cands := x.firstPass(x.quant.prepare(q, true), 10, nil, 0, 0, (n+qLanes-1)/qLanes)
	slices.Sort(los)
	kept := 0
	for _, c := range cands {
		if c.hi >= los[0] {
			kept++
		}
	}
	if kept > n/100 {
		t.Fatalf("%d of %d rows left to rescore", kept, n)
	}
	t.Logf("%d of %d rows rescored (%d candidates on the way)", kept, n, len(cands))
}

// TestSearchTwoPassThroughStore: a loaded copy past qMinRows (read from
// sqlite-vec, then changed by inserts) answers Search with exactly the
// ranking of a float32 scan, ties broken by seq: every fifth vector repeats
// an earlier one, and queries are stored vectors.
func TestSearchTwoPassThroughStore(t *testing.T) {
	ctx := context.Background()
	const n, dim = qMinRows + 904, 24
	r := rand.New(rand.NewPCG(8, 9))
	s, db := newStore(t, Options{NoBackgroundLoad: true})
	names := addFiles(t, db, n)
	vecs := randVecs(r, n, dim)
	for i := 5; i < n; i += 5 {
		vecs[i] = vecs[r.IntN(i)]
	}
	if _, err := s.InsertMany(ctx, "cos", dim, records(names[:n-100], vecs[:n-100])); err != nil {
		t.Fatal(err)
	}
	if err := s.Warm(ctx, "cos"); err != nil {
		t.Fatal(err)
	}
	// Applied to the loaded copy: new rows and replaced ones.
	if _, err := s.InsertMany(ctx, "cos", dim, records(names[n-100:], vecs[n-100:])); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		j := r.IntN(n)
		vecs[j] = vecs[r.IntN(n)]
		if _, err := s.InsertMany(ctx, "cos", dim, records(names[j:j+1], vecs[j:j+1])); err != nil {
			t.Fatal(err)
		}
	}
	rows := make([][]float32, n)
	for i, v := range vecs {
		rows[i] = slices.Clone(v)
		normalize(rows[i])
	}
	for qi := range 20 {
		raw := vecs[r.IntN(n)]
		q := slices.Clone(raw) // as Search normalizes it
		normalize(q)
		k := []int{1, 10, 100}[qi%3]
		hits, err := s.Search(ctx, SearchQuery{Model: "cos", Vector: raw, K: k})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]scored, n)
		for i := range rows {
			want[i] = scored{int64(i + 1), dot(q, rows[i])}
		}
		want = ranked(want, k)
		if len(hits) != len(want) {
			t.Fatalf("query %d: %d hits, want %d", qi, len(hits), len(want))
		}
		for i, h := range hits {
			if w := want[i]; h.UniqueName != names[w.seq-1] || h.Distance != toDistance(Cosine, w.score) {
				t.Fatalf("query %d hit %d: %s at %v, want %s at %v", qi, i, h.UniqueName, h.Distance, names[w.seq-1], toDistance(Cosine, w.score))
			}
		}
	}
}
