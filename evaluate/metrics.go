package evaluate

import (
	"cmp"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// evaluator takes an evaluation's frames one at a time and keeps only what
// the figures need (per predicted box a score and a few bits), so a million
// boxes are evaluated without holding them.
type evaluator struct {
	thr, conf float64
	opt       options
	proto     *protocol  // boxProtocol unless set before the first frame
	keys      []frameKey // each frame's place in the tie order, by frame index
	coco      map[string]*cocoLabel
	voc       map[string]*vocLabel
	counts    map[string]*[3]int // tp, fp, fn at thr
	confusion map[[2]string]int  // (human label, predicted label); "" is background
	frames    int
	empty     int // frames labelled empty
}

func newEvaluator(thr, conf float64) *evaluator {
	return &evaluator{thr: thr, conf: conf, proto: boxProtocol, coco: map[string]*cocoLabel{}, voc: map[string]*vocLabel{},
		counts: map[string]*[3]int{}, confusion: map[[2]string]int{}}
}

// options are the evaluation's named choices that the figures depend on.
type options struct {
	tieOrder string // TieImageID or TieFile
	voc07    bool   // VOC_AP50 by VOC 2007's 11 points
}

// frameKey places a frame in the order that breaks tied scores: by COCO
// image id first when the tie order is TieImageID and the frame has one
// (frames without follow), then by file name, the bytes' SHA-256 and frame
// number, none of which depends on when an import stored the file; frames
// with equal keys (tests that give none) keep the order they came in.
type frameKey struct {
	imageID    int64
	hasID      bool
	name, blob string
	frame      int
}

func (e *evaluator) tiePositions() []int32 {
	idx := make([]int32, len(e.keys))
	for i := range idx {
		idx[i] = int32(i)
	}
	byID := e.opt.tieOrder != TieFile
	slices.SortStableFunc(idx, func(i, j int32) int {
		a, b := &e.keys[i], &e.keys[j]
		if byID && a.hasID != b.hasID {
			if a.hasID {
				return -1
			}
			return 1
		}
		c := 0
		if byID && a.hasID {
			c = cmp.Compare(a.imageID, b.imageID)
		}
		return cmp.Or(c, cmp.Compare(a.name, b.name), cmp.Compare(a.blob, b.blob), cmp.Compare(a.frame, b.frame))
	})
	pos := make([]int32, len(idx))
	for p, i := range idx {
		pos[i] = int32(p)
	}
	return pos
}

// withImageID counts the frames that have a COCO image id in the tie order.
func (e *evaluator) withImageID() int {
	if e.opt.tieOrder == TieFile {
		return 0
	}
	n := 0
	for _, k := range e.keys {
		if k.hasID {
			n++
		}
	}
	return n
}

// addFrame evaluates one frame (an image, or one frame of a video) with no
// key of its own (it ranks in the order frames came in).
func (e *evaluator) addFrame(gs, ds []box) []outcome { return e.addKeyedFrame(frameKey{}, gs, ds) }

// addKeyedFrame evaluates one frame: gs are its human boxes (none for a
// frame labelled empty), ds its predicted ones in any order. It returns the
// outcome of every box at the evaluation's IoU; predicted boxes under the
// confidence take part in the AP figures only and get none.
func (e *evaluator) addKeyedFrame(k frameKey, gs, ds []box) []outcome {
	e.frames++
	if len(gs) == 0 {
		e.empty++
	}
	fi := int32(len(e.keys))
	e.keys = append(e.keys, k)
	byScore(ds)
	for label, p := range splitByLabel(gs, ds) {
		c := e.coco[label]
		if c == nil {
			c = &cocoLabel{p: e.proto}
			e.coco[label], e.voc[label], e.counts[label] = c, &vocLabel{}, &[3]int{}
		}
		c.addFrame(p[0], p[1], fi)
		e.voc[label].addFrame(p[0], p[1], vocThr, fi)
	}
	kept := ds
	for i, d := range ds {
		if d.score < e.conf {
			kept = ds[:i]
			break
		}
	}
	out := matchFrame(gs, kept, e.thr)
	for _, o := range out {
		e.count(o)
	}
	return out
}

// count adds one outcome to the label counts and the confusion matrix: a
// label mismatch is counted once, from the human box's side.
func (e *evaluator) count(o outcome) {
	n := e.counts[o.label]
	switch {
	case o.kind == TP && o.human:
		n[0]++
		e.confusion[[2]string{o.label, o.label}]++
	case o.kind == FP:
		n[1]++
		if !o.other {
			e.confusion[[2]string{"", o.label}]++
		}
	case o.kind == FN:
		n[2]++
		if o.other {
			e.confusion[[2]string{o.label, o.mLabel}]++
		} else {
			e.confusion[[2]string{o.label, ""}]++
		}
	}
}

// splitByLabel groups a frame's boxes by label, keeping their order.
func splitByLabel(gs, ds []box) map[string]*[2][]box {
	out := map[string]*[2][]box{}
	for side, bs := range [2][]box{gs, ds} {
		for _, b := range bs {
			p := out[b.label]
			if p == nil {
				p = &[2][]box{}
				out[b.label] = p
			}
			p[side] = append(p[side], b)
		}
	}
	return out
}

// Background names the row and column of missed and spurious boxes in the
// confusion matrix; it is always last.
const Background = "background"

// Undefined is the value of a figure with nothing to measure (no human box
// of the label, or of any label in an area range), as pycocotools gives -1.
const Undefined = -1.0

// result computes the figures; params and key are the caller's.
func (e *evaluator) result() Metrics {
	labels := make([]string, 0, len(e.coco))
	for l := range e.coco {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	// Each label's curves sort its predicted boxes: seconds at millions of
	// boxes, so the labels are worked out side by side, one a core.
	curves := make([]*cocoCurves, len(labels))
	voc := make([]float64, len(labels))
	pos := e.tiePositions()
	vocAP := allPointAP
	if e.opt.voc07 {
		vocAP = elevenPointAP
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, l := range labels {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			curves[i] = e.coco[l].accumulate(pos)
			voc[i] = Undefined
			if v := e.voc[l]; v.npos > 0 {
				voc[i] = vocAP(v.curve(pos))
			}
		})
	}
	wg.Wait()
	m := Metrics{Labels: map[string]LabelResult{}, PR: map[string]Curve{}}
	all := summary{p: e.proto}
	for i, l := range labels {
		c := curves[i]
		all.add(c)
		lr := LabelResult{AP: Undefined, AP50: Undefined, VOCAP50: voc[i]}
		if c.valid[0] {
			lr.AP = meanOf(c.precision[0][:]...)
			lr.AP50 = meanOf(c.precision[0][0])
			m.PR[l] = Curve{Recall: recallPoints, Precision: append([]float64(nil), c.precision[0][0][:]...)}
		}
		if e.voc[l].npos > 0 {
			all.voc = append(all.voc, lr.VOCAP50)
		}
		n := e.counts[l]
		lr.TP, lr.FP, lr.FN = n[0], n[1], n[2]
		lr.Precision, lr.Recall, lr.F1 = prf(n[0], n[1], n[2])
		m.Labels[l] = lr
	}
	all.fill(&m)
	m.Confusion = e.confusionMatrix(labels)
	return m
}

// recallPoints are the recall thresholds as reported: i/100, where the
// thresholds compared against are numpy's linspace (0.35000000000000003).
var recallPoints = func() []float64 {
	out := make([]float64, nRec)
	for i := range out {
		out[i] = float64(i) / (nRec - 1)
	}
	return out
}()

// prf is precision, recall and F1 from counts; 0 where undefined.
func prf(tp, fp, fn int) (p, r, f1 float64) {
	if tp+fp > 0 {
		p = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		r = float64(tp) / float64(tp+fn)
	}
	if p+r > 0 {
		f1 = 2 * p * r / (p + r)
	}
	return p, r, f1
}

func (e *evaluator) confusionMatrix(labels []string) Confusion {
	names := append(append([]string(nil), labels...), Background)
	idx := map[string]int{"": len(labels)}
	for i, l := range labels {
		idx[l] = i
	}
	mat := make([][]int, len(names))
	for i := range mat {
		mat[i] = make([]int, len(names))
	}
	for k, n := range e.confusion {
		mat[idx[k[0]]][idx[k[1]]] += n
	}
	return Confusion{Labels: names, Matrix: mat}
}

// summary averages the labels' COCO curves the way COCOeval.summarize does:
// over every threshold, recall point and label with human boxes in range.
type summary struct {
	p    *protocol
	ap   [nArea][]float64 // per valid label: mean precision over thresholds and recall points
	ap50 []float64
	ap75 []float64
	ar   [maxMDs][]float64
	arA  [nArea][]float64 // per label with human boxes in the range: recall at the largest maxDets
	ar50 []float64        // recall at the largest maxDets at IoU (OKS) .5 and .75: keypoints' AR50, AR75
	ar75 []float64
	voc  []float64
}

func (s *summary) add(c *cocoCurves) {
	top := len(s.p.maxDets) - 1
	for a := range nArea {
		if c.valid[a] {
			s.ap[a] = append(s.ap[a], meanOf(c.precision[a][:]...))
			s.arA[a] = append(s.arA[a], mean(c.recall[a][top][:]))
		}
	}
	if !c.valid[0] {
		return
	}
	s.ap50 = append(s.ap50, meanOf(c.precision[0][0]))
	s.ap75 = append(s.ap75, meanOf(c.precision[0][5]))
	s.ar50 = append(s.ar50, c.recall[0][top][0])
	s.ar75 = append(s.ar75, c.recall[0][top][5])
	for mi := range s.p.maxDets {
		s.ar[mi] = append(s.ar[mi], mean(c.recall[0][mi][:]))
	}
}

// fill sets the figures of the protocol: bbox and segm's twelve, or
// keypoints' ten (AR20, AR50 and AR75 set; AR1, AR10, AR100 and the small
// range Undefined, as keypoints have no such maxDets or range).
func (s *summary) fill(m *Metrics) {
	m.MAP, m.MAPSmall, m.MAPMedium, m.MAPLarge = mean(s.ap[0]), mean(s.ap[1]), mean(s.ap[2]), mean(s.ap[3])
	m.AP50, m.AP75, m.VOCAP50 = mean(s.ap50), mean(s.ap75), mean(s.voc)
	m.ARSmall, m.ARMedium, m.ARLarge = mean(s.arA[1]), mean(s.arA[2]), mean(s.arA[3])
	if s.p == kpProtocol {
		m.AR1, m.AR10, m.AR100 = Undefined, Undefined, Undefined
		ar, ar50, ar75 := mean(s.ar[0]), mean(s.ar50), mean(s.ar75)
		m.AR20, m.AR50, m.AR75 = &ar, &ar50, &ar75
		return
	}
	m.AR1, m.AR10, m.AR100 = mean(s.ar[0]), mean(s.ar[1]), mean(s.ar[2])
}

// mean is Undefined for no values.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return Undefined
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func meanOf(rows ...[nRec]float64) float64 {
	sum := 0.0
	for _, r := range rows {
		for _, v := range r {
			sum += v
		}
	}
	return sum / float64(len(rows)*nRec)
}
