package vector

import (
	"fmt"
	"slices"
	"sync"
)

// scored is a candidate: higher score is nearer (dot product for cosine,
// negated squared distance for l2).
type scored struct {
	seq   int64
	score float32
}

// worse orders candidates; equal scores fall back to seq so results are
// deterministic.
func worse(a, b scored) bool {
	return a.score < b.score || (a.score == b.score && a.seq > b.seq)
}

// topK keeps the k best candidates in a heap whose root is the worst kept.
type topK struct {
	k int
	h []scored
}

func (t *topK) push(c scored) {
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	if !worse(t.h[0], c) {
		return
	}
	t.h[0] = c
	for i := 0; ; {
		l, w := 2*i+1, i
		if l < len(t.h) && worse(t.h[l], t.h[w]) {
			w = l
		}
		if r := l + 1; r < len(t.h) && worse(t.h[r], t.h[w]) {
			w = r
		}
		if w == i {
			return
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// bitset marks allowed file seqs.
type bitset []uint64

func newBitset(seqs []int64) bitset {
	var hi int64
	for _, s := range seqs {
		hi = max(hi, s)
	}
	b := make(bitset, hi/64+1)
	for _, s := range seqs {
		if s >= 0 {
			b[s/64] |= 1 << (s % 64)
		}
	}
	return b
}

func (b bitset) has(s int64) bool {
	return s >= 0 && s/64 < int64(len(b)) && b[s/64]&(1<<(s%64)) != 0
}

// scan returns the k nearest rows to q (already unit length for cosine),
// best first, among rows allowed by allow (nil: all) except seq skip. A copy
// with a quantized twin is searched in two passes (quant.go), with the same
// answer as scanExact.
func (x *matrix) scan(q []float32, k int, allow bitset, skip int64, workers int) []scored {
	if x.quant != nil && len(x.seqs) >= qMinRows {
		return x.scanQuant(q, k, allow, skip, workers)
	}
	return x.scanExact(q, k, allow, skip, workers)
}

// scanExact scores every row. Rows are split into contiguous ranges, one
// per worker.
func (x *matrix) scanExact(q []float32, k int, allow bitset, skip int64, workers int) []scored {
	n := len(x.seqs)
	workers = max(1, min(workers, n/2048)) // small copies are not worth a goroutine
	parts := make([][]scored, workers)
	inParallel(workers, func(w int) {
		parts[w] = x.scanRange(q, k, allow, skip, n*w/workers, n*(w+1)/workers)
	})
	return ranked(slices.Concat(parts...), k)
}

// inParallel runs f(0..workers-1) on goroutines; a panic in one is re-raised
// on the caller's goroutine.
func inParallel(workers int, f func(w int)) {
	var wg sync.WaitGroup
	var panicked any
	var pmu sync.Mutex
	for w := range workers {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					pmu.Lock()
					panicked = p
					pmu.Unlock()
				}
			}()
			f(w)
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(fmt.Sprintf("vector: scan: %v", panicked)) // a bug
	}
}

// ranked sorts candidates best first (score, then seq) and keeps k.
func ranked(all []scored, k int) []scored {
	slices.SortFunc(all, func(a, b scored) int {
		if worse(b, a) {
			return -1
		}
		if worse(a, b) {
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

// score is row i's score for q, as scanRange computes it.
func (x *matrix) score(q []float32, i int) float32 {
	row := x.data[i*x.dim : (i+1)*x.dim]
	if x.cosine {
		return dot(q, row)
	}
	return -sqdist(q, row)
}

func (x *matrix) scanRange(q []float32, k int, allow bitset, skip int64, lo, hi int) []scored {
	t := topK{k: k, h: make([]scored, 0, k)}
	for i := lo; i < hi; i++ {
		seq := x.seqs[i]
		if seq == skip || (allow != nil && !allow.has(seq)) {
			continue
		}
		s := x.score(q, i)
		if len(t.h) < k || !worse(scored{seq, s}, t.h[0]) {
			t.push(scored{seq, s})
		}
	}
	return t.h
}

// dot is the inner product. Eight independent accumulators let the CPU
// overlap the multiply-adds (Go does not vectorize this loop); the re-slicing
// lets the compiler drop bounds checks.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func sqdist(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		aa, bb := a[i:i+4:i+4], b[i:i+4:i+4]
		d0, d1, d2, d3 := aa[0]-bb[0], aa[1]-bb[1], aa[2]-bb[2], aa[3]-bb[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}
