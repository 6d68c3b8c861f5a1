package analysis

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// writeBatch is how many files' results one write transaction carries.
const writeBatch = 64

// analyzer runs one analysis job: a producer goroutine reads and resizes
// images and samples videos, the job's goroutine calls the model (so the
// next input is ready while the model works), and a writer goroutine stores
// results in batches.
type analyzer struct {
	s      *Service
	run    Run
	model  Model
	runner Runner
	job    *job.Run
	inW    int
	inH    int

	items, frames, tags, boxes, embeddings, skipped atomic.Int64

	mu       sync.Mutex
	skips    []skippedFile      // the first few, for the job result
	collTags map[string]float64 // collection runs: every tag seen, best confidence

	unsupported map[string]bool // prompt labels the model said it cannot handle; consume's goroutine only
}

type skippedFile struct {
	UniqueName string `json:"uniqueName"`
	Reason     string `json:"reason"`
}

// unit is one model input, or the end of a file's inputs.
type unit struct {
	file       lake.File
	frame      int
	jpeg       []byte
	srcW, srcH int   // images: decoded size
	end        bool  // no input: the file is done
	ignore     bool  // with end: not an image or video
	skip       error // with end: the file could not be read
}

// result is what the model saw in one file.
type result struct {
	file   lake.File
	tags   map[string]float64
	boxes  []lake.Box
	vec    []float64 // embeddings: sum over frames
	nvec   int
	failed bool
}

func (s *Service) runJob(ctx context.Context, jr *job.Run) error {
	var p struct {
		RunID string `json:"runId"`
	}
	if err := jr.Decode(&p); err != nil {
		return err
	}
	run, err := s.Run(ctx, p.RunID)
	if err != nil {
		return err
	}
	m, err := s.Model(ctx, run.Model)
	if errs.Is(err, errs.NotFound) {
		return fmt.Errorf("model %s was unregistered after the run started", run.Model)
	}
	if err != nil {
		return err
	}
	runner, err := s.runnerFor(m, run.Platform)
	if err != nil {
		return err
	}
	if run.Platform == AWS {
		defer runner.Close()
	}
	a := &analyzer{s: s, run: run, model: m, runner: runner, job: jr, collTags: map[string]float64{},
		unsupported: map[string]bool{}, inW: run.Params.InputResolution[0], inH: run.Params.InputResolution[1]}
	total, err := s.lake.Count(ctx, selection(run.Params))
	if err != nil {
		return err
	}
	jr.SetTotal(int64(total))
	err = a.analyze(ctx)
	if err == nil {
		err = a.tagCollection(ctx)
	}
	return errors.Join(err, a.finish(context.WithoutCancel(ctx)))
}

// runnerFor returns the runner of a model on a platform.
func (s *Service) runnerFor(m Model, platform string) (Runner, error) {
	if platform == AWS {
		endpoint := or(m.Endpoint, s.opt.Endpoint)
		if endpoint == "" {
			return nil, errs.Invalid("inference_platform", "model %s has no endpoint for inference_platform aws", m.Name)
		}
		if eps := splitEndpoints(endpoint); len(eps) > 1 {
			return newEndpointPool(m.Name, eps, s.opt.CallTimeout+10*time.Second, s.log), nil
		}
		return newRemote(m.Name, endpoint, s.opt.CallTimeout+10*time.Second), nil
	}
	return s.pool.runner(m)
}

// LocalRunner returns the local runner of a registered model, for serving
// it over HTTP (framelake model serve). Close stops its worker.
func (s *Service) LocalRunner(ctx context.Context, name string) (Runner, error) {
	m, err := s.Model(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.pool.runner(m)
}

// guard runs fn, turning a panic into an error.
func guard(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("analysis panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return fn()
}

func (a *analyzer) analyze(ctx context.Context) error {
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err })
		cancel(err)
	}
	units := make(chan unit, 8)
	results := make(chan *result, 2*writeBatch)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(units)
		if err := guard(func() error { return a.produce(pctx, units) }); err != nil {
			fail(err)
		}
	})
	wg.Go(func() {
		// The writer uses ctx, not pctx: results already made are stored even
		// when the model fails later.
		if err := guard(func() error { return a.write(ctx, results, fail) }); err != nil {
			fail(err)
		}
	})
	if err := guard(func() error { return a.consume(pctx, units, results) }); err != nil {
		fail(err)
	}
	close(results)
	for range units {
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

func send[T any](ctx context.Context, ch chan<- T, v T) error {
	select {
	case ch <- v:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// produce sends the inputs of every selected file.
func (a *analyzer) produce(ctx context.Context, units chan<- unit) error {
	return a.s.lake.EachFile(ctx, selection(a.run.Params), func(f lake.File) error {
		switch {
		case !isMedia(f):
			return send(ctx, units, unit{file: f, end: true, ignore: true})
		case f.Type == lake.Image:
			jpeg, w, h, err := a.s.imageInput(ctx, f, a.inW, a.inH)
			if err != nil {
				return send(ctx, units, unit{file: f, end: true, skip: err})
			}
			if err := send(ctx, units, unit{file: f, jpeg: jpeg, srcW: w, srcH: h}); err != nil {
				return err
			}
			return send(ctx, units, unit{file: f, end: true})
		}
		step := sampleStep(f.FrameRate, a.run.Params.VideoFPS)
		err := a.s.videoFrames(ctx, f, a.inW, a.inH, step, func(index int, jpeg []byte) error {
			return send(ctx, units, unit{file: f, frame: index, jpeg: jpeg})
		})
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return send(ctx, units, unit{file: f, end: true, skip: err})
	})
}

// consume calls the model on every input and hands finished files to the writer.
func (a *analyzer) consume(ctx context.Context, units <-chan unit, results chan<- *result) error {
	var cur *result
	for u := range units {
		if cur == nil || cur.file.ID != u.file.ID {
			cur = &result{file: u.file, tags: map[string]float64{}}
		}
		if !u.end {
			a.frames.Add(1)
			if err := a.analyzeFrame(ctx, cur, u); err != nil {
				return err
			}
			continue
		}
		a.job.Advance(1)
		switch {
		case u.ignore:
		case u.skip != nil:
			a.skip(u.file, u.skip)
		case a.run.Application == Embedding && cur.nvec == 0:
			a.skip(u.file, errors.New("no frame could be read"))
		default:
			a.items.Add(1)
			if err := send(ctx, results, cur); err != nil {
				return err
			}
		}
		cur = nil
	}
	return context.Cause(ctx)
}

func (a *analyzer) skip(f lake.File, why error) {
	a.skipped.Add(1)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.skips) < 20 {
		a.skips = append(a.skips, skippedFile{UniqueName: f.UniqueName, Reason: why.Error()})
	}
}

// request builds the model input of a frame as the contract says.
func (a *analyzer) request(jpeg []byte) (Request, error) {
	if a.run.Application != AutoAnnotation {
		return Request{Body: jpeg, ContentType: "image/jpeg", Accept: "application/json"}, nil
	}
	body, err := json.Marshal(map[string]any{"image": base64.StdEncoding.EncodeToString(jpeg),
		"prompts": a.run.Params.Prompts})
	return Request{Body: body, ContentType: "application/json", Accept: "application/json"}, err
}

// analyzeFrame runs the model on one input and adds what it saw to r.
func (a *analyzer) analyzeFrame(ctx context.Context, r *result, u unit) error {
	req, err := a.request(u.jpeg)
	if err != nil {
		return err
	}
	resp, err := a.runner.Invoke(ctx, req)
	if err != nil {
		return err
	}
	if a.run.Application == Embedding {
		v, err := a.embedding(resp.Body)
		if err != nil {
			return err
		}
		if r.vec == nil {
			r.vec = make([]float64, len(v))
		}
		if len(v) != len(r.vec) {
			return a.outputError(resp.Body, "embedding of frame %d has %d numbers, earlier frames %d", u.frame, len(v), len(r.vec))
		}
		for i, x := range v {
			r.vec[i] += float64(x)
		}
		r.nvec++
		return nil
	}
	ds, unsupported, err := a.detections(resp.Body)
	if err != nil {
		return err
	}
	for _, label := range unsupported {
		a.unsupported[label] = true
	}
	ow, oh := originalSize(u)
	if ow == 0 {
		ow, oh = a.inW, a.inH
	}
	for _, d := range ds {
		if d.score < a.run.Params.ConfidenceThreshold {
			continue
		}
		b, ok := toBox(d, a.inW, a.inH, ow, oh, u.frame)
		if !ok {
			continue
		}
		r.boxes = append(r.boxes, b)
		if c, seen := r.tags[d.label]; !seen || d.score > c {
			r.tags[d.label] = d.score
		}
	}
	return nil
}

// write stores results in batches of writeBatch files, or every second.
func (a *analyzer) write(ctx context.Context, results <-chan *result, fail func(error)) error {
	batch := make([]*result, 0, writeBatch)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var werr error
	flush := func() {
		if werr == nil && len(batch) > 0 {
			if werr = a.flush(ctx, batch); werr != nil {
				fail(werr) // stop the run; keep draining so nothing blocks
			}
		}
		batch = batch[:0]
	}
	for {
		select {
		case r, ok := <-results:
			if !ok {
				flush()
				return werr
			}
			batch = append(batch, r)
			if len(batch) >= writeBatch {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

func (a *analyzer) flush(ctx context.Context, batch []*result) error {
	if a.run.Application == Embedding {
		return a.flushVectors(ctx, batch)
	}
	var ntags, nboxes int64
	err := a.s.db.Tx(ctx, func(tx *sql.Tx) error {
		ntags, nboxes = 0, 0
		for _, r := range batch {
			if err := lake.ReplaceBoxes(ctx, tx, r.file.Seq(), lake.Machine, a.run.ID, -1, r.boxes); err != nil {
				return err
			}
			tags := make([]lake.Tag, 0, len(r.tags))
			for name, c := range r.tags {
				tags = append(tags, lake.Tag{Name: name, Operation: a.run.ID, Confidence: &c})
			}
			if err := lake.AddFileTags(ctx, tx, r.file.Seq(), tags); err != nil {
				return err
			}
			ntags, nboxes = ntags+int64(len(tags)), nboxes+int64(len(r.boxes))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store tags and boxes: %w", err)
	}
	a.tags.Add(ntags)
	a.boxes.Add(nboxes)
	if a.run.Params.CollectionID != "" {
		a.mu.Lock()
		for _, r := range batch {
			for name, c := range r.tags {
				a.collTags[name] = max(a.collTags[name], c)
			}
		}
		a.mu.Unlock()
	}
	return nil
}

// flushVectors stores one vector per file: a video's is the mean of its frames'.
func (a *analyzer) flushVectors(ctx context.Context, batch []*result) error {
	recs := make([]vector.Record, len(batch))
	for i, r := range batch {
		v := make([]float32, len(r.vec))
		for j, x := range r.vec {
			v[j] = float32(x / float64(r.nvec))
		}
		recs[i] = vector.Record{UniqueName: r.file.UniqueName, Vector: v}
	}
	n, err := a.s.vectors.Insert(ctx, a.run.VectorModel, len(recs[0].Vector), recs)
	if err != nil {
		return fmt.Errorf("store embeddings under vector model %s: %w", a.run.VectorModel, err)
	}
	a.embeddings.Add(int64(n))
	return nil
}

// tagCollection puts every tag the run found on the collection it ran over.
func (a *analyzer) tagCollection(ctx context.Context) error {
	if a.run.Params.CollectionID == "" || len(a.collTags) == 0 {
		return nil
	}
	c, err := a.s.lake.Collection(ctx, a.run.Params.CollectionID)
	if err != nil {
		return err
	}
	tags := make([]lake.Tag, 0, len(a.collTags))
	for name, conf := range a.collTags {
		tags = append(tags, lake.Tag{Name: name, Operation: a.run.ID, Confidence: &conf})
	}
	return a.s.db.Tx(ctx, func(tx *sql.Tx) error { return lake.AddCollectionTags(ctx, tx, c.Seq(), tags) })
}

// finish records the run's counts and sets the job result.
func (a *analyzer) finish(ctx context.Context) error {
	c := Counts{Items: a.items.Load(), Frames: a.frames.Load(), Tags: a.tags.Load(), Boxes: a.boxes.Load(),
		Embeddings: a.embeddings.Load(), Skipped: a.skipped.Load()}
	unsupported := a.unsupportedPrompts()
	list, _ := json.Marshal(unsupported) // a list of strings always marshals
	err := a.s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE run SET items = ?, frames = ?, tags = ?, boxes = ?, embeddings = ?,
			skipped = ?, unsupported = ?, finished_at = ? WHERE id = ?`, c.Items, c.Frames, c.Tags, c.Boxes,
			c.Embeddings, c.Skipped, string(list), time.Now().UnixMilli(), a.run.ID)
		return err
	})
	a.mu.Lock()
	skips := a.skips
	a.mu.Unlock()
	res := map[string]any{"runId": a.run.ID, "modelName": a.run.Model, "application": a.run.Application, "counts": c}
	if a.run.VectorModel != "" && a.run.Application == Embedding {
		res["vectorModel"] = a.run.VectorModel
	}
	if len(skips) > 0 {
		res["skippedFiles"] = skips
	}
	if p, ok := a.runner.(*endpointPool); ok {
		res["endpoints"] = p.Calls() // which endpoint ran how many calls
	}
	if a.run.Application == AutoAnnotation {
		res["unsupported"] = unsupported
	}
	return errors.Join(err, a.job.SetResult(res))
}

// unsupportedPrompts lists, in the run's prompt order, the labels of the
// prompts the model reported it cannot handle on any frame.
func (a *analyzer) unsupportedPrompts() []string {
	out := []string{}
	for _, p := range a.run.Params.Prompts {
		if a.unsupported[p.Label] {
			out = append(out, p.Label)
		}
	}
	return out
}
