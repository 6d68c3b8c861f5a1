package evaluate

import (
	"cmp"
	"math"
	"slices"

	"github.com/framelake/framelake/lake/shape"
)

// box is one box of a frame as the metrics see it: pixels, top-left origin.
type box struct {
	seq   int64 // the annotation's key
	label string
	x, y  float64
	w, h  float64
	score float64 // predicted boxes; a box stored without one ranks as 1
	crowd bool    // human boxes marked iscrowd (COCO imports)
	// cocoArea is the area the area ranges read when it is set: COCO's area
	// of the annotation, as pycocotools reads it (area_source "annotation"),
	// or the mask's when masks are compared.
	cocoArea float64
	mask     *shape.Prepared // set when masks are compared (iou_type segm)
	// areaSet says cocoArea is the area even when 0 (a prediction's
	// keypoints on one line: pycocotools' area 0).
	areaSet bool
	// kp are the points when keypoints are compared; noPoints marks a
	// truth with no labelled point, ignored as pycocotools ignores it.
	kp       *kpShape
	noPoints bool
	typ      shape.Type // the annotation's shape and geometry (keypoints parse it)
	geom     string
}

func (b box) area() float64 { return b.w * b.h }

// rangeArea is the area that places the box in an area range.
func (b box) rangeArea() float64 {
	if b.cocoArea > 0 || b.areaSet {
		return b.cocoArea
	}
	return b.area()
}

// iou is the overlap of a predicted box d with a human box g: intersection
// over union, or over d's own area when g is a crowd region (COCO's rule).
// Coordinates are continuous, as in pycocotools (no +1 pixel convention).
func iou(d, g box) float64 {
	iw := math.Min(d.x+d.w, g.x+g.w) - math.Max(d.x, g.x)
	ih := math.Min(d.y+d.h, g.y+g.h) - math.Max(d.y, g.y)
	if iw <= 0 || ih <= 0 {
		return 0
	}
	inter := iw * ih
	union := d.area() + g.area() - inter
	if g.crowd {
		union = d.area()
	}
	if union <= 0 {
		return 0
	}
	return inter / union
}

// Kind is a box's outcome at the evaluation's IoU.
type Kind uint8

const (
	TP      Kind = iota // a predicted box matched to a human box of its label, or that human box
	FP                  // a predicted box matched to no human box of its label
	FN                  // a human box no predicted box of its label matched
	Ignored             // a crowd human box, and predicted boxes matched only to one
)

var kindNames = [...]string{"tp", "fp", "fn", "ignored"}

func (k Kind) String() string { return kindNames[k] }

// outcome is what became of one box. For a TP, match is the box of the same
// label it was paired with; for an FP or FN, a match (other is set) is a box
// of another label it overlaps at the evaluation's IoU: a label mismatch.
type outcome struct {
	seq    int64
	human  bool
	kind   Kind
	match  int64 // 0: none
	iou    float64
	other  bool // match has another label
	label  string
	mLabel string // the matched box's label
}

// byScore orders predicted boxes by score, highest first, keeping their
// order on ties (pycocotools sorts with a stable mergesort).
func byScore(ds []box) {
	slices.SortStableFunc(ds, func(a, b box) int { return cmp.Compare(b.score, a.score) })
}

// overlap is d's IoU with g: their OKS when keypoints are compared, of
// their masks when both have one (pycocotools' rleIou), else of their boxes.
func overlap(d, g box) float64 {
	if d.kp != nil || g.kp != nil {
		return oks(d, g)
	}
	if d.mask != nil && g.mask != nil {
		return d.mask.IoU(g.mask, g.crowd)
	}
	return iou(d, g)
}

// ious is the IoU of every predicted box (rows) with every human box.
func ious(gs, ds []box) []float64 {
	m := make([]float64, len(ds)*len(gs))
	for j, d := range ds {
		for i, g := range gs {
			m[j*len(gs)+i] = overlap(d, g)
		}
	}
	return m
}

// take is pycocotools' matching of one predicted box: over the candidate
// human boxes in order (ignored ones last), the one with the highest IoU >=
// thr that is not taken (a crowd box may be taken again); once a regular box
// matched, ignored ones are not looked at. Ties go to the later box, as
// there. It returns -1 when none matches.
func take(row []float64, order []int, taken, ignore []bool, crowd func(int) bool, thr float64) (int, float64) {
	m, best := -1, math.Min(thr, 1-1e-10)
	for _, g := range order {
		if taken[g] && !crowd(g) {
			continue
		}
		if m > -1 && !ignore[m] && ignore[g] {
			break
		}
		if row[g] < best {
			continue
		}
		m, best = g, row[g]
	}
	return m, best
}

// matchFrame pairs the boxes of one frame at threshold thr by COCO's rule:
// predicted boxes in score order (ds must be sorted byScore) each take the
// untaken human box of their label with the highest IoU >= thr; a crowd box
// may take any number and leaves them ignored. Then predicted boxes still
// unmatched take, in the same order, the unmatched human box of another
// label with the highest IoU >= thr: those pairs are label mismatches, which
// the confusion matrix counts off its diagonal.
func matchFrame(gs, ds []box, thr float64) []outcome {
	out := make([]outcome, len(gs)+len(ds))
	taken, ignore := make([]bool, len(gs)), make([]bool, len(gs))
	order := make([]int, 0, len(gs))
	for i, g := range gs {
		out[i] = outcome{seq: g.seq, human: true, kind: FN, label: g.label}
		ignore[i] = g.crowd || g.noPoints
		if ignore[i] {
			out[i].kind = Ignored
		} else {
			order = append(order, i)
		}
	}
	for i := range gs {
		if ignore[i] {
			order = append(order, i)
		}
	}
	crowd := func(i int) bool { return gs[i].crowd }
	m := ious(gs, ds)
	byLabel := make([]int, 0, len(order))
	for j, d := range ds {
		o := &out[len(gs)+j]
		*o = outcome{seq: d.seq, kind: FP, label: d.label}
		byLabel = byLabel[:0]
		for _, i := range order {
			if gs[i].label == d.label {
				byLabel = append(byLabel, i)
			}
		}
		g, v := take(m[j*len(gs):(j+1)*len(gs)], byLabel, taken, ignore, crowd, thr)
		if g < 0 {
			continue
		}
		taken[g] = true
		o.match, o.iou, o.mLabel = gs[g].seq, v, gs[g].label
		if ignore[g] {
			o.kind = Ignored
			continue
		}
		o.kind = TP
		out[g] = outcome{seq: gs[g].seq, human: true, kind: TP, match: d.seq, iou: v, label: gs[g].label, mLabel: d.label}
	}
	crossMatch(gs, ds, m, out, thr)
	return out
}

// crossMatch pairs the leftover predicted boxes with leftover human boxes of
// other labels (label mismatches), greedily in score order.
func crossMatch(gs, ds []box, m []float64, out []outcome, thr float64) {
	for j, d := range ds {
		o := &out[len(gs)+j]
		if o.kind != FP {
			continue
		}
		best, bestIoU := -1, math.Min(thr, 1-1e-10)
		for i, g := range gs {
			if out[i].kind != FN || out[i].match != 0 || g.label == d.label {
				continue
			}
			if v := m[j*len(gs)+i]; v >= bestIoU {
				best, bestIoU = i, v
			}
		}
		if best < 0 {
			continue
		}
		g := &out[best]
		o.match, o.iou, o.other, o.mLabel = gs[best].seq, bestIoU, true, gs[best].label
		g.match, g.iou, g.other, g.mLabel = d.seq, bestIoU, true, d.label
	}
}
