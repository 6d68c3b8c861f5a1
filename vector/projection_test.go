package vector

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/job"
)

// clustered makes n vectors of dim around c random centres; cluster i%c.
func clustered(r *rand.Rand, n, dim, c int, spread float32) [][]float32 {
	centres := randVecs(r, c, dim)
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = centres[i%c][j] + spread*float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func pointsByName(t *testing.T, s *Store, model string) map[string]Point {
	t.Helper()
	pts, err := s.ProjectionPoints(context.Background(), model, 0, MaxPointsPage)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Point{}
	for _, p := range pts {
		out[p.UniqueName] = p
	}
	return out
}

// neighbourPurity is the share of each point's 10 nearest map neighbours that
// come from its own cluster (cluster = index % c in names).
func neighbourPurity(pts map[string]Point, names []string, c int) float64 {
	var same, all int
	for i, a := range names {
		type nd struct {
			j int
			d float64
		}
		var ds []nd
		for j, b := range names {
			if i != j {
				pa, pb := pts[a], pts[b]
				ds = append(ds, nd{j, math.Hypot(float64(pa.X-pb.X), float64(pa.Y-pb.Y))})
			}
		}
		sort.Slice(ds, func(x, y int) bool { return ds[x].d < ds[y].d })
		for _, d := range ds[:10] {
			all++
			if d.j%c == i%c {
				same++
			}
		}
	}
	return float64(same) / float64(all)
}

func TestProjectionShowsClustersAndKeepsPointsWhenVectorsArrive(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{})
	r := rand.New(rand.NewPCG(1, 2))
	const n, dim, c = 600, 64, 6
	vecs := clustered(r, n+40, dim, c, 0.15)
	names := addFiles(t, db, n+40)
	if _, err := s.InsertMany(ctx, "m", dim, records(names[:n], vecs[:n])); err != nil {
		t.Fatal(err)
	}
	st, err := s.RefreshProjection(ctx, "m", false)
	if err != nil || st.Status != ProjectionNone || st.VectorCount != n {
		t.Fatalf("before any fit: %+v, %v; want status none with %d vectors", st, err, n)
	}
	if err := s.UpdateProjection(ctx, "m", false); err != nil {
		t.Fatal(err)
	}
	first := pointsByName(t, s, "m")
	if len(first) != n {
		t.Fatalf("%d points, want %d", len(first), n)
	}
	if p := neighbourPurity(first, names[:n], c); p < 0.95 {
		t.Fatalf("only %.2f of map neighbours share a cluster; the map hides the clusters", p)
	}
	for _, p := range first {
		if math.Abs(float64(p.X)) > 1 || math.Abs(float64(p.Y)) > 1 {
			t.Fatalf("point %+v outside [-1, 1]²", p)
		}
	}

	// 40 new vectors (under 10%): placed on the fitted map, nothing else moves.
	if _, err := s.InsertMany(ctx, "m", dim, records(names[n:], vecs[n:])); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.RefreshProjection(ctx, "m", false); st.Status != ProjectionStale || st.PointCount != n {
		t.Fatalf("after new vectors: %+v, want stale with %d points", st, n)
	}
	if err := s.UpdateProjection(ctx, "m", false); err != nil {
		t.Fatal(err)
	}
	second := pointsByName(t, s, "m")
	if len(second) != n+40 {
		t.Fatalf("%d points, want %d", len(second), n+40)
	}
	for name, p := range first {
		if second[name] != p {
			t.Fatalf("%s moved from %+v to %+v when others arrived", name, p, second[name])
		}
	}
	if p := neighbourPurity(second, names, c); p < 0.95 {
		t.Fatalf("new points land away from their clusters: purity %.2f", p)
	}
	st, err = s.RefreshProjection(ctx, "m", false)
	if err != nil || st.Status != ProjectionCurrent || st.FittedCount != n {
		t.Fatalf("after update: %+v, %v; want current, fitted on %d", st, err, n)
	}

	// A refit keeps the map where it was (aligned onto the old points).
	if err := s.UpdateProjection(ctx, "m", true); err != nil {
		t.Fatal(err)
	}
	third := pointsByName(t, s, "m")
	var moved float64
	for name, p := range second {
		q := third[name]
		moved += math.Hypot(float64(p.X-q.X), float64(p.Y-q.Y))
	}
	if moved /= float64(len(second)); moved > 0.15 {
		t.Fatalf("a refit moved points by %.3f on average; the map should keep its orientation", moved)
	}
}

func TestProjectionIsDeterministicAndDropsDeletedFiles(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	vecs := clustered(r, 300, 32, 3, 0.2)
	var maps []map[string]Point
	var stores []*Store
	for range 2 {
		s, db := newStore(t, Options{})
		names := addFiles(t, db, 300)
		if _, err := s.InsertMany(ctx, "m", 32, records(names, vecs)); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateProjection(ctx, "m", false); err != nil {
			t.Fatal(err)
		}
		maps = append(maps, pointsByName(t, s, "m"))
		stores = append(stores, s)
		if _, err := db.W.ExecContext(ctx, `DELETE FROM file WHERE unique_name = 'u7'`); err != nil {
			t.Fatal(err)
		}
	}
	for name, p := range maps[0] {
		if maps[1][name] != p {
			t.Fatalf("the same vectors gave %s two places: %+v and %+v", name, p, maps[1][name])
		}
	}
	if err := stores[0].UpdateProjection(ctx, "m", false); err != nil {
		t.Fatal(err)
	}
	if st, _ := stores[0].RefreshProjection(ctx, "m", false); st.PointCount != 299 || st.Status != ProjectionCurrent {
		t.Fatalf("after deleting a file: %+v, want 299 points, current", st)
	}
}

func TestProjectionRunsAsAJobWhenBehind(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{})
	if err := db.Migrate(ctx, "job", job.Migrations()); err != nil {
		t.Fatal(err)
	}
	q := job.New(db, job.Options{PollInterval: 20 * time.Millisecond})
	s.HandleProjections(q)
	names := addFiles(t, db, 50)
	if _, err := s.InsertMany(ctx, "m", 16, records(names, randVecs(rand.New(rand.NewPCG(9, 9)), 50, 16))); err != nil {
		t.Fatal(err)
	}
	// Two requests before any worker runs ask for one job.
	a, err := s.RefreshProjection(ctx, "m", false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.RefreshProjection(ctx, "m", false)
	if a.Status != ProjectionComputing || a.JobID == "" || b.JobID != a.JobID {
		t.Fatalf("a stale map: %+v then %+v; want one computing job", a, b)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer q.Stop(ctx)
	deadline := time.Now().Add(time.Minute)
	for st := a; st.Status != ProjectionCurrent; st, _ = s.RefreshProjection(ctx, "m", false) {
		if time.Now().After(deadline) || st.Status == ProjectionFailed {
			t.Fatalf("the projection job did not finish: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if j, err := q.Get(ctx, a.JobID); err != nil || j.Status != job.Completed || j.Type != ProjectionJob {
		t.Fatalf("job: %+v %v", j, err)
	}
	if pts := pointsByName(t, s, "m"); len(pts) != 50 {
		t.Fatalf("%d points after the job, want 50", len(pts))
	}
}

// TestProjectionPagesSkipDeletedFiles: a point whose file is gone (its map
// not refitted yet) is left out, and the page still fills from the points
// after it, so a short page means the last.
func TestProjectionPagesSkipDeletedFiles(t *testing.T) {
	ctx := context.Background()
	s, db := newStore(t, Options{})
	names := addFiles(t, db, 50)
	if _, err := s.InsertMany(ctx, "m", 16, records(names, randVecs(rand.New(rand.NewPCG(5, 6)), 50, 16))); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateProjection(ctx, "m", false); err != nil {
		t.Fatal(err)
	}
	first, err := s.ProjectionPoints(ctx, "m", 0, 3)
	if err != nil || len(first) != 3 {
		t.Fatalf("first page: %d points, %v", len(first), err)
	}
	if _, err := db.W.ExecContext(ctx, `DELETE FROM file WHERE seq = ?`, first[1].Seq); err != nil {
		t.Fatal(err)
	}
	var all []Point
	for after := int64(0); ; {
		page, err := s.ProjectionPoints(ctx, "m", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].Seq
	}
	if len(all) != 49 || all[0] != first[0] || all[1] != first[2] {
		t.Fatalf("pages after deleting %s: %d points starting %+v, want 49 starting %+v, %+v",
			first[1].UniqueName, len(all), all[:min(3, len(all))], first[0], first[2])
	}
	for _, p := range all {
		if p.Seq == first[1].Seq || p.UniqueName == "" {
			t.Fatalf("point %+v: its file is gone or it has no name", p)
		}
	}
}
