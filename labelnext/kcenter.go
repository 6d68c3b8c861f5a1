package labelnext

import (
	"context"
	"math"
	"sync"

	"github.com/framelake/framelake/vector"
)

// sqDist is the squared Euclidean distance of two rows of x: 2 - 2 dot
// between the unit rows of a cosine model.
func sqDist(x *vector.Matrix, a, b []float32) float32 {
	if x.Metric == vector.Cosine {
		return max(0, 2-2*dot(a, b))
	}
	return vector.SquaredDistance(a, b)
}

// centers is the state of one k-center greedy run, evaluated lazily (exact):
// every row keeps its squared distance to the nearest center it has been
// compared with (minSq) and how many of the chosen centers that covers
// (seen). As centers are only added, a stale minSq is an upper bound of the
// true one, so the rows wait in a max-heap by their stale score: the top
// row is brought up to date (compared with the centers added since), and
// once the top row is up to date it is the farthest row. A new center usually changes few rows' distances, so
// most rows are never compared with most centers; the answer is the plain
// greedy's, ties going to the lower row.
//
// A refresh also skips, without a dot product, a center that the triangle
// inequality rules out: with c the row's nearest center so far at distance
// m, a center p with d(c, p) >= 2m is at least m from the row. The distances
// between centers are kept for that (for budgets up to pruneBudget). On
// clustered vectors, where rows near a center are far from the others', this
// skips most comparisons.
type centers struct {
	x      *vector.Matrix
	weight []float64 // nil: 1 for every row
	minSq  []float32
	seen   []int32
	near   []int32 // the index in picked of the row's nearest center so far
	// cc[j] are the distances from center j to the centers picked after it,
	// in order, so a refresh reads its nearest center's list in sequence;
	// nil: no skipping.
	cc     [][]float32
	score  []float64 // of the row's minSq (sqrt, times its weight)
	heap   []int32   // rows not chosen, best score first
	batch  []int32   // scratch of next
	picked []int
}

// kCenter picks up to budget rows of x: first, then each time the row that
// maximises weight x distance to the rows chosen so far (weight nil: 1). It
// returns the rows in order with that score at their pick (0 for the first).
// progress is called after each pick, the first included.
func kCenter(ctx context.Context, x *vector.Matrix, budget, first int, weight []float64, workers int,
	progress func()) ([]int, []float64, error) {
	n := x.Len()
	if n == 0 || budget < 1 {
		return nil, nil, nil
	}
	c := &centers{x: x, weight: weight, minSq: make([]float32, n), seen: make([]int32, n), near: make([]int32, n),
		score: make([]float64, n), picked: []int{first}}
	if k := min(budget, n); k <= pruneBudget {
		c.cc = make([][]float32, 1, k)
	}
	workers = max(1, workers)
	c.firstPass(first, workers)
	c.heap = make([]int32, 0, n-1)
	for i := range n {
		if i != first {
			c.heap = append(c.heap, int32(i))
		}
	}
	for i := len(c.heap)/2 - 1; i >= 0; i-- {
		c.down(i)
	}
	scores := []float64{0}
	progress()
	for len(c.picked) < min(budget, n) {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		r := c.next(workers)
		c.add(r, workers)
		scores = append(scores, c.score[r])
		progress()
	}
	return c.picked, scores, nil
}

// firstPass measures every row against the first center.
func (c *centers) firstPass(first, workers int) {
	f := c.x.Row(first)
	parallel(c.x.Len(), workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c.minSq[i], c.seen[i] = sqDist(c.x, c.x.Row(i), f), 1
			c.rescore(i)
		}
	})
}

func (c *centers) rescore(i int) {
	c.score[i] = math.Sqrt(float64(c.minSq[i]))
	if c.weight != nil {
		c.score[i] *= c.weight[i]
	}
}

// refreshBatch is how many rows per worker next brings up to date at once.
const refreshBatch = 32

// next removes and returns the row farthest from the chosen centers. Stale
// rows at the top of the heap are brought up to date a batch at a time, the
// batch split over the workers; each row is read once and compared with
// every center added since it was last, which stay in cache.
func (c *centers) next(workers int) int {
	for {
		if top := c.heap[0]; c.fresh(top) { // nothing can rank above it
			c.pop()
			return int(top)
		}
		batch := c.batch[:0]
		for len(batch) < refreshBatch*workers && len(c.heap) > 0 && !c.fresh(c.heap[0]) {
			batch = append(batch, c.heap[0])
			c.pop()
		}
		c.batch = batch
		parallel(len(batch), workers, func(lo, hi int) {
			for _, r := range batch[lo:hi] {
				c.refresh(int(r))
			}
		})
		for _, r := range batch {
			c.push(r)
		}
	}
}

func (c *centers) fresh(r int32) bool { return int(c.seen[r]) == len(c.picked) }

// pruneBudget bounds the budgets whose center distances are kept: k(k-1)/2
// floats, 8 MB at 2,048.
const pruneBudget = 2048

// add makes row r a center, measuring it against the others when their
// distances are kept.
func (c *centers) add(r, workers int) {
	if c.cc != nil {
		row := c.x.Row(r)
		parallel(len(c.picked), workers, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				c.cc[j] = append(c.cc[j], float32(math.Sqrt(float64(sqDist(c.x, row, c.x.Row(c.picked[j]))))))
			}
		})
		c.cc = append(c.cc, nil)
	}
	c.picked = append(c.picked, r)
}

// refresh compares row r with the centers added since it last was.
func (c *centers) refresh(r int) {
	row := c.x.Row(r)
	m, near := c.minSq[r], int(c.near[r])
	lim := skipBeyond(m)
	for k := int(c.seen[r]); k < len(c.picked); k++ {
		if c.cc != nil && c.cc[near][k-near-1] > lim {
			continue
		}
		if d := sqDist(c.x, row, c.x.Row(c.picked[k])); d < m {
			m, near, lim = d, k, skipBeyond(d)
		}
	}
	c.minSq[r], c.near[r] = m, int32(near)
	c.seen[r] = int32(len(c.picked))
	c.rescore(r)
}

// skipBeyond is the distance from a row's nearest center (at squared
// distance m) past which another center cannot be nearer the row: 2 sqrt(m),
// with a margin above float32 rounding (a few 1e-3 of distance for 512-d
// dot products), so a skip never changes a pick.
func skipBeyond(m float32) float32 {
	return float32((2*math.Sqrt(float64(m)) + 0.03) * (1 + 1e-3))
}

// parallel runs fn over [0, n) split into one contiguous part per worker.
func parallel(n, workers int, fn func(lo, hi int)) {
	if workers <= 1 || n < 2 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(n*w/workers, n*(w+1)/workers)
		}()
	}
	wg.Wait()
}

// before orders the heap: higher score first, then the lower row.
func (c *centers) before(a, b int32) bool {
	sa, sb := c.score[a], c.score[b]
	return sa > sb || sa == sb && a < b
}

func (c *centers) pop() {
	last := len(c.heap) - 1
	c.heap[0] = c.heap[last]
	c.heap = c.heap[:last]
	if last > 0 {
		c.down(0)
	}
}

func (c *centers) push(r int32) {
	c.heap = append(c.heap, r)
	for i := len(c.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !c.before(c.heap[i], c.heap[p]) {
			return
		}
		c.heap[i], c.heap[p] = c.heap[p], c.heap[i]
		i = p
	}
}

func (c *centers) down(i int) {
	h := c.heap
	for {
		l, best := 2*i+1, i
		if l < len(h) && c.before(h[l], h[best]) {
			best = l
		}
		if r := l + 1; r < len(h) && c.before(h[r], h[best]) {
			best = r
		}
		if best == i {
			return
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
}
