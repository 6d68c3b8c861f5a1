package evaluate

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// The COCO protocol as pycocotools' COCOeval defines it.
const (
	nThr   = 10  // IoU (or OKS) thresholds .50:.05:.95
	nRec   = 101 // recall thresholds 0:.01:1
	nArea  = 4   // all, small, medium, large
	maxMDs = 3   // the most maxDets a protocol has
)

// Area ranges of human boxes in pixels² (all, small < 32², medium, large > 96²).
var areaRng = [nArea][2]float64{{0, 1e10}, {0, 32 * 32}, {32 * 32, 96 * 96}, {96 * 96, 1e10}}

// protocol is what differs between pycocotools' iou types: the maxDets
// (ascending; the last caps each frame's predictions and is the one
// precision is read at) and which area ranges are evaluated. bbox and segm
// have maxDets 1, 10, 100 and all four ranges; keypoints maxDets 20 and the
// ranges all, medium and large (Params.setKpParams).
type protocol struct {
	maxDets []int
	areas   [nArea]bool
}

var (
	boxProtocol = &protocol{maxDets: []int{1, 10, 100}, areas: [nArea]bool{true, true, true, true}}
	kpProtocol  = &protocol{maxDets: []int{20}, areas: [nArea]bool{true, false, true, true}}
)

// maxDet is the per-frame cap on predictions.
func (p *protocol) maxDet() int { return p.maxDets[len(p.maxDets)-1] }

// iouThrs and recThrs are numpy's linspace(.5, .95, 10) and linspace(0, 1, 101),
// computed as numpy does so thresholds compare as they do there.
var iouThrs, recThrs = linspace(.5, .95, nThr), linspace(0, 1, nRec)

func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	step := (b - a) / float64(n-1)
	for i := range out {
		out[i] = float64(i)*step + a
	}
	out[n-1] = b
	return out
}

// cocoLabel gathers, for one label over all frames, what COCOeval.accumulate
// reads: every predicted box kept (at most maxDets per frame, best first)
// with its score, its rank in its frame, and per (area range, threshold) bit
// a*nThr+t whether it is a true positive or ignored (neither: a false
// positive); and the count of human boxes not ignored per area range.
type cocoLabel struct {
	p     *protocol
	score []float64
	frame []int32 // the evaluator's frame index, for the tie order
	rank  []uint8
	tp    []uint64
	ig    []uint64
	npig  [nArea]int
}

// addFrame evaluates one frame's boxes of this label (ds sorted byScore)
// the way COCOeval.evaluateImg does, for every area range and threshold.
func (c *cocoLabel) addFrame(gs, ds []box, frame int32) {
	if len(ds) > c.p.maxDet() {
		ds = ds[:c.p.maxDet()]
	}
	m := ious(gs, ds)
	crowd := func(i int) bool { return gs[i].crowd }
	ignore, taken := make([]bool, len(gs)), make([]bool, len(gs))
	order := make([]int, 0, len(gs))
	tp, ig := make([]uint64, len(ds)), make([]uint64, len(ds))
	for a, rng := range areaRng {
		if !c.p.areas[a] {
			continue
		}
		order = order[:0]
		for i, g := range gs {
			ignore[i] = g.crowd || g.noPoints || g.rangeArea() < rng[0] || g.rangeArea() > rng[1]
			if !ignore[i] {
				order = append(order, i)
				c.npig[a]++
			}
		}
		for i := range gs {
			if ignore[i] {
				order = append(order, i)
			}
		}
		for t, thr := range iouThrs {
			clear(taken)
			bit := uint64(1) << (a*nThr + t)
			for j, d := range ds {
				g, _ := take(m[j*len(gs):(j+1)*len(gs)], order, taken, ignore, crowd, thr)
				switch {
				case g >= 0:
					taken[g] = true
					if ignore[g] {
						ig[j] |= bit
					} else {
						tp[j] |= bit
					}
				case d.rangeArea() < rng[0] || d.rangeArea() > rng[1]:
					ig[j] |= bit // unmatched and outside the range: not counted
				}
			}
		}
	}
	for j, d := range ds {
		c.score = append(c.score, d.score)
		c.frame = append(c.frame, frame)
		c.rank = append(c.rank, uint8(j))
		c.tp = append(c.tp, tp[j])
		c.ig = append(c.ig, ig[j])
	}
}

// cocoCurves is COCOeval.accumulate for one label: interpolated precision
// per area range and threshold at 101 recall points (at the protocol's
// largest maxDets), and recall per area range, maxDets and threshold. A range without human boxes
// has valid false, as pycocotools leaves -1 there.
type cocoCurves struct {
	valid     [nArea]bool
	precision [nArea][nThr][nRec]float64
	recall    [nArea][maxMDs][nThr]float64
}

func (c *cocoLabel) accumulate(pos []int32) *cocoCurves {
	order := make([]int32, len(c.score))
	for i := range order {
		order[i] = int32(i)
	}
	// Ties go by the frames' place in the tie order, then by rank in the
	// frame: numpy's mergesort over the frames' boxes concatenated in that
	// order, each frame's best first, as pycocotools sorts them.
	slices.SortFunc(order, func(i, j int32) int {
		return cmp.Or(cmp.Compare(c.score[j], c.score[i]), cmp.Compare(pos[c.frame[i]], pos[c.frame[j]]),
			cmp.Compare(c.rank[i], c.rank[j]))
	})
	// Read in that order from here on, sequentially.
	rank, tp, ig := make([]uint8, len(order)), make([]uint64, len(order)), make([]uint64, len(order))
	for i, k := range order {
		rank[i], tp[i], ig[i] = c.rank[k], c.tp[k], c.ig[k]
	}
	out := &cocoCurves{}
	var tpc, fpc []float64
	for a := range nArea {
		if c.npig[a] == 0 {
			continue
		}
		out.valid[a] = true
		for mi, md := range c.p.maxDets {
			for t := range nThr {
				bit := uint64(1) << (a*nThr + t)
				tpc, fpc = tpc[:0], fpc[:0]
				var tps, fps float64
				for k := range rank {
					if int(rank[k]) >= md || ig[k]&bit != 0 {
						continue
					}
					if tp[k]&bit != 0 {
						tps++
					} else {
						fps++
					}
					tpc, fpc = append(tpc, tps), append(fpc, fps)
				}
				npig := float64(c.npig[a])
				if len(tpc) > 0 {
					out.recall[a][mi][t] = tpc[len(tpc)-1] / npig
				}
				if md == c.p.maxDet() {
					interpolate(tpc, fpc, npig, &out.precision[a][t])
				}
			}
		}
	}
	return out
}

// eps is numpy's spacing(1), which pycocotools adds to precision's denominator.
var eps = math.Nextafter(1, 2) - 1

// interpolate fills q with precision made monotone from the right, read at
// each recall threshold at the first point reaching it (searchsorted left);
// thresholds past the last recall stay 0.
func interpolate(tpc, fpc []float64, npig float64, q *[nRec]float64) {
	nd := len(tpc)
	rc, pr := make([]float64, nd), make([]float64, nd)
	for i := range nd {
		rc[i] = tpc[i] / npig
		pr[i] = tpc[i] / (fpc[i] + tpc[i] + eps)
	}
	for i := nd - 1; i > 0; i-- {
		if pr[i] > pr[i-1] {
			pr[i-1] = pr[i]
		}
	}
	for r, thr := range recThrs {
		i := sort.SearchFloat64s(rc, thr)
		if i >= nd {
			break
		}
		q[r] = pr[i]
	}
}
