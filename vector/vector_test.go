package vector

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

func TestInsertGetReplace(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{})
	names := addFiles(t, db, 4)
	r := rand.New(rand.NewPCG(1, 1))
	vecs := randVecs(r, 3, 8)
	n, err := s.Insert(ctx, "clip", 8, records(names[:3], vecs))
	if err != nil || n != 3 {
		t.Fatalf("insert: %d, %v", n, err)
	}
	found, missing, err := s.Get(ctx, "clip", []string{names[1], "nope", names[0], names[3], names[1]})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 || found[0].UniqueName != names[1] || found[1].UniqueName != names[0] ||
		!slices.Equal(found[0].Vector, vecs[1]) || !slices.Equal(found[1].Vector, vecs[0]) {
		t.Fatalf("found = %+v", found)
	}
	if !slices.Equal(missing, []string{"nope", names[3]}) {
		t.Fatalf("missing = %v", missing)
	}
	// Re-inserting replaces, and the vector comes back bit for bit.
	nv := randVecs(r, 1, 8)[0]
	if _, err := s.Insert(ctx, "clip", 8, []Record{{names[0], nv}}); err != nil {
		t.Fatal(err)
	}
	found, _, _ = s.Get(ctx, "clip", []string{names[0]})
	if len(found) != 1 || !slices.Equal(found[0].Vector, nv) {
		t.Fatalf("after replace: %+v", found)
	}
	if got := vecCount(t, db, "clip"); got != 3 {
		t.Fatalf("%d vectors, want 3", got)
	}
	ms, err := s.Models(ctx)
	if err != nil || len(ms) != 1 || ms[0].Name != "clip" || ms[0].Dim != 8 || ms[0].Metric != Cosine {
		t.Fatalf("models = %+v, %v", ms, err)
	}
	if _, _, err := s.Get(ctx, "other", names); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("unknown model: %v", err)
	}
}

func vecCount(t *testing.T, db *sqlitedb.DB, model string) int {
	t.Helper()
	var table string
	if err := db.R.QueryRow(`SELECT table_name FROM embedding_model WHERE name = ?`, model).Scan(&table); err != nil {
		if err == sql.ErrNoRows {
			return -1
		}
		t.Fatal(err)
	}
	var n int
	if err := db.R.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBadInputWritesNothing(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{})
	names := addFiles(t, db, 3)
	good := func() []Record {
		return records(names, [][]float32{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})
	}
	if _, err := s.Insert(ctx, "m", 3, good()[:1]); err != nil {
		t.Fatal(err)
	}
	with := func(f func([]Record) []Record) []Record { return f(good()) }
	cases := []struct {
		name  string
		model string
		dim   int
		recs  []Record
		code  errs.Code
		field string
	}{
		{"dimension mismatch with model", "m", 4, records(names, [][]float32{{1, 2, 3, 4}, {1, 2, 3, 4}, {1, 2, 3, 4}}), errs.InvalidArgument, "vector_dimension"},
		{"record length", "m", 3, with(func(r []Record) []Record { r[1].Vector = []float32{1, 2}; return r }), errs.InvalidArgument, "embedding_list[1].embeddings"},
		{"nan", "m", 3, with(func(r []Record) []Record { r[2].Vector[1] = float32(math.NaN()); return r }), errs.InvalidArgument, "embedding_list[2].embeddings[1]"},
		{"inf", "m", 3, with(func(r []Record) []Record { r[0].Vector[0] = float32(math.Inf(-1)); return r }), errs.InvalidArgument, "embedding_list[0].embeddings[0]"},
		{"empty vector", "m", 3, with(func(r []Record) []Record { r[1].Vector = nil; return r }), errs.InvalidArgument, "embedding_list[1].embeddings"},
		{"zero vector", "m", 3, with(func(r []Record) []Record { r[1].Vector = []float32{0, 0, 0}; return r }), errs.InvalidArgument, "embedding_list[1].embeddings"},
		{"unknown uniqueName", "m", 3, with(func(r []Record) []Record { r[2].UniqueName = "ghost"; return r }), errs.NotFound, "embedding_list[2].uniqueName"},
		{"unknown uniqueName, new model", "new", 3, with(func(r []Record) []Record { r[1].UniqueName = "ghost"; return r }), errs.NotFound, "embedding_list[1].uniqueName"},
		{"duplicate uniqueName", "m", 3, with(func(r []Record) []Record { r[2].UniqueName = r[0].UniqueName; return r }), errs.InvalidArgument, "embedding_list[2].uniqueName"},
		{"empty list", "m", 3, nil, errs.InvalidArgument, "embedding_list"},
		{"no model", "", 3, good(), errs.InvalidArgument, "model_name"},
		{"dimension zero", "new", 0, good(), errs.InvalidArgument, "vector_dimension"},
	}
	for _, c := range cases {
		for _, many := range []bool{false, true} {
			insert := s.Insert
			if many {
				insert = s.InsertMany
			}
			n, err := insert(ctx, c.model, c.dim, c.recs)
			var e *errs.Error
			if !asErr(err, &e) || e.Code != c.code || e.Field != c.field || n != 0 {
				t.Errorf("%s (many=%v): n=%d err=%v, want %s on %s", c.name, many, n, err, c.code, c.field)
			}
			if got := vecCount(t, db, "m"); got != 1 {
				t.Fatalf("%s: %d vectors in m, want 1", c.name, got)
			}
			if got := vecCount(t, db, "new"); got != -1 {
				t.Fatalf("%s: model new was registered", c.name)
			}
		}
	}
	found, _, _ := s.Get(ctx, "m", names[:1])
	if len(found) != 1 || !slices.Equal(found[0].Vector, []float32{1, 2, 3}) {
		t.Fatalf("first vector changed: %+v", found)
	}
	if err := CheckBatch(100); errs.CodeOf(err) != errs.InvalidArgument {
		t.Fatalf("CheckBatch(100) = %v", err)
	}
	if err := CheckBatch(99); err != nil {
		t.Fatal(err)
	}
	if _, err := Float32s("embeddings", []float64{1, 1e39}); errs.CodeOf(err) != errs.InvalidArgument {
		t.Fatalf("Float32s overflow: %v", err)
	}
	searchErrs := []struct {
		q     SearchQuery
		code  errs.Code
		field string
	}{
		{SearchQuery{Model: "m", UniqueName: names[0], K: 0}, errs.InvalidArgument, "k"},
		{SearchQuery{Model: "m", UniqueName: names[0], K: MaxK + 1}, errs.InvalidArgument, "k"},
		{SearchQuery{Model: "nope", UniqueName: names[0], K: 1}, errs.NotFound, "model_name"},
		{SearchQuery{Model: "m", UniqueName: "ghost", K: 1}, errs.NotFound, "unique_name"},
		{SearchQuery{Model: "m", UniqueName: names[1], K: 1}, errs.NotFound, "unique_name"}, // no vector
		{SearchQuery{Model: "m", Vector: []float32{1, 2}, K: 1}, errs.InvalidArgument, "vector"},
		{SearchQuery{Model: "m", K: 1}, errs.InvalidArgument, "unique_name"},
	}
	for _, c := range searchErrs {
		_, err := s.Search(ctx, c.q)
		var e *errs.Error
		if !asErr(err, &e) || e.Code != c.code || e.Field != c.field {
			t.Errorf("search %+v: %v, want %s on %s", c.q, err, c.code, c.field)
		}
	}
}

func asErr(err error, e **errs.Error) bool {
	if err == nil {
		return false
	}
	x, ok := err.(*errs.Error)
	*e = x
	return ok
}

func TestInsertManyBatches(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{InsertBatch: 7})
	names := addFiles(t, db, 50)
	vecs := randVecs(rand.New(rand.NewPCG(2, 2)), 50, 16)
	n, err := s.InsertMany(ctx, "m", 16, records(names, vecs))
	if err != nil || n != 50 {
		t.Fatalf("InsertMany = %d, %v", n, err)
	}
	found, missing, err := s.Get(ctx, "m", names)
	if err != nil || len(found) != 50 || len(missing) != 0 {
		t.Fatalf("get: %d found, %v missing, %v", len(found), missing, err)
	}
	for i, f := range found {
		if !slices.Equal(f.Vector, vecs[i]) {
			t.Fatalf("vector %d differs", i)
		}
	}
}

func TestDeleteFileDeletesVectors(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{})
	names := addFiles(t, db, 40)
	vecs := randVecs(rand.New(rand.NewPCG(3, 3)), 40, 8)
	for _, model := range []string{"a", "b"} {
		if _, err := s.Insert(ctx, model, 8, records(names, vecs)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Warm(ctx, "a"); err != nil { // "b" stays on the sqlite-vec path
		t.Fatal(err)
	}
	// The lake deletes u1 by trigger alone and u2 with an explicit DeleteFiles too.
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		// u2 has a vector in both models; u41 does not exist.
		n, err := s.DeleteFiles(ctx, tx, []int64{2, 41})
		if err != nil {
			return err
		}
		if n != 2 {
			t.Errorf("DeleteFiles deleted %d vectors, want 2 (u2's in each model)", n)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM file WHERE seq IN (1, 2)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"a", "b"} {
		if got := vecCount(t, db, model); got != 38 {
			t.Fatalf("%s: %d vectors, want 38", model, got)
		}
		_, missing, _ := s.Get(ctx, model, names[:3])
		if !slices.Equal(missing, names[:2]) {
			t.Fatalf("%s: missing = %v", model, missing)
		}
		// The query is u1's old vector: it and u2 must not come back.
		hits, err := s.Search(ctx, SearchQuery{Model: model, Vector: vecs[0], K: 40})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 38 {
			t.Fatalf("%s: %d hits after delete, want 38", model, len(hits))
		}
		checkExact(t, hits, bruteForce(vecs[0], names[2:], vecs[2:], Cosine, 40))
	}
	ms, _ := s.Models(ctx)
	if !ms[0].Cached || ms[0].CacheRows != 38 {
		t.Fatalf("copy of a: %+v", ms[0])
	}
	// A new file may reuse the deleted largest seq; it must not inherit a vector.
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM file WHERE seq = 40`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	reused := addFiles(t, db, 1)[0]
	if _, missing, _ := s.Get(ctx, "a", []string{reused}); len(missing) != 1 {
		t.Fatalf("reused seq %s has a vector", reused)
	}
	hits, _ := s.Search(ctx, SearchQuery{Model: "a", Vector: vecs[39], K: 1000})
	for _, h := range hits {
		if h.UniqueName == reused {
			t.Fatalf("reused seq %s found by search", reused)
		}
	}
}

func TestReopenAndTriggerRepair(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	db := openDB(t, path)
	s := openStore(t, db, Options{})
	names := addFiles(t, db, 30)
	vecs := randVecs(rand.New(rand.NewPCG(4, 4)), 30, 8)
	if _, err := s.Insert(ctx, "m", 8, records(names, vecs)); err != nil {
		t.Fatal(err)
	}
	// A lake migration that rebuilds file drops the trigger; files deleted
	// before Open runs again leave orphaned vectors that Open removes.
	if _, err := db.W.Exec(`DROP TRIGGER vec_1_file_delete`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`DELETE FROM file WHERE seq = 5`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db.Close()

	db = openDB(t, path)
	s = openStore(t, db, Options{NoBackgroundLoad: true})
	if got := vecCount(t, db, "m"); got != 29 {
		t.Fatalf("%d vectors after repair, want 29", got)
	}
	if _, err := db.W.Exec(`DELETE FROM file WHERE seq = 6`); err != nil {
		t.Fatal(err)
	}
	if got := vecCount(t, db, "m"); got != 28 {
		t.Fatalf("trigger not re-created: %d vectors", got)
	}
	found, _, err := s.Get(ctx, "m", names[:1])
	if err != nil || len(found) != 1 || !slices.Equal(found[0].Vector, vecs[0]) {
		t.Fatalf("after reopen: %+v, %v", found, err)
	}
	if err := s.Warm(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	ms, _ := s.Models(ctx)
	if len(ms) != 1 || !ms[0].Cached || ms[0].CacheRows != 28 {
		t.Fatalf("models after warm: %+v", ms)
	}
}
