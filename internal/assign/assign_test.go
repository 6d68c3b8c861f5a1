package assign

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Solve must reach the least cost brute force finds, on square and
// rectangular matrices, with ties (small integer costs).
func TestAssignIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 400 {
		rows, cols := 1+rng.IntN(5), 1+rng.IntN(5)
		cost := make([]float64, rows*cols)
		for k := range cost {
			if n%2 == 0 {
				cost[k] = float64(rng.IntN(4))
			} else {
				cost[k] = rng.Float64()
			}
		}
		rr, cc := Solve(cost, rows, cols)
		if len(rr) != min(rows, cols) {
			t.Fatalf("%dx%d: %d pairs", rows, cols, len(rr))
		}
		got, usedC := 0.0, map[int]bool{}
		for k := range rr {
			if k > 0 && rr[k] <= rr[k-1] || usedC[cc[k]] {
				t.Fatalf("%dx%d: pairs %v %v not one per row/column in row order", rows, cols, rr, cc)
			}
			usedC[cc[k]] = true
			got += cost[rr[k]*cols+cc[k]]
		}
		if best := bruteForce(cost, rows, cols); !near(got, best) {
			t.Fatalf("%dx%d %v: cost %v, brute force %v", rows, cols, cost, got, best)
		}
	}
}

func bruteForce(cost []float64, rows, cols int) float64 {
	best := math.Inf(1)
	used := make([]bool, max(rows, cols))
	var walk func(i int, sum float64)
	if rows <= cols {
		walk = func(i int, sum float64) {
			if i == rows {
				best = min(best, sum)
				return
			}
			for j := range cols {
				if !used[j] {
					used[j] = true
					walk(i+1, sum+cost[i*cols+j])
					used[j] = false
				}
			}
		}
	} else {
		walk = func(j int, sum float64) {
			if j == cols {
				best = min(best, sum)
				return
			}
			for i := range rows {
				if !used[i] {
					used[i] = true
					walk(j+1, sum+cost[i*cols+j])
					used[i] = false
				}
			}
		}
	}
	walk(0, 0)
	return best
}
