package tracking

import "math"

// hotaCounts holds, at each α, the detection counts and the TP-weighted sums
// that combine across videos (TrackEval's combine_sequences).
type hotaCounts struct {
	tp, fn, fp         []int
	assA, assRe, assPr []float64 // per video: AssA·TP, summed
	locA               []float64 // per video: LocA·TP, summed
}

func newHotaCounts() hotaCounts {
	n := len(Alphas)
	return hotaCounts{tp: make([]int, n), fn: make([]int, n), fp: make([]int, n),
		assA: make([]float64, n), assRe: make([]float64, n), assPr: make([]float64, n), locA: make([]float64, n)}
}

func (c *hotaCounts) add(o hotaCounts) {
	for a := range Alphas {
		c.tp[a] += o.tp[a]
		c.fn[a] += o.fn[a]
		c.fp[a] += o.fp[a]
		c.assA[a] += o.assA[a]
		c.assRe[a] += o.assRe[a]
		c.assPr[a] += o.assPr[a]
		c.locA[a] += o.locA[a]
	}
}

// final is TrackEval's combination and _compute_final_fields, averaged over α.
func (c hotaCounts) final(r *Result) {
	n := float64(len(Alphas))
	r.HOTAByAlpha = make([]float64, len(Alphas))
	r.HOTA, r.DetA, r.AssA, r.DetRe, r.DetPr, r.AssRe, r.AssPr, r.LocA = 0, 0, 0, 0, 0, 0, 0, 0
	for a := range Alphas {
		tp, fn, fp := float64(c.tp[a]), float64(c.fn[a]), float64(c.fp[a])
		assA := c.assA[a] / max(1, tp)
		detA := tp / max(1, tp+fn+fp)
		h := math.Sqrt(detA * assA)
		r.HOTAByAlpha[a] = h
		r.HOTA += h / n
		r.DetA += detA / n
		r.AssA += assA / n
		r.DetRe += tp / max(1, tp+fn) / n
		r.DetPr += tp / max(1, tp+fp) / n
		r.AssRe += c.assRe[a] / max(1, tp) / n
		r.AssPr += c.assPr[a] / max(1, tp) / n
		r.LocA += max(1e-10, c.locA[a]) / max(1e-10, tp) / n
	}
	r.hota = c
}

// hotaVideo is TrackEval's HOTA.eval_sequence, returning TP-weighted sums.
func hotaVideo(v video) hotaCounts {
	c := newHotaCounts()
	if v.trDets == 0 || v.gtDets == 0 {
		for a := range Alphas {
			c.fn[a], c.fp[a] = v.gtDets, v.trDets
		}
		return c
	}
	align, gtCount, trCount := alignment(v)
	nT := v.nTr
	matches := make([][]float64, len(Alphas)) // per α: frames each (gt, tracker) pair matches in
	for a := range matches {
		matches[a] = make([]float64, v.nGT*nT)
	}
	locSum := make([]float64, len(Alphas))
	for t, gt := range v.gt {
		tr, sim := v.tr[t], v.sim[t]
		if len(gt) == 0 || len(tr) == 0 {
			for a := range Alphas {
				c.fp[a] += len(tr)
				c.fn[a] += len(gt)
			}
			continue
		}
		score := make([]float64, len(gt)*len(tr))
		for i, g := range gt {
			for j, d := range tr {
				score[i*len(tr)+j] = -align[g*nT+d] * sim[i][j]
			}
		}
		rows, cols := assign(score, len(gt), len(tr))
		for a, alpha := range Alphas {
			n := 0
			for k, i := range rows {
				j := cols[k]
				if sim[i][j] >= alpha-eps {
					n++
					locSum[a] += sim[i][j]
					matches[a][gt[i]*nT+tr[j]]++
				}
			}
			c.tp[a] += n
			c.fn[a] += len(gt) - n
			c.fp[a] += len(tr) - n
		}
	}
	for a := range Alphas {
		var assA, assRe, assPr float64
		for g := range v.nGT {
			for d := range nT {
				m := matches[a][g*nT+d]
				if m == 0 {
					continue
				}
				assA += m * m / max(1, gtCount[g]+trCount[d]-m)
				assRe += m * m / max(1, gtCount[g])
				assPr += m * m / max(1, trCount[d])
			}
		}
		tp := float64(c.tp[a])
		// A video's AssA is its sum over max(1, TP); weighting by TP to combine
		// gives the sum back when TP ≥ 1 (and 0 when not), as TrackEval does.
		c.assA[a] = assA / max(1, tp) * tp
		c.assRe[a] = assRe / max(1, tp) * tp
		c.assPr[a] = assPr / max(1, tp) * tp
		c.locA[a] = max(1e-10, locSum[a]) / max(1e-10, tp) * tp
	}
	return c
}

// alignment is HOTA's global alignment score of every (gt, tracker) pair,
// from each frame's similarities normalised as a soft IoU of the pair's
// rows and columns, and the number of frames each id is in.
func alignment(v video) (align, gtCount, trCount []float64) {
	nT := v.nTr
	potential := make([]float64, v.nGT*nT)
	gtCount, trCount = make([]float64, v.nGT), make([]float64, nT)
	for t, gt := range v.gt {
		tr, sim := v.tr[t], v.sim[t]
		rowSum, colSum := make([]float64, len(gt)), make([]float64, len(tr))
		for i := range gt {
			for j := range tr {
				rowSum[i] += sim[i][j]
				colSum[j] += sim[i][j]
			}
		}
		for i, g := range gt {
			for j, d := range tr {
				if den := rowSum[i] + colSum[j] - sim[i][j]; den > eps {
					potential[g*nT+d] += sim[i][j] / den
				}
			}
			gtCount[g]++
		}
		for _, d := range tr {
			trCount[d]++
		}
	}
	align = make([]float64, len(potential))
	for g := range v.nGT {
		for d := range nT {
			p := potential[g*nT+d]
			align[g*nT+d] = p / (gtCount[g] + trCount[d] - p)
		}
	}
	return align, gtCount, trCount
}
