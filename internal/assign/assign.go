// Package assign pairs rows with columns at the least total cost (the
// linear assignment problem), step for step as SciPy's
// linear_sum_assignment solves it, so pairs chosen between equal costs are
// the ones Python references (TrackEval, pycocotools' users) see.
package assign

import "math"

// Solve pairs rows with columns at the least total cost, every row of the
// shorter side matched: the shortest augmenting path method (Crouse 2016).
// cost is row-major rows×cols; it returns the matched (row, col) pairs in
// row order.
func Solve(cost []float64, rows, cols int) (rr, cc []int) {
	if rows == 0 || cols == 0 {
		return nil, nil
	}
	if cols < rows {
		t := make([]float64, len(cost))
		for i := range rows {
			for j := range cols {
				t[j*rows+i] = cost[i*cols+j]
			}
		}
		cr, rc := Solve(t, cols, rows)
		return sortedPairs(rc, cr, rows)
	}
	s := lsap{nc: cols, cost: cost,
		u: make([]float64, rows), v: make([]float64, cols), short: make([]float64, cols),
		path: make([]int, cols), col4row: make([]int, rows), row4col: make([]int, cols),
		sr: make([]bool, rows), sc: make([]bool, cols), remaining: make([]int, cols)}
	for i := range s.path {
		s.path[i], s.row4col[i] = -1, -1
	}
	for i := range s.col4row {
		s.col4row[i] = -1
	}
	for cur := range rows {
		sink, minVal := s.augment(cur)
		s.u[cur] += minVal
		for i := range rows {
			if s.sr[i] && i != cur {
				s.u[i] += minVal - s.short[s.col4row[i]]
			}
		}
		for j := range cols {
			if s.sc[j] {
				s.v[j] -= minVal - s.short[j]
			}
		}
		for j := sink; ; {
			i := s.path[j]
			s.row4col[j] = i
			s.col4row[i], j = j, s.col4row[i]
			if i == cur {
				break
			}
		}
	}
	rr = make([]int, rows)
	for i := range rr {
		rr[i] = i
	}
	return rr, s.col4row
}

// sortedPairs orders (row, col) pairs by row, as SciPy returns them.
func sortedPairs(rr, cc []int, rows int) ([]int, []int) {
	col := make([]int, rows)
	for i := range col {
		col[i] = -1
	}
	for k, r := range rr {
		col[r] = cc[k]
	}
	var outR, outC []int
	for r, c := range col {
		if c >= 0 {
			outR, outC = append(outR, r), append(outC, c)
		}
	}
	return outR, outC
}

type lsap struct {
	nc               int
	cost             []float64
	u, v, short      []float64
	path             []int
	col4row, row4col []int
	sr, sc           []bool
	remaining        []int
}

// augment finds the shortest augmenting path from row i to a free column.
// Costs here are finite, so a path always exists.
func (s *lsap) augment(i int) (sink int, minVal float64) {
	n := s.nc
	for it := range n {
		s.remaining[it] = n - it - 1
		s.sc[it] = false
		s.short[it] = math.Inf(1)
	}
	for k := range s.sr {
		s.sr[k] = false
	}
	sink = -1
	for sink == -1 {
		index, lowest := -1, math.Inf(1)
		s.sr[i] = true
		for it := range n {
			j := s.remaining[it]
			r := minVal + s.cost[i*s.nc+j] - s.u[i] - s.v[j]
			if r < s.short[j] {
				s.path[j] = i
				s.short[j] = r
			}
			if s.short[j] < lowest || (s.short[j] == lowest && s.row4col[j] == -1) {
				lowest, index = s.short[j], it
			}
		}
		minVal = lowest
		j := s.remaining[index]
		if s.row4col[j] == -1 {
			sink = j
		} else {
			i = s.row4col[j]
		}
		s.sc[j] = true
		n--
		s.remaining[index] = s.remaining[n]
	}
	return sink, minVal
}
