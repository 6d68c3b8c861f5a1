package evaluate

import (
	"cmp"
	"slices"
)

// vocThr is the IoU of Pascal VOC's AP.
const vocThr = 0.5

// vocLabel gathers one label's predicted boxes over all frames as the VOC
// devkit scores them: each box in score order goes to the human box it
// overlaps most; at IoU >= the threshold it is a true positive if that box
// is still free, a false positive if it was taken, ignored if it is a crowd
// box (VOC's "difficult"); below the threshold a false positive.
type vocLabel struct {
	score []float64
	frame []int32 // the evaluator's frame index and the box's rank in it, for the tie order
	rank  []int32
	state []int8 // 1 tp, 0 fp, -1 ignored
	npos  int    // human boxes that are not crowd
}

func (v *vocLabel) addFrame(gs, ds []box, thr float64, frame int32) {
	taken := make([]bool, len(gs))
	for _, g := range gs {
		if !g.crowd && !g.noPoints {
			v.npos++
		}
	}
	for j, d := range ds {
		best, bestIoU := -1, -1.0
		for i, g := range gs {
			g.crowd = false // plain IoU, as for VOC's difficult boxes
			if o := overlap(d, g); o > bestIoU {
				best, bestIoU = i, o
			}
		}
		var st int8
		switch {
		case best < 0 || bestIoU < thr:
		case gs[best].crowd || gs[best].noPoints:
			st = -1
		case !taken[best]:
			taken[best], st = true, 1
		}
		v.score = append(v.score, d.score)
		v.frame, v.rank = append(v.frame, frame), append(v.rank, int32(j))
		v.state = append(v.state, st)
	}
}

// curve is the precision and recall after each predicted box, in score order
// (ties in the evaluation's tie order of frames, then rank in the frame).
func (v *vocLabel) curve(pos []int32) (rec, prec []float64) {
	order := make([]int32, len(v.score))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		return cmp.Or(cmp.Compare(v.score[j], v.score[i]), cmp.Compare(pos[v.frame[i]], pos[v.frame[j]]),
			cmp.Compare(v.rank[i], v.rank[j]))
	})
	var tp, fp float64
	for _, k := range order {
		switch v.state[k] {
		case 1:
			tp++
		case 0:
			fp++
		default:
			continue
		}
		rec = append(rec, tp/float64(v.npos))
		prec = append(prec, tp/(tp+fp))
	}
	return rec, prec
}

// allPointAP is the area under the precision-recall curve with precision
// made monotone from the right (VOC 2010 onward).
func allPointAP(rec, prec []float64) float64 {
	mrec := append(append([]float64{0}, rec...), 1)
	mpre := append(append([]float64{0}, prec...), 0)
	for i := len(mpre) - 1; i > 0; i-- {
		mpre[i-1] = max(mpre[i-1], mpre[i])
	}
	ap := 0.0
	for i := 1; i < len(mrec); i++ {
		if mrec[i] != mrec[i-1] {
			ap += (mrec[i] - mrec[i-1]) * mpre[i]
		}
	}
	return ap
}

// elevenPointAP is VOC 2007's: the mean, over recall 0, 0.1, ..., 1, of the
// highest precision at a recall at least that.
func elevenPointAP(rec, prec []float64) float64 {
	sum := 0.0
	for r := range 11 {
		p := 0.0
		for i := range rec {
			if rec[i] >= float64(r)/10 {
				p = max(p, prec[i])
			}
		}
		sum += p
	}
	return sum / 11
}
