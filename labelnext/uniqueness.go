package labelnext

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/framelake/framelake/vector"
)

// queryBlock is how many rows one pass over the matrix serves: each row read
// from memory is compared with the whole block while it is in cache, so the
// all-pairs scan is bound by arithmetic rather than memory bandwidth.
const queryBlock = 16

// uniquenessScores returns, for every row of x, the mean distance (cosine
// distance for cosine models, Euclidean for l2) to its k nearest other rows,
// or to all of them when there are fewer. A matrix of fewer than two rows
// gives no scores. It compares every pair: O(n² dim). progress gets the rows
// finished.
func uniquenessScores(ctx context.Context, x *vector.Matrix, k, workers int, progress func(int)) ([]float64, error) {
	n := x.Len()
	if n < 2 {
		return nil, nil
	}
	k = min(k, n-1)
	out := make([]float64, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, max(1, workers))
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			near := make([][]float32, queryBlock)
			for i := range near {
				near[i] = make([]float32, 0, k)
			}
			for {
				lo := int(next.Add(queryBlock)) - queryBlock
				if lo >= n {
					return
				}
				if err := ctx.Err(); err != nil {
					errc <- err
					return
				}
				hi := min(lo+queryBlock, n)
				scoreBlock(x, lo, hi, k, near, out)
				progress(hi - lo)
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errc:
		return nil, err
	default:
	}
	return out, nil
}

// scoreBlock scores rows lo..hi-1 with one pass over x; near is scratch.
func scoreBlock(x *vector.Matrix, lo, hi, k int, near [][]float32, out []float64) {
	cos := x.Metric == vector.Cosine
	for q := range hi - lo {
		near[q] = near[q][:0]
	}
	for j := range x.Len() {
		row := x.Row(j)
		for q := range hi - lo {
			if lo+q == j {
				continue
			}
			var d float32
			if cos {
				d = 1 - dot(x.Row(lo+q), row)
			} else {
				d = vector.SquaredDistance(x.Row(lo+q), row)
			}
			near[q] = keepSmallest(near[q], d, k)
		}
	}
	for q := range hi - lo {
		var sum float64
		for _, d := range near[q] {
			if cos {
				sum += float64(max(0, d))
			} else {
				sum += math.Sqrt(float64(d))
			}
		}
		out[lo+q] = sum / float64(len(near[q]))
	}
}

// keepSmallest inserts d into s, an ascending list of at most k values, if
// it is among the k smallest.
func keepSmallest(s []float32, d float32, k int) []float32 {
	if len(s) == k {
		if d >= s[k-1] {
			return s
		}
		s = s[:k-1]
	}
	i := len(s)
	s = append(s, d)
	for ; i > 0 && s[i-1] > d; i-- {
		s[i] = s[i-1]
	}
	s[i] = d
	return s
}
