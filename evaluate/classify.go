package evaluate

import (
	"context"
	"sort"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// iou_type class: a model run's class labels (whole-frame labels) judged
// against people's, frame by frame.
//
// A frame is judged when the truth gave it a class, or when the run gave it
// one and the truth labelled the frame otherwise (any annotation of the
// truth's operations, or a frame labelled empty): the truth says it has no
// class. A frame nobody labelled is not judged, as for boxes. Of the run's
// classes on a frame only the top one counts (highest confidence, at or
// above the evaluation's confidence; ties to the one stored first).
//
// The top prediction is correct when it is one of the frame's true classes.
// Accuracy is correct frames over frames with a true class. For a class c,
// a frame whose top prediction is c is a tp when c is true there, else an
// fp; a frame where c is true and the top prediction is another (or none)
// is an fn. The confusion matrix counts each true class of a frame (rows)
// against its top prediction (columns), None last: a frame with no true
// class in None's row, one with no prediction in None's column.

// None names the confusion matrix's row and column of frames without a true
// class or without a prediction in a classification.
const None = "none"

// Classification is iou_type class's result.
type Classification struct {
	Frames    int                    `json:"frames"`    // frames judged
	Truthful  int                    `json:"truthful"`  // judged frames with a true class
	Correct   int                    `json:"correct"`   // of those, frames whose top prediction is true
	Accuracy  float64                `json:"accuracy"`  // correct / truthful; Undefined with none
	Labels    map[string]ClassResult `json:"labels"`    // per class
	Confusion Confusion              `json:"confusion"` // rows true classes, columns top predictions, None last
}

// ClassResult is one class's figures in a classification.
type ClassResult struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	Support   int     `json:"support"` // frames where the class is true
}

// classRow is one class annotation as classify reads it.
type classRow struct {
	file, seq int64
	frame     int
	human     bool
	label     string
	score     float64
	truthOnIt bool // a prediction on a frame the truth labelled
}

// classifier counts frames as they come.
type classifier struct {
	conf      float64
	res       Classification
	counts    map[string]*ClassResult
	confusion map[[2]string]int
}

// frame judges one frame's class rows; it returns their outcomes.
func (c *classifier) frame(rows []classRow) []outcome {
	var truths []classRow
	top, labelled := -1, false
	for i, r := range rows {
		switch {
		case r.human:
			truths = append(truths, r)
		case r.score >= c.conf && (top < 0 || r.score > rows[top].score):
			top = i
		}
		labelled = labelled || !r.human && r.truthOnIt
	}
	if len(truths) == 0 && (top < 0 || !labelled) {
		return nil // not judged: no truth here
	}
	c.res.Frames++
	pred := None
	if top >= 0 {
		pred = rows[top].label
	}
	var out []outcome
	correct := false
	for _, t := range truths {
		n := c.count(t.label)
		n.Support++
		c.confusion[[2]string{t.label, pred}]++
		o := outcome{seq: t.seq, human: true, kind: FN, label: t.label}
		if t.label == pred {
			correct, o.kind = true, TP
			n.TP++
		} else {
			n.FN++
		}
		out = append(out, o)
	}
	if len(truths) == 0 {
		c.confusion[[2]string{None, pred}]++
	} else {
		c.res.Truthful++
	}
	if correct {
		c.res.Correct++
	}
	if top >= 0 {
		o := outcome{seq: rows[top].seq, kind: TP, label: pred}
		if !correct {
			o.kind = FP
			c.count(pred).FP++
		}
		out = append(out, o)
	}
	return out
}

func (c *classifier) count(label string) *ClassResult {
	n := c.counts[label]
	if n == nil {
		n = &ClassResult{}
		c.counts[label] = n
	}
	return n
}

// result finishes the figures.
func (c *classifier) result() Classification {
	res := c.res
	res.Accuracy = Undefined
	if res.Truthful > 0 {
		res.Accuracy = float64(res.Correct) / float64(res.Truthful)
	}
	labels := make([]string, 0, len(c.counts))
	res.Labels = map[string]ClassResult{}
	for l, n := range c.counts {
		n.Precision, n.Recall, n.F1 = prf(n.TP, n.FP, n.FN)
		res.Labels[l] = *n
		labels = append(labels, l)
	}
	sort.Strings(labels)
	names := append(labels, None)
	idx := map[string]int{}
	for i, l := range names {
		idx[l] = i
	}
	mat := make([][]int, len(names))
	for i := range mat {
		mat[i] = make([]int, len(names))
	}
	for k, n := range c.confusion {
		mat[idx[k[0]]][idx[k[1]]] += n
	}
	res.Confusion = Confusion{Labels: names, Matrix: mat}
	return res
}

// classify runs iou_type class: it reads the scope's class annotations in
// file and frame order, judges frame by frame, and stores outcomes and file
// counts as a box evaluation does.
func (s *Service) classify(ctx context.Context, r *job.Run, ev stored, p Params, truth Truth) (Result, error) {
	q := p.boxQuery(s.opt.PageFiles)
	var err error
	if q.FileSeqs, err = s.versionFiles(ctx, p); err != nil {
		return Result{}, err
	}
	c := &classifier{conf: p.Confidence, counts: map[string]*ClassResult{}, confusion: map[[2]string]int{}}
	w := &outcomeWriter{s: s, evalSeq: ev.seq, key: ev.Key}
	var frame []classRow
	var fileOuts []outcome
	endFile := func() error {
		if len(fileOuts) == 0 {
			return nil
		}
		counts := lake.FileEvalCounts{FileSeq: frame[0].file}
		for _, o := range fileOuts {
			addCount(&counts, o)
		}
		truth.Files++
		w.packed = packOutcomes(w.packed, fileOuts)
		w.files, w.ends, fileOuts = append(w.files, counts), append(w.ends, len(w.packed)), fileOuts[:0]
		r.Advance(1)
		if len(w.files) >= fileBatch {
			return w.flush(ctx)
		}
		return nil
	}
	err = s.lake.EachClassLabel(ctx, q, func(l lake.ClassLabel) error {
		cr := classRow{file: l.FileSeq, seq: l.Seq, frame: l.Frame, human: l.Human, label: l.Label, score: l.Score,
			truthOnIt: l.TruthOnFrame}
		if len(frame) > 0 && (cr.file != frame[0].file || cr.frame != frame[0].frame) {
			fileOuts = append(fileOuts, c.frame(frame)...)
			if cr.file != frame[0].file {
				if err := endFile(); err != nil {
					return err
				}
			}
			frame = frame[:0]
		}
		frame = append(frame, cr)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	if len(frame) > 0 {
		fileOuts = append(fileOuts, c.frame(frame)...)
		if err := endFile(); err != nil {
			return Result{}, err
		}
	}
	if err := w.flush(ctx); err != nil {
		return Result{}, err
	}
	if truth.Operations, err = s.lake.TruthOperations(ctx, q); err != nil {
		return Result{}, err
	}
	cl := c.result()
	truth.Frames = cl.Frames
	res := Result{Key: ev.Key, Params: ev.Params.withDefaults(), Truth: truth, TieOrder: p.TieOrder, AreaSource: p.AreaSource,
		VOCAP: p.VOCAP, IoUType: IoUClass, Classification: &cl, Metrics: classMetrics(cl)}
	return res, nil
}

// classMetrics fills the box figures of a classification: every COCO and
// VOC figure Undefined, the per-label counts and the confusion matrix the
// classification's, so comparisons and the evaluation pages read them.
func classMetrics(cl Classification) Metrics {
	u := Undefined
	m := Metrics{MAP: u, AP50: u, AP75: u, MAPSmall: u, MAPMedium: u, MAPLarge: u, VOCAP50: u, AR1: u, AR10: u, AR100: u,
		ARSmall: u, ARMedium: u, ARLarge: u, Labels: map[string]LabelResult{}, Confusion: cl.Confusion, PR: map[string]Curve{}}
	for l, n := range cl.Labels {
		m.Labels[l] = LabelResult{AP: u, AP50: u, VOCAP50: u, Precision: n.Precision, Recall: n.Recall, F1: n.F1,
			TP: n.TP, FP: n.FP, FN: n.FN}
	}
	return m
}
