package vector

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
)

// TestInsertSessionOneTransaction checks that a session's vectors and its job
// record commit together: stored with the job, or neither.
func TestInsertSessionOneTransaction(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{})
	if err := db.Migrate(ctx, "job", job.Migrations()); err != nil {
		t.Fatal(err)
	}
	names := addFiles(t, db, 4)
	vecs := randVecs(rand.New(rand.NewPCG(4, 4)), 4, 8)

	n, jobID, err := s.InsertSession(ctx, "m", 8, records(names[:2], vecs[:2]), "sess-1")
	if err != nil || n != 2 || jobID == "" {
		t.Fatalf("InsertSession = %d, %q, %v", n, jobID, err)
	}
	var typ, status, payload, result string
	var done int64
	err = db.R.QueryRowContext(ctx, `SELECT type, status, payload, result, done FROM job WHERE id = ?`, jobID).
		Scan(&typ, &status, &payload, &result, &done)
	if err != nil {
		t.Fatal(err)
	}
	var res SessionResult
	if err := json.Unmarshal([]byte(result), &res); err != nil {
		t.Fatal(err)
	}
	if typ != SessionJob || status != "completed" || done != 2 ||
		res != (SessionResult{SessionID: "sess-1", ModelName: "m", UpsertCount: 2}) {
		t.Errorf("job %s %s done %d payload %s result %+v", typ, status, done, payload, res)
	}

	// A job record that cannot be written takes the vectors down with it.
	if _, err := db.W.ExecContext(ctx, `CREATE TRIGGER no_jobs BEFORE INSERT ON job
		BEGIN SELECT RAISE(ABORT, 'job table refuses rows'); END`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.InsertSession(ctx, "m", 8, records(names[2:], vecs[2:]), "sess-2"); err == nil {
		t.Fatal("InsertSession succeeded with a job table that refuses rows")
	}
	if got := vecCount(t, db, "m"); got != 2 {
		t.Errorf("after the failed session insert the model holds %d vectors, want the first 2", got)
	}
	_, missing, err := s.Get(ctx, "m", names[2:])
	if err != nil || len(missing) != 2 {
		t.Errorf("vectors of the failed session: missing %v, %v", missing, err)
	}

	// Bad input records no job either.
	_, _, err = s.InsertSession(ctx, "m", 8, records([]string{"nobody"}, vecs[:1]), "sess-3")
	if !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown uniqueName: %v, want not found", err)
	}
	if _, _, err := s.InsertSession(ctx, "m", 8, records(names[2:3], vecs[2:3]), ""); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("empty session_id: %v, want invalid", err)
	}
	var jobs int
	if err := db.R.QueryRowContext(ctx, `SELECT count(*) FROM job`).Scan(&jobs); err != nil || jobs != 1 {
		t.Errorf("%d job rows, %v; want the first session's only", jobs, err)
	}
}
