package tracking

import (
	"math"

	"github.com/framelake/framelake/internal/assign"
)

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

// final is TrackEval's combination and _compute_final_fields; each figure
// is the mean over α, summed as numpy sums.
func (c hotaCounts) final(r *Result) {
	n := len(Alphas)
	hota, detA, assA, detRe, detPr, assRe, assPr, locA :=
		make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n),
		make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for a := range Alphas {
		tp, fn, fp := float64(c.tp[a]), float64(c.fn[a]), float64(c.fp[a])
		assA[a] = c.assA[a] / max(1, tp)
		detA[a] = tp / max(1, tp+fn+fp)
		hota[a] = math.Sqrt(detA[a] * assA[a])
		detRe[a] = tp / max(1, tp+fn)
		detPr[a] = tp / max(1, tp+fp)
		assRe[a] = c.assRe[a] / max(1, tp)
		assPr[a] = c.assPr[a] / max(1, tp)
		locA[a] = max(1e-10, c.locA[a]) / max(1e-10, tp)
	}
	r.HOTAByAlpha = hota
	r.HOTA, r.DetA, r.AssA, r.DetRe, r.DetPr = mean(hota), mean(detA), mean(assA), mean(detRe), mean(detPr)
	r.AssRe, r.AssPr, r.LocA = mean(assRe), mean(assPr), mean(locA)
	r.hota = c
}

// mean is numpy's mean: its pairwise sum over the count.
func mean(v []float64) float64 { return pairwiseSum(v) / float64(len(v)) }

// pairwiseSum adds as numpy's add.reduce adds a contiguous array: under 8
// values one by one; up to 128 in eight running sums combined in pairs, then
// the rest; more, the two halves (cut at a multiple of 8) apart. Summing as
// TrackEval's numpy does keeps the figures equal to the last bit.
func pairwiseSum(v []float64) float64 {
	n := len(v)
	switch {
	case n < 8:
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s
	case n <= 128:
		var r [8]float64
		copy(r[:], v[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for k := range r {
				r[k] += v[i+k]
			}
		}
		s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			s += v[i]
		}
		return s
	}
	h := n / 2
	h -= h % 8
	return pairwiseSum(v[:h]) + pairwiseSum(v[h:])
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
		rows, cols := assign.Solve(score, len(gt), len(tr))
		for a, alpha := range Alphas {
			n, frameLoc := 0, 0.0
			for k, i := range rows {
				j := cols[k]
				if sim[i][j] >= alpha-eps {
					n++
					frameLoc += sim[i][j]
					matches[a][gt[i]*nT+tr[j]]++
				}
			}
			locSum[a] += frameLoc
			c.tp[a] += n
			c.fn[a] += len(gt) - n
			c.fp[a] += len(tr) - n
		}
	}
	terms := make([][]float64, 3) // each pair's share of AssA, AssRe, AssPr, row-major as numpy holds them
	for k := range terms {
		terms[k] = make([]float64, v.nGT*nT)
	}
	for a := range Alphas {
		for g := range v.nGT {
			for d := range nT {
				m := matches[a][g*nT+d]
				terms[0][g*nT+d] = m * (m / max(1, gtCount[g]+trCount[d]-m))
				terms[1][g*nT+d] = m * (m / max(1, gtCount[g]))
				terms[2][g*nT+d] = m * (m / max(1, trCount[d]))
			}
		}
		assA, assRe, assPr := pairwiseSum(terms[0]), pairwiseSum(terms[1]), pairwiseSum(terms[2])
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
