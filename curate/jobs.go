package curate

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// New returns the service and registers its job handlers on jobs.
func New(l *lake.Lake, vectors *vector.Store, jobs *job.Queue, opt Options) *Service {
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	s := &Service{lake: l, vectors: vectors, jobs: jobs, opt: opt, log: opt.Logger}
	jobs.Handle(ComputeJob, s.computeJob)
	jobs.Handle(DuplicatesJob, s.duplicatesJob)
	return s
}

func selection(query string) lake.Selection { return lake.Selection{ItemType: "image", Query: query} }

// ComputeQuality queues a job that scores the images req selects that have
// no scores yet. A job started again (after a restart) skips those it
// scored, so it is resumable, and a second request only scores what is new.
func (s *Service) ComputeQuality(ctx context.Context, req QualityRequest) (string, error) {
	if _, err := s.lake.CountUnscored(ctx, selection(req.Query)); err != nil {
		return "", err
	}
	return s.jobs.Enqueue(ctx, nil, ComputeJob, req)
}

const scorePage = 256

func (s *Service) computeJob(ctx context.Context, r *job.Run) error {
	var req QualityRequest
	if err := r.Decode(&req); err != nil {
		return err
	}
	sel := selection(req.Query)
	total, err := s.lake.CountUnscored(ctx, sel)
	if err != nil {
		return err
	}
	r.SetTotal(int64(total))
	var res QualityResult
	after := int64(0)
	for {
		files, err := s.lake.Unscored(ctx, sel, after, scorePage)
		if err != nil {
			return err
		}
		if len(files) == 0 {
			break
		}
		scores := s.scoreFiles(ctx, files)
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.lake.PutQuality(ctx, scores); err != nil {
			return err
		}
		res.Scored += len(scores)
		res.Skipped += len(files) - len(scores)
		r.Advance(int64(len(files)))
		after = files[len(files)-1].Seq()
	}
	return r.SetResult(res)
}

// scoreFiles scores files on the service's workers; files that do not
// read or decode are left out.
func (s *Service) scoreFiles(ctx context.Context, files []lake.File) map[int64]lake.Quality {
	out := make(map[int64]lake.Quality, len(files))
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	for range s.opt.Workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(files) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				f := files[i]
				b, err := s.lake.Store().ReadAll(ctx, f.Blob, f.Ext)
				if err == nil {
					var q lake.Quality
					if q, err = Score(b, f.Width, f.Height); err == nil {
						mu.Lock()
						out[f.Seq()] = q
						mu.Unlock()
						continue
					}
				}
				s.log.Warn("quality", "file", f.UniqueName, "error", err)
			}
		})
	}
	wg.Wait()
	return out
}

// FindDuplicates checks req and queues a job that records the
// near-duplicate groups among the images it selects.
func (s *Service) FindDuplicates(ctx context.Context, req DuplicatesRequest) (string, error) {
	if err := s.check(ctx, &req); err != nil {
		return "", err
	}
	return s.jobs.Enqueue(ctx, nil, DuplicatesJob, req)
}

func (s *Service) check(ctx context.Context, req *DuplicatesRequest) error {
	if _, err := s.lake.Count(ctx, selection(req.Query)); err != nil {
		return err
	}
	switch req.Method {
	case "", PHash:
		req.Method = PHash
		t := float64(DefaultHamming)
		if req.Threshold != nil {
			t = *req.Threshold
		}
		if t != math.Trunc(t) || t < 0 || t > MaxHamming {
			return errs.Invalid("threshold", "threshold of phash is a Hamming distance, a whole number in 0..%d, got %g", MaxHamming, t)
		}
		req.Threshold = &t
	case Embedding:
		t := DefaultCosine
		if req.Threshold != nil {
			t = *req.Threshold
		}
		if !(t > 0 && t <= 1) {
			return errs.Invalid("threshold", "threshold of embedding is a cosine distance in (0, 1], got %g", t)
		}
		req.Threshold = &t
		if req.ModelName == "" {
			return errs.Invalid("model_name", "method embedding needs model_name, the model whose embeddings to compare")
		}
		if _, _, err := s.vectors.Get(ctx, req.ModelName, nil); err != nil { // names the models that have vectors
			return err
		}
	default:
		return errMethod
	}
	if req.RemoveFromCollection != "" {
		if _, err := s.lake.Collection(ctx, req.RemoveFromCollection); err != nil {
			return errs.Prefix(err, "remove_from_collection")
		}
	}
	return nil
}

func (s *Service) duplicatesJob(ctx context.Context, r *job.Run) error {
	var req DuplicatesRequest
	if err := r.Decode(&req); err != nil {
		return err
	}
	if err := s.check(ctx, &req); err != nil {
		return err
	}
	items, err := s.items(ctx, req)
	if err != nil {
		return err
	}
	r.SetTotal(int64(len(items)))
	u := newUnionFind(len(items))
	var pairs atomic.Int64
	join := func(i, j int32) {
		pairs.Add(1)
		u.union(i, j)
	}
	if req.Method == PHash {
		ScoredPairs(items, int(*req.Threshold), func(i, j int32, _ int) { join(i, j) })
	} else {
		vecs, keep, err := s.vectorsOf(ctx, req.ModelName, items)
		if err != nil {
			return err
		}
		VectorPairs(vecs, *req.Threshold, func(i, j int32, _ float64) { join(keep[i], keep[j]) })
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res, err := s.record(ctx, req, items, groupsOf(items, u))
	if err != nil {
		return err
	}
	res.Pairs = pairs.Load()
	r.Advance(int64(len(items)))
	return r.SetResult(res)
}

// items are the images a request compares: by phash, those with scores; by
// embedding, every image (their vectors are looked up next), with the
// sharpness of those that have scores.
func (s *Service) items(ctx context.Context, req DuplicatesRequest) ([]lake.Scored, error) {
	var items []lake.Scored
	sel := selection(req.Query)
	if req.Method == PHash {
		err := s.lake.EachScored(ctx, sel, func(page []lake.Scored) error {
			items = append(items, page...)
			return nil
		})
		return items, err
	}
	err := s.lake.EachFile(ctx, sel, func(f lake.File) error {
		items = append(items, lake.Scored{Seq: f.Seq(), UniqueName: f.UniqueName,
			Pixels: int64(f.Width) * int64(f.Height), Size: f.Size})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sharp := map[int64]float64{}
	err = s.lake.EachScored(ctx, sel, func(page []lake.Scored) error {
		for _, p := range page {
			sharp[p.Seq] = p.Sharpness
		}
		return nil
	})
	for i := range items {
		items[i].Sharpness = sharp[items[i].Seq]
	}
	return items, err
}

// vectorsOf reads the model's vectors of items; keep maps a vector's index
// to its item's (items without a vector are left out).
func (s *Service) vectorsOf(ctx context.Context, model string, items []lake.Scored) ([][]float32, []int32, error) {
	names := make([]string, len(items))
	at := make(map[string]int32, len(items))
	for i, it := range items {
		names[i] = it.UniqueName
		at[it.UniqueName] = int32(i)
	}
	found, _, err := s.vectors.Get(ctx, model, names)
	if err != nil {
		return nil, nil, err
	}
	vecs := make([][]float32, len(found))
	keep := make([]int32, len(found))
	for i, rec := range found {
		vecs[i], keep[i] = rec.Vector, at[rec.UniqueName]
	}
	return vecs, keep, nil
}

// record writes the groups and applies the request's actions.
func (s *Service) record(ctx context.Context, req DuplicatesRequest, items []lake.Scored, groups [][]int32) (DuplicatesResult, error) {
	res := DuplicatesResult{Method: req.Method, Threshold: *req.Threshold, Files: len(items), Groups: len(groups),
		Listed: []Group{}}
	scope := make([]int64, len(items))
	for i, it := range items {
		scope[i] = it.Seq
	}
	stored := make([]lake.DuplicateGroup, len(groups))
	var extra []int64
	for gi, g := range groups {
		keeper := items[g[0]]
		dg := lake.DuplicateGroup{ID: keeper.UniqueName, Members: make([]int64, len(g))}
		listed := Group{ID: keeper.UniqueName, Keeper: keeper.UniqueName}
		for k, m := range g {
			dg.Members[k] = items[m].Seq
			if k > 0 {
				extra = append(extra, items[m].Seq)
			}
			if len(res.Listed) < MaxListedGroups {
				listed.Members = append(listed.Members, Member{UniqueName: items[m].UniqueName,
					Pixels: items[m].Pixels, Size: items[m].Size, Sharpness: items[m].Sharpness})
			}
		}
		stored[gi] = dg
		if len(res.Listed) < MaxListedGroups {
			res.Listed = append(res.Listed, listed)
		}
	}
	res.Truncated = len(groups) > len(res.Listed)
	res.Duplicates = len(extra)
	if err := s.lake.ReplaceDuplicates(ctx, scope, stored); err != nil {
		return res, fmt.Errorf("record duplicate groups: %w", err)
	}
	if req.Tag && len(extra) > 0 {
		if err := s.lake.TagFiles(ctx, extra, DuplicateTag, "user"); err != nil {
			return res, err
		}
		res.Tagged = len(extra)
	}
	if req.RemoveFromCollection != "" && len(extra) > 0 {
		n, err := s.lake.RemoveFromCollection(ctx, req.RemoveFromCollection, extra)
		if err != nil {
			return res, err
		}
		res.Removed = n
	}
	return res, nil
}
