package tracking

import "github.com/framelake/framelake/internal/assign"

// eps is numpy's float64 epsilon, which TrackEval's comparisons allow for.
const eps = 2.220446049250313e-16

// matchThreshold is the similarity at which CLEAR and identity count a match.
const matchThreshold = 0.5

type clearCounts struct {
	tp, fn, fp, idsw, frag, mt, pt, ml, gtTracks int
	motpSum                                      float64
}

func (c *clearCounts) add(o clearCounts) {
	c.tp += o.tp
	c.fn += o.fn
	c.fp += o.fp
	c.idsw += o.idsw
	c.frag += o.frag
	c.mt += o.mt
	c.pt += o.pt
	c.ml += o.ml
	c.gtTracks += o.gtTracks
	c.motpSum += o.motpSum
}

func (c clearCounts) final(r *Result) {
	r.TP, r.FN, r.FP, r.IDSW, r.Frag = c.tp, c.fn, c.fp, c.idsw, c.frag
	r.MT, r.PT, r.ML, r.GTTracks = c.mt, c.pt, c.ml, c.gtTracks
	r.GTDets = c.tp + c.fn
	r.MOTA = float64(c.tp-c.fp-c.idsw) / float64(max(1, c.tp+c.fn))
	r.MOTP = c.motpSum / float64(max(1, c.tp))
	r.clear = c
}

// clearVideo is TrackEval's CLEAR.eval_sequence.
func clearVideo(v video) clearCounts {
	c := clearCounts{gtTracks: v.nGT}
	if v.trDets == 0 {
		c.fn, c.ml = v.gtDets, v.nGT
		return c
	}
	if v.gtDets == 0 {
		c.fp = v.trDets
		return c
	}
	seen := make([]int, v.nGT)    // frames each ground truth is in
	matched := make([]int, v.nGT) // frames it is matched in
	starts := make([]int, v.nGT)  // times its matching began
	last := filled(v.nGT)         // the tracker id it was last matched to
	prev := filled(v.nGT)         // the tracker id it was matched to in the previous frame
	for t, gt := range v.gt {
		tr, sim := v.tr[t], v.sim[t]
		if len(gt) == 0 {
			c.fp += len(tr)
			continue
		}
		if len(tr) == 0 {
			c.fn += len(gt)
			for _, g := range gt {
				seen[g]++
			}
			continue
		}
		score := make([]float64, len(gt)*len(tr))
		for i, g := range gt {
			for j, d := range tr {
				s := sim[i][j]
				if prev[g] == d {
					s += 1000
				}
				if sim[i][j] < matchThreshold-eps {
					s = 0
				}
				score[i*len(tr)+j] = -s
			}
		}
		rows, cols := assign.Solve(score, len(gt), len(tr))
		wasTracked := make([]bool, v.nGT)
		for g := range prev {
			wasTracked[g] = prev[g] >= 0
			prev[g] = -1
		}
		n, frameSim := 0, 0.0
		for k, i := range rows {
			j := cols[k]
			if -score[i*len(tr)+j] <= eps {
				continue
			}
			g, d := gt[i], tr[j]
			if last[g] >= 0 && last[g] != d {
				c.idsw++
			}
			matched[g]++
			last[g], prev[g] = d, d
			frameSim += sim[i][j]
			n++
		}
		for _, g := range gt {
			seen[g]++
		}
		for g := range prev {
			if !wasTracked[g] && prev[g] >= 0 {
				starts[g]++
			}
		}
		c.motpSum += frameSim // a frame's sum, then the total, as TrackEval adds
		c.tp += n
		c.fn += len(gt) - n
		c.fp += len(tr) - n
	}
	for g := range v.nGT {
		if starts[g] > 0 {
			c.frag += starts[g] - 1
		}
		if seen[g] == 0 {
			continue
		}
		switch ratio := float64(matched[g]) / float64(seen[g]); {
		case ratio > 0.8:
			c.mt++
		case ratio >= 0.2:
			c.pt++
		}
	}
	c.ml = v.nGT - c.mt - c.pt
	return c
}

// filled is n ids of "none" (-1).
func filled(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = -1
	}
	return s
}
