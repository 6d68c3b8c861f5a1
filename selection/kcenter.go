package selection

import (
	"context"
	"math"
	"sync"

	"github.com/framelake/framelake/vector"
)

// sqDist is the squared Euclidean distance of rows i and j of x: 2 - 2 dot
// between the unit rows of a cosine model.
func sqDist(x *vector.Matrix, a, b []float32) float32 {
	if x.Metric == vector.Cosine {
		return max(0, 2-2*vector.Dot(a, b))
	}
	return vector.SquaredDistance(a, b)
}

// centers is the state of one k-center greedy run. Every row keeps its
// squared distance to the nearest chosen row (minSq) and which chosen row
// that is (nearest), so a new center needs one pass over the rows, split
// into one contiguous block per worker. A row whose nearest center a lies at
// least twice its distance from the new center c (|a-c| >= 2|x-a|) cannot
// come nearer to c than to a (triangle inequality), so its distance to c is
// not computed: exact, and most rows are skipped once a few centers spread
// out over clustered data.
type centers struct {
	x       *vector.Matrix
	weight  []float64 // nil: 1 for every row
	minSq   []float32
	nearest []int32 // index into picked; -1 before the first
	chosen  []bool
	picked  []int // rows chosen, in order
	workers int
}

// kCenter picks up to budget rows of x: first, then each time the row that
// maximises weight x distance to the rows chosen so far (weight nil: 1). It
// returns the rows in order with that score at their pick (0 for the first).
// Ties go to the lower row. progress is called after each pick.
func kCenter(ctx context.Context, x *vector.Matrix, budget, first int, weight []float64, workers int,
	progress func()) ([]int, []float64, error) {
	n := x.Len()
	if n == 0 || budget < 1 {
		return nil, nil, nil
	}
	c := &centers{x: x, weight: weight, minSq: make([]float32, n), nearest: make([]int32, n),
		chosen: make([]bool, n), workers: max(1, workers)}
	for i := range c.minSq {
		c.minSq[i], c.nearest[i] = float32(math.Inf(1)), -1
	}
	rows, scores := []int{first}, []float64{0}
	next := first
	for len(rows) < min(budget, n) {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		best, score := c.add(next)
		if best < 0 {
			break
		}
		rows, scores, next = append(rows, best), append(scores, score), best
		progress()
	}
	return rows, scores, nil
}

// add makes row r a center, updates every row's distance to the centers and
// returns the row to pick next with its score (-1 when none is left).
func (c *centers) add(r int) (int, float64) {
	c.chosen[r] = true
	c.picked = append(c.picked, r)
	k := int32(len(c.picked) - 1)
	cr := c.x.Row(r)
	// Squared distances from the new center to the earlier ones.
	cc := make([]float32, k)
	for j, p := range c.picked[:k] {
		cc[j] = sqDist(c.x, cr, c.x.Row(p))
	}
	n := c.x.Len()
	type best struct {
		row   int
		score float64
	}
	found := make([]best, c.workers)
	var wg sync.WaitGroup
	for w := range c.workers {
		lo, hi := n*w/c.workers, n*(w+1)/c.workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := best{row: -1, score: -1}
			for i := lo; i < hi; i++ {
				if c.chosen[i] {
					continue
				}
				m := c.minSq[i]
				// The margin keeps rounding in 2 - 2 dot from skipping a row at equality.
				if a := c.nearest[i]; a < 0 || cc[a] <= 4*m*(1+1e-4)+1e-6 {
					if d := sqDist(c.x, c.x.Row(i), cr); d < m {
						c.minSq[i], c.nearest[i], m = d, k, d
					}
				}
				s := math.Sqrt(float64(m))
				if c.weight != nil {
					s *= c.weight[i]
				}
				if s > b.score {
					b = best{i, s}
				}
			}
			found[w] = b
		}()
	}
	wg.Wait()
	out := best{row: -1, score: -1}
	for _, b := range found { // blocks in row order: the first of equal scores wins
		if b.score > out.score {
			out = b
		}
	}
	return out.row, out.score
}
