package evaluate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/query"
	"github.com/framelake/framelake/lake/shape"
)

// Start checks req, stores the evaluation as running and queues its job, in
// one transaction; it returns the job's id.
func (s *Service) Start(ctx context.Context, req Request) (string, error) {
	p, err := s.check(ctx, req)
	if err != nil {
		return "", err
	}
	params, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	var jobID string
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM evaluation WHERE key = ?`, req.Key).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return errs.New(errs.AlreadyExists, "key", "evaluation %q exists; delete it or choose another key", req.Key)
		}
		if jobID, err = s.jobs.Enqueue(ctx, tx, JobType, map[string]string{"key": req.Key}); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO evaluation (key, params, status, job_id, created_by, created_at)
			VALUES (?, ?, 'running', ?, ?, ?)`, req.Key, string(params), jobID, req.CreatedBy, time.Now().UnixMilli())
		return err
	})
	return jobID, err
}

// check validates a request and returns its parameters with defaults.
func (s *Service) check(ctx context.Context, req Request) (Params, error) {
	p := Params{PredRunID: req.PredRunID, GTOperations: req.GTOperations, Query: req.Query,
		CollectionID: req.CollectionID, VersionID: req.VersionID, Split: req.Split, IoU: req.IoU, Confidence: req.Confidence,
		TieOrder: req.TieOrder, AreaSource: req.AreaSource, VOCAP: req.VOCAP, IoUType: req.IoUType,
		Sigmas: req.Sigmas}.withDefaults()
	if p.GTOperations == nil {
		p.GTOperations = []string{}
	}
	if p.IoU == 0 {
		p.IoU = DefaultIoU
	}
	switch {
	case !query.ValidEvalKey(req.Key):
		return p, errs.Invalid("key", "key %q must be 1 to %d letters, digits, _ or - (it is written in queries: eval.<key>.fp)",
			req.Key, query.MaxEvalKey)
	case math.IsNaN(p.IoU) || p.IoU <= 0 || p.IoU > 1:
		return p, errs.Invalid("iou", "iou must be in (0, 1], got %g", p.IoU)
	case math.IsNaN(p.Confidence) || p.Confidence < 0 || p.Confidence > 1:
		return p, errs.Invalid("confidence", "confidence must be in [0, 1], got %g", p.Confidence)
	case p.TieOrder != TieImageID && p.TieOrder != TieFile:
		return p, errs.Invalid("tie_order", "tie_order must be %q (pycocotools': COCO image id) or %q, got %q", TieImageID, TieFile, p.TieOrder)
	case p.AreaSource != AreaAnnotation && p.AreaSource != AreaBox:
		return p, errs.Invalid("area_source", "area_source must be %q (pycocotools': COCO's area) or %q (width × height), got %q",
			AreaAnnotation, AreaBox, p.AreaSource)
	case p.VOCAP != VOCAllPoints && p.VOCAP != VOC07:
		return p, errs.Invalid("voc_ap", "voc_ap must be %q (VOC 2010 on) or %q (VOC 2007's 11 points), got %q", VOCAllPoints, VOC07, p.VOCAP)
	case p.IoUType != IoUBox && p.IoUType != IoUSegm && p.IoUType != IoUKeypoints && p.IoUType != IoUClass:
		return p, errs.Invalid("iou_type", "iou_type must be %q (boxes), %q (masks), %q (OKS) or %q (class labels), got %q",
			IoUBox, IoUSegm, IoUKeypoints, IoUClass, p.IoUType)
	case len(p.Sigmas) > 0 && p.IoUType != IoUKeypoints:
		return p, errs.Invalid("sigmas", "sigmas are OKS's: they need iou_type %q", IoUKeypoints)
	}
	if err := s.checkRun(ctx, "pred_run_id", p.PredRunID); err != nil {
		return p, err
	}
	if p.IoUType == IoUKeypoints {
		if err := s.checkKeypointLabels(ctx, p); err != nil {
			return p, err
		}
	}
	for _, op := range p.GTOperations {
		if ok, err := s.lake.HasOperation(ctx, op); err != nil {
			return p, err
		} else if ok {
			continue
		}
		if ok, err := s.lake.HasLabelledFrames(ctx, op); err != nil {
			return p, err
		} else if !ok {
			return p, errs.New(errs.NotFound, "gt_operations", "gt_operations: %q has no boxes and labelled no frame "+
				"(not an annotation project with labels, nor an import: import:<collection name>)", op)
		}
	}
	if _, _, err := s.lake.SelectionSQL(ctx, selection(p)); err != nil {
		return p, err
	}
	_, err := s.versionFiles(ctx, p)
	return p, err
}

// versionFiles returns the files of the evaluation's version split, nil
// when it names no version.
func (s *Service) versionFiles(ctx context.Context, p Params) ([]int64, error) {
	switch {
	case p.VersionID == "" && p.Split != "":
		return nil, errs.Invalid("split", "split %q needs version_id: the dataset version it is a split of", p.Split)
	case p.VersionID == "":
		return nil, nil
	case s.opt.Versions == nil:
		return nil, errs.New(errs.Unavailable, "version_id", "dataset versions are not available to evaluations on this server")
	}
	return s.opt.Versions.SplitFiles(ctx, p.VersionID, p.Split)
}

// checkRun requires a model run id known to the runs or to the lake's boxes.
func (s *Service) checkRun(ctx context.Context, field, run string) error {
	if run == "" {
		return errs.Invalid(field, "%s is required: the id of a model run", field)
	}
	if s.runs != nil {
		if ok, err := s.runs.HasOperation(ctx, run); err != nil || ok {
			return err
		}
	}
	if ok, err := s.lake.HasOperation(ctx, run); err != nil || ok {
		return err
	}
	return errs.New(errs.NotFound, field, "model run %q not found", run)
}

// selection is the files an evaluation covers: a collection's files, or the
// lake's images, narrowed by the query.
func selection(p Params) lake.Selection {
	sel := lake.Selection{CollectionID: p.CollectionID, Query: p.Query}
	if p.CollectionID == "" {
		sel.ItemType = "image"
	}
	return sel
}

func (p Params) boxQuery(pageFiles int) lake.BoxPairQuery {
	q := lake.BoxPairQuery{Selection: selection(p), MachineOperation: p.PredRunID, PageFiles: pageFiles,
		WithShapes: p.IoUType == IoUSegm || p.IoUType == IoUKeypoints}
	if len(p.GTOperations) > 0 {
		q.HumanOperations = p.GTOperations
	}
	return q
}

// runJob computes an evaluation. It starts from scratch when resumed.
func (s *Service) runJob(ctx context.Context, r *job.Run) error {
	var in struct{ Key string }
	if err := r.Decode(&in); err != nil {
		return err
	}
	ev, err := s.load(ctx, in.Key)
	if errs.Is(err, errs.NotFound) {
		return fmt.Errorf("evaluation %q was deleted", in.Key)
	} else if err != nil {
		return err
	}
	res, err := s.evaluate(ctx, r, ev)
	if err != nil {
		// The job records the failure too; the evaluation says why it has no figures.
		if ferr := s.finish(context.WithoutCancel(ctx), ev.seq, Failed, nil, err.Error()); ferr != nil {
			return errors.Join(err, ferr)
		}
		return err
	}
	if err := s.finish(ctx, ev.seq, Completed, res, ""); err != nil {
		return err
	}
	return r.SetResult(res)
}

// evaluate streams the evaluation's files, writes outcomes and file counts
// in batches, and returns the figures.
func (s *Service) evaluate(ctx context.Context, r *job.Run, ev stored) (Result, error) {
	if err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM evaluation_file WHERE eval_seq = ?`, ev.seq); err != nil {
			return err
		}
		return lake.DeleteFileEvalsTx(ctx, tx, ev.Key)
	}); err != nil {
		return Result{}, err
	}
	p := ev.Params.withDefaults()
	truth, scoped, err := s.scope(ctx, p)
	if err != nil {
		return Result{}, err
	}
	if p.IoUType == IoUClass {
		return s.classify(ctx, r, ev, scoped, truth)
	}
	q := scoped.boxQuery(s.opt.PageFiles)
	if q.FileSeqs, err = s.versionFiles(ctx, p); err != nil {
		return Result{}, err
	}
	total, err := s.lake.CountHumanFiles(ctx, q)
	if err != nil {
		return Result{}, err
	}
	r.SetTotal(int64(total))
	e := newEvaluator(p.IoU, p.Confidence)
	e.opt = options{tieOrder: p.TieOrder, voc07: p.VOCAP == VOC07}
	var kps *kpResolver
	if p.IoUType == IoUKeypoints {
		e.proto, kps = kpProtocol, newKPResolver(s.opt.Skeletons, p.Sigmas)
	}
	res := Result{Key: ev.Key, Params: p, TieOrder: p.TieOrder, AreaSource: p.AreaSource, VOCAP: p.VOCAP, IoUType: p.IoUType}
	w := &outcomeWriter{s: s, evalSeq: ev.seq, key: ev.Key}
	err = s.lake.EachFileBoxPair(ctx, q, func(fb lake.BoxPair) error {
		truth.Files++
		if err := w.judge(ctx, e, kps, p, fb, &res); err != nil {
			return err
		}
		r.Advance(1)
		if len(w.files) >= fileBatch {
			return w.flush(ctx)
		}
		return nil
	})
	if err == nil {
		err = w.flush(ctx)
	}
	if err != nil {
		return Result{}, err
	}
	if truth.Operations, err = s.lake.TruthOperations(ctx, q); err != nil {
		return Result{}, err
	}
	truth.Frames, truth.EmptyFrames = e.frames, e.empty
	res.Truth, res.Metrics = truth, e.result()
	res.TieImageIDs = e.withImageID()
	if kps != nil {
		res.Sigmas = kps.used
	}
	return res, nil
}

// scope returns what an evaluation judges: with no gt_operations and no
// collection_id, query or version_id, the files its run covered (the run's
// collection and query), not every labelled file of the lake.
func (s *Service) scope(ctx context.Context, p Params) (Truth, Params, error) {
	t := Truth{Scope: "request"}
	if len(p.GTOperations) > 0 || p.CollectionID != "" || p.Query != "" || p.VersionID != "" {
		return t, p, nil
	}
	t.Scope = "lake"
	rs, ok := s.runs.(RunScopes)
	if !ok {
		return t, p, nil
	}
	coll, query, err := rs.RunScope(ctx, p.PredRunID)
	if errs.Is(err, errs.NotFound) { // a run known by its boxes only
		return t, p, nil
	} else if err != nil {
		return t, p, err
	}
	if coll == "" && query == "" {
		return t, p, nil
	}
	t.Scope, t.CollectionID, t.Query = "run", coll, query
	p.CollectionID, p.Query = coll, query
	return t, p, nil
}

// fileBatch is how many files' outcomes one write transaction stores, so
// other writers wait at most a few tens of milliseconds.
const fileBatch = 2000

// addCount counts an outcome into its file's figures: true positives once
// (from the human side), false positives and negatives.
func addCount(c *lake.FileEvalCounts, o outcome) {
	switch {
	case o.kind == TP && o.human:
		c.TP++
	case o.kind == FP:
		c.FP++
	case o.kind == FN:
		c.FN++
	}
}

// outcomeWriter buffers files' packed outcomes and counts between writes:
// file i's outcomes are packed[ends[i-1]:ends[i]].
type outcomeWriter struct {
	s       *Service
	evalSeq int64
	key     string
	packed  []byte
	ends    []int
	files   []lake.FileEvalCounts
}

// judge matches one file's frames (fb) in e and keeps their outcomes and
// counts for the next flush; res counts the areas COCO's file gave.
func (w *outcomeWriter) judge(ctx context.Context, e *evaluator, kps *kpResolver, p Params, fb lake.BoxPair, res *Result) error {
	masks := masksNone
	switch p.IoUType {
	case IoUSegm:
		masks = masksAll
	case IoUKeypoints:
		masks = masksKeypoints
	}
	frames, err := splitFrames(fb, p.AreaSource == AreaAnnotation, masks)
	if err != nil {
		return err
	}
	counts := lake.FileEvalCounts{FileSeq: fb.Seq}
	for _, fr := range frames {
		if kps != nil {
			if err := kps.frame(ctx, &fr); err != nil {
				return fmt.Errorf("%s: %w", fb.UniqueName, err)
			}
		}
		res.AnnotationAreas += fr.areas
		outs := e.addKeyedFrame(fr.key, fr.gs, fr.ds)
		for _, o := range outs {
			addCount(&counts, o)
		}
		w.packed = packOutcomes(w.packed, outs)
	}
	w.files = append(w.files, counts)
	w.ends = append(w.ends, len(w.packed))
	return nil
}

func (w *outcomeWriter) flush(ctx context.Context) error {
	err := w.s.db.Tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO evaluation_file (eval_seq, file_seq, outcomes) VALUES (?, ?, ?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		from := 0
		for i, f := range w.files {
			if _, err := st.ExecContext(ctx, w.evalSeq, f.FileSeq, w.packed[from:w.ends[i]]); err != nil {
				return fmt.Errorf("box outcomes: %w", err)
			}
			from = w.ends[i]
		}
		return lake.SetFileEvalsTx(ctx, tx, w.key, w.files)
	})
	w.packed, w.ends, w.files = w.packed[:0], w.ends[:0], w.files[:0]
	return err
}

// masks says which annotations splitFrames draws as masks.
type masks int

const (
	masksNone      masks = iota // every annotation compares by its box
	masksAll                    // iou_type segm: every annotation by its mask
	masksSegments               // polygons and masks by their pixels where both sides are one, the rest by boxes
	masksKeypoints              // iou_type keypoints: shapes kept for keypoints.go, none drawn
)

// splitFrames turns a file's boxes into its judged frames: those that have
// human boxes and those labelled empty. With cocoArea, human boxes carry
// COCO's area where their import kept one. With masksAll, every box carries
// its mask (maskOf) and predicted boxes the mask's area, as pycocotools'
// loadRes gives segmentation results; with masksSegments only polygons and
// masks carry one, and areas stay as for boxes.
func splitFrames(fb lake.BoxPair, cocoArea bool, mode masks) ([]frameBoxes, error) {
	segm := mode == masksAll
	areas := map[int]int{}
	byFrame := func(bs []lake.ScoredBox) (map[int][]box, error) {
		m := map[int][]box{}
		for _, b := range bs {
			x := box{seq: b.Seq, label: b.Label, x: b.X, y: b.Y, w: b.W, h: b.H, score: b.Score, crowd: b.Crowd && b.Human}
			if mode == masksKeypoints {
				x.typ, x.geom = b.Type, b.Geometry
			}
			if segm || mode == masksSegments && (b.Type == shape.Polygon || b.Type == shape.Mask) {
				mask, err := maskOf(b, fb.Height, fb.Width)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", fb.UniqueName, err)
				}
				x.mask = mask
				if segm && (!b.Human || !cocoArea || !(b.Area > 0)) {
					x.cocoArea = float64(mask.Area)
				}
			}
			if cocoArea && b.Human && b.Area > 0 {
				x.cocoArea = b.Area
				areas[b.Frame]++
			}
			m[b.Frame] = append(m[b.Frame], x)
		}
		return m, nil
	}
	gs, err := byFrame(fb.Human)
	if err != nil {
		return nil, err
	}
	ds, err := byFrame(fb.Machine)
	if err != nil {
		return nil, err
	}
	frames := make([]int, 0, len(gs)+len(fb.Labelled))
	for f := range gs {
		frames = append(frames, f)
	}
	for _, f := range fb.Labelled {
		if _, ok := gs[f]; !ok {
			frames = append(frames, f) // labelled empty: judged, with no human box
		}
	}
	sort.Ints(frames)
	out := make([]frameBoxes, len(frames))
	for i, f := range frames {
		k := frameKey{name: fb.Name, blob: fb.Blob, frame: f}
		if fb.ImageID != nil {
			k.imageID, k.hasID = *fb.ImageID, true
		}
		out[i] = frameBoxes{gs: gs[f], ds: ds[f], key: k, areas: areas[f]}
	}
	return out, nil
}

// frameBoxes is one frame: human and predicted boxes, its place in the tie
// order, and how many human boxes have COCO's area.
type frameBoxes struct {
	gs, ds []box
	key    frameKey
	areas  int
}
