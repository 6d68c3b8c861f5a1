package tracking

import "github.com/framelake/framelake/internal/assign"

type identityCounts struct{ idtp, idfn, idfp int }

func (c *identityCounts) add(o identityCounts) {
	c.idtp += o.idtp
	c.idfn += o.idfn
	c.idfp += o.idfp
}

func (c identityCounts) final(r *Result) {
	r.IDTP, r.IDFN, r.IDFP = c.idtp, c.idfn, c.idfp
	tp := float64(c.idtp)
	r.IDR = tp / max(1, tp+float64(c.idfn))
	r.IDP = tp / max(1, tp+float64(c.idfp))
	r.IDF1 = tp / max(1, tp+0.5*float64(c.idfp)+0.5*float64(c.idfn))
	r.identity = c
}

// identityVideo is TrackEval's Identity.eval_sequence: the ids are paired
// once for the whole video, each ground truth and each tracker id also
// free to stay unpaired (the extra rows and columns), at the least IDFN+IDFP.
func identityVideo(v video) identityCounts {
	if v.trDets == 0 {
		return identityCounts{idfn: v.gtDets}
	}
	if v.gtDets == 0 {
		return identityCounts{idfp: v.trDets}
	}
	nG, nT := v.nGT, v.nTr
	together := make([]float64, nG*nT) // frames each pair matches in
	gtCount, trCount := make([]float64, nG), make([]float64, nT)
	for t, gt := range v.gt {
		for i, g := range gt {
			for j, d := range v.tr[t] {
				if v.sim[t][i][j] >= matchThreshold {
					together[g*nT+d]++
				}
			}
			gtCount[g]++
		}
		for _, d := range v.tr[t] {
			trCount[d]++
		}
	}
	n := nG + nT
	fn, fp := make([]float64, n*n), make([]float64, n*n)
	for r := nG; r < n; r++ {
		for c := range nT {
			fp[r*n+c] = 1e10
		}
	}
	for g := range nG {
		for c := nT; c < n; c++ {
			fn[g*n+c] = 1e10
		}
		for c := range nT {
			fn[g*n+c] = gtCount[g] - together[g*nT+c]
		}
		fn[g*n+nT+g] = gtCount[g]
	}
	for d := range nT {
		for g := range nG {
			fp[g*n+d] = trCount[d] - together[g*nT+d]
		}
		fp[(d+nG)*n+d] = trCount[d]
	}
	sum := make([]float64, n*n)
	for k := range sum {
		sum[k] = fn[k] + fp[k]
	}
	rows, cols := assign.Solve(sum, n, n)
	var idfn, idfp float64
	for k, r := range rows {
		idfn += fn[r*n+cols[k]]
		idfp += fp[r*n+cols[k]]
	}
	c := identityCounts{idfn: int(idfn), idfp: int(idfp)}
	c.idtp = v.gtDets - c.idfn
	return c
}
