package labelnext

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// New returns a Service and registers its job handlers on jobs.
func New(l *lake.Lake, v *vector.Store, jobs *job.Queue, opt Options) *Service {
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	s := &Service{lake: l, vectors: v, jobs: jobs, opt: opt}
	jobs.Handle(SelectJob, s.runSelect)
	jobs.Handle(UniquenessJob, s.runUniqueness)
	return s
}

// Select checks a request and queues its job, returning the job's id.
func (s *Service) Select(ctx context.Context, req Request) (string, error) {
	if err := s.check(ctx, &req); err != nil {
		return "", err
	}
	return s.jobs.Enqueue(ctx, nil, SelectJob, req)
}

// ComputeUniqueness checks a request and queues its job, returning the
// job's id.
func (s *Service) ComputeUniqueness(ctx context.Context, req UniquenessRequest) (string, error) {
	if err := s.checkModel(ctx, req.Model); err != nil {
		return "", err
	}
	if _, _, err := s.pool(ctx, req.Query); err != nil {
		return "", err
	}
	return s.jobs.Enqueue(ctx, nil, UniquenessJob, req)
}

func (s *Service) check(ctx context.Context, req *Request) error {
	if req.Budget < 1 || req.Budget > MaxBudget {
		return errs.Invalid("budget", "budget must be 1..%d, got %d", MaxBudget, req.Budget)
	}
	if !slices.Contains(Strategies, req.Strategy) {
		return errs.Invalid("strategy", "unknown strategy %q; known: %s", req.Strategy, strings.Join(Strategies, ", "))
	}
	scored, embedded := req.Strategy == Uncertainty || req.Strategy == Hybrid, req.Strategy != Uncertainty
	if req.Measure == "" && scored {
		req.Measure = LeastConfidence
	}
	if req.Measure != "" && !slices.Contains(Measures, req.Measure) {
		return errs.Invalid("measure", "unknown measure %q; known: %s", req.Measure, strings.Join(Measures, ", "))
	}
	if req.Tag != "" && strings.TrimSpace(req.Tag) == "" {
		return errs.Invalid("tag", "tag is blank")
	}
	if scored {
		if req.RunID == "" {
			return errs.Invalid("run_id", "strategy %s needs run_id: the model run whose box confidences it reads", req.Strategy)
		}
		known, err := s.lake.HasOperation(ctx, req.RunID)
		if err != nil {
			return err
		}
		if !known {
			return errs.New(errs.NotFound, "run_id", "no annotation comes from run %q", req.RunID)
		}
	}
	if embedded {
		if err := s.checkModel(ctx, req.Model); err != nil {
			return err
		}
	}
	_, _, err := s.pool(ctx, req.Query)
	return err
}

// checkModel says whether a vector model of that name has vectors.
func (s *Service) checkModel(ctx context.Context, name string) error {
	models, err := s.vectors.Models(ctx)
	if err != nil {
		return err
	}
	for _, m := range models {
		if m.Name == name {
			return nil
		}
	}
	return errs.New(errs.NotFound, "model_name", "no embeddings of model %q", name)
}

// pool is the SQL over "file AS f" of the images a query selects.
func (s *Service) pool(ctx context.Context, query string) (string, []any, error) {
	return s.lake.SelectionSQL(ctx, lake.Selection{ItemType: "image", Query: query})
}

func (s *Service) runSelect(ctx context.Context, r *job.Run) error {
	var req Request
	if err := r.Decode(&req); err != nil {
		return err
	}
	where, args, err := s.pool(ctx, req.Query)
	if err != nil {
		return err
	}
	var chosen []candidate
	var pool, skipped int
	switch req.Strategy {
	case Uncertainty:
		chosen, pool, skipped, err = s.byUncertainty(ctx, r, req, where, args)
	case Unique:
		chosen, pool, skipped, err = s.byUniqueness(ctx, r, req, where, args)
	default:
		chosen, pool, skipped, err = s.byDistance(ctx, r, req, where, args)
	}
	if err != nil {
		return err
	}
	return s.finish(ctx, r, req, chosen, pool, skipped)
}

// top is the first budget of ranked (best first), skipping copies of files
// chosen before them unless the request keeps duplicates.
func (s *Service) top(ctx context.Context, req Request, ranked []candidate) ([]candidate, int, error) {
	if req.KeepDuplicates {
		return rankTop(ranked, req.Budget), 0, nil
	}
	return s.topDistinct(ctx, rankTop(ranked, len(ranked)), req.Budget)
}

// finish tags the chosen files and stores the result.
func (s *Service) finish(ctx context.Context, r *job.Run, req Request, chosen []candidate, pool, skipped int) error {
	seqs := make([]int64, len(chosen))
	for i, c := range chosen {
		seqs[i] = c.seq
	}
	files, err := s.lake.FilesBySeq(ctx, seqs)
	if err != nil {
		return err
	}
	names := make(map[int64]string, len(files))
	for _, f := range files {
		names[f.Seq()] = f.UniqueName
	}
	res := Result{UniqueNames: []string{}, Scores: []float64{}, Tag: req.Tag, Strategy: req.Strategy,
		Measure: req.Measure, Candidates: pool, SkippedDuplicates: skipped}
	if res.Tag == "" {
		res.Tag = r.Job().ID
	}
	kept := seqs[:0]
	for _, c := range chosen {
		if n, ok := names[c.seq]; ok { // a file deleted since it was scored is left out
			res.UniqueNames, res.Scores, kept = append(res.UniqueNames, n), append(res.Scores, c.score), append(kept, c.seq)
		}
	}
	if len(kept) > 0 {
		if err := s.lake.TagFiles(ctx, kept, res.Tag, r.Job().ID); err != nil {
			return err
		}
	}
	return r.SetResult(res)
}

// byUncertainty ranks the pool's scored files; its progress is the files
// scored, all at once (the ranking is one pass).
func (s *Service) byUncertainty(ctx context.Context, r *job.Run, req Request, where string, args []any) ([]candidate, int, int, error) {
	confs, err := s.lake.OperationConfidences(ctx, req.RunID, "run_id", where, args)
	if err != nil {
		return nil, 0, 0, err
	}
	chosen, skipped, err := s.top(ctx, req, uncertain(confs, req.Measure, req.Seed))
	if err != nil {
		return nil, 0, 0, err
	}
	r.SetTotal(int64(len(confs)))
	r.Advance(int64(len(confs)))
	return chosen, len(confs), skipped, nil
}

func (s *Service) byUniqueness(ctx context.Context, r *job.Run, req Request, where string, args []any) ([]candidate, int, int, error) {
	x, err := s.vectors.Vectors(ctx, req.Model, &vector.Filter{Where: where, Args: args})
	if err != nil {
		return nil, 0, 0, err
	}
	r.SetTotal(int64(x.Len()))
	// Fewer than two rows get no scores and so no progress: count them done.
	scores, err := uniquenessScores(ctx, x, UniquenessK, s.opt.Workers, func(n int) { r.Advance(int64(n)) })
	if err != nil {
		return nil, 0, 0, err
	}
	if len(scores) == 0 {
		r.Advance(int64(x.Len()))
	}
	cands := make([]candidate, len(scores))
	for i, sc := range scores {
		cands[i] = candidate{seq: x.Seqs[i], score: sc, tie: tieBreak(req.Seed, x.Seqs[i])}
	}
	chosen, skipped, err := s.top(ctx, req, cands)
	return chosen, x.Len(), skipped, err
}

// byDistance runs k-center greedy: diversity from a file the seed draws,
// hybrid weighted by uncertainty from the most uncertain file.
func (s *Service) byDistance(ctx context.Context, r *job.Run, req Request, where string, args []any) ([]candidate, int, int, error) {
	x, err := s.vectors.Vectors(ctx, req.Model, &vector.Filter{Where: where, Args: args})
	if err != nil {
		return nil, 0, 0, err
	}
	var weight []float64
	if req.Strategy == Hybrid {
		confs, err := s.lake.OperationConfidences(ctx, req.RunID, "run_id", where, args)
		if err != nil {
			return nil, 0, 0, err
		}
		x, weight = weighted(x, uncertain(confs, req.Measure, req.Seed))
	}
	pool, skipped := x.Len(), 0
	if !req.KeepDuplicates {
		if x, weight, skipped, err = s.distinctRows(ctx, x, weight); err != nil {
			return nil, 0, 0, err
		}
	}
	if x.Len() == 0 {
		return nil, pool, skipped, nil
	}
	first := 0
	if req.Strategy == Hybrid {
		first = mostUncertain(x, weight, req.Seed)
	} else {
		first = rand.New(rand.NewPCG(uint64(req.Seed), 0x6b63656e746572)).IntN(x.Len())
	}
	// Progress counts picks, the first included, so a completed job's done
	// equals its total.
	r.SetTotal(int64(min(req.Budget, x.Len())))
	rows, scores, err := kCenter(ctx, x, req.Budget, first, weight, s.opt.Workers, func() { r.Advance(1) })
	if err != nil {
		return nil, 0, 0, err
	}
	out := make([]candidate, len(rows))
	for i, row := range rows {
		out[i] = candidate{seq: x.Seqs[row], score: scores[i]}
	}
	return out, pool, skipped, nil
}

// weighted keeps the rows of x that have an uncertainty and returns them
// with it.
func weighted(x *vector.Matrix, cands []candidate) (*vector.Matrix, []float64) {
	by := make(map[int64]float64, len(cands))
	for _, c := range cands {
		by[c.seq] = c.score
	}
	out := &vector.Matrix{Dim: x.Dim, Metric: x.Metric}
	var weight []float64
	for i, seq := range x.Seqs {
		if u, ok := by[seq]; ok {
			out.Seqs = append(out.Seqs, seq)
			out.Data = append(out.Data, x.Row(i)...)
			weight = append(weight, u)
		}
	}
	return out, weight
}

// mostUncertain is the row with the highest weight, ties by the seed.
func mostUncertain(x *vector.Matrix, weight []float64, seed int64) int {
	cands := make([]candidate, len(weight))
	row := make(map[int64]int, len(weight))
	for i, w := range weight {
		cands[i] = candidate{seq: x.Seqs[i], score: w, tie: tieBreak(seed, x.Seqs[i])}
		row[x.Seqs[i]] = i
	}
	return row[rankTop(cands, 1)[0].seq]
}

func (s *Service) runUniqueness(ctx context.Context, r *job.Run) error {
	var req UniquenessRequest
	if err := r.Decode(&req); err != nil {
		return err
	}
	where, args, err := s.pool(ctx, req.Query)
	if err != nil {
		return err
	}
	x, err := s.vectors.Vectors(ctx, req.Model, &vector.Filter{Where: where, Args: args})
	if err != nil {
		return err
	}
	r.SetTotal(int64(x.Len()))
	scores, err := uniquenessScores(ctx, x, UniquenessK, s.opt.Workers, func(n int) { r.Advance(int64(n)) })
	if err != nil {
		return err
	}
	rows := make([]lake.FileScore, len(scores))
	for i, sc := range scores {
		rows[i] = lake.FileScore{Seq: x.Seqs[i], Score: sc}
	}
	if err := s.lake.SetUniqueness(ctx, req.Model, rows); err != nil {
		return fmt.Errorf("uniqueness: %w", err)
	}
	return r.SetResult(UniquenessResult{Model: req.Model, Files: len(rows), K: UniquenessK, Metric: x.Metric})
}
