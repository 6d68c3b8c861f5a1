package vector

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/framelake/framelake/internal/sqlitedb"
)

// openDB opens (or reopens) a database at path with the lake's and this
// package's migrations applied.
func openDB(tb testing.TB, path string) *sqlitedb.DB {
	tb.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "lake", os.DirFS("../lake/migrations")); err != nil {
		tb.Fatal(err)
	}
	if err := db.Migrate(ctx, "vector", Migrations); err != nil {
		tb.Fatal(err)
	}
	return db
}

func openStore(tb testing.TB, db *sqlitedb.DB, opt Options) *Store {
	tb.Helper()
	s, err := Open(context.Background(), db, opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func newStore(tb testing.TB, opt Options) (*Store, *sqlitedb.DB) {
	db := openDB(tb, filepath.Join(tb.TempDir(), "t.db"))
	return openStore(tb, db, opt), db
}

// addFiles creates n lake files named u<seq> and returns their names; the
// test writes the lake's table directly, as the lake package is not imported.
func addFiles(tb testing.TB, db *sqlitedb.DB, n int) []string {
	tb.Helper()
	ctx := context.Background()
	var names []string
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		var base int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM file`).Scan(&base); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, `INSERT INTO file (seq, id, unique_name, name, type, blob, ext, mime, size,
			created_at, updated_at) VALUES (?, ?, ?, 'f.jpg', 'image', 'b', 'jpg', 'image/jpeg', ?, 0, 0)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i := range n {
			seq := base + int64(i) + 1
			name := fmt.Sprintf("u%d", seq)
			if _, err := st.ExecContext(ctx, seq, fmt.Sprintf("fil_%d", seq), name, seq%10); err != nil {
				return err
			}
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return names
}

func randVecs(r *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = r.Float32()*2 - 1
		}
		out[i] = v
	}
	return out
}

func records(names []string, vecs [][]float32) []Record {
	recs := make([]Record, len(names))
	for i := range names {
		recs[i] = Record{UniqueName: names[i], Vector: vecs[i]}
	}
	return recs
}

type ref struct {
	name string
	dist float64
}

// bruteForce ranks candidates by exact float64 distance (cosine or l2).
func bruteForce(q []float32, names []string, vecs [][]float32, metric string, k int) []ref {
	out := make([]ref, len(names))
	for i, v := range vecs {
		var dot, qq, vv, l2 float64
		for j := range v {
			a, b := float64(q[j]), float64(v[j])
			dot += a * b
			qq += a * a
			vv += b * b
			l2 += (a - b) * (a - b)
		}
		d := 1 - dot/math.Sqrt(qq*vv)
		if metric == L2 {
			d = math.Sqrt(l2)
		}
		out[i] = ref{names[i], d}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dist < out[j].dist })
	return out[:min(k, len(out))]
}

// checkExact fails unless hits are the reference top-k: same names, except
// where float32 rounding reorders near-ties at the cut-off.
func checkExact(t *testing.T, hits []Hit, want []ref) {
	t.Helper()
	if len(hits) != len(want) {
		t.Fatalf("got %d hits, want %d", len(hits), len(want))
	}
	in := map[string]float64{}
	for _, w := range want {
		in[w.name] = w.dist
	}
	kth := want[len(want)-1].dist
	for i, h := range hits {
		d, ok := in[h.UniqueName]
		switch {
		case ok && math.Abs(d-h.Distance) > 1e-4:
			t.Fatalf("hit %d %s: distance %g, want %g", i, h.UniqueName, h.Distance, d)
		case !ok && math.Abs(h.Distance-kth) > 1e-5:
			t.Fatalf("hit %d %s (distance %g) is not in the exact top %d (k-th %g)", i, h.UniqueName, h.Distance, len(want), kth)
		}
		if i > 0 && h.Distance < hits[i-1].Distance-1e-6 {
			t.Fatalf("hits out of order at %d", i)
		}
	}
}
