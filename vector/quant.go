package vector

import (
	"math"
	"slices"
)

// A search over the in-memory copy reads 4 bytes a component, which costs
// more in scalar Go multiply-adds and memory traffic than a BLAS matrix-vector
// product. So the copy also keeps every row quantized to 7 bits a component,
// and a search runs in two passes:
//
//  1. every row's dot product with the quantized query, in exact integer
//     arithmetic, 8 rows at a time in the lanes of a uint64 (pure Go SWAR: a
//     quarter of the bytes and a quarter of the multiplies), which gives an
//     interval that surely holds the score the plain scan would compute;
//  2. the rows whose interval reaches the k-th best lower bound are scored
//     exactly as the plain scan scores them (the same float32 loop).
//
// Any row of the plain scan's top k has a score at least the k-th best score,
// which is at least the k-th best lower bound, so it is among the rows
// rescored; ranking those by the same scores and the same tie rule (score,
// then seq) gives the plain scan's answer exactly, ties included. On random
// 512-d unit vectors about a hundred rows of 100,000 are rescored.
const (
	qLevels  = 63   // a component maps to -63..63, stored as 1..127
	qOffset  = 64   // stored = level + qOffset
	qLanes   = 8    // rows per block: a uint64 holds one component of 8 rows
	qMinRows = 4096 // below this the plain scan is as fast
)

// qrow is what bounds one row's quantization error.
type qrow struct {
	scale float32 // component ≈ scale * (stored - qOffset)
	errN  float32 // Euclidean norm of the rounding error, rounded up
	norm  float32 // the row's norm, rounded up
	sum   int32   // sum of the stored bytes
}

// quant is the quantized copy of a matrix's rows: row i is byte i%8 of
// words[(i/8)*dp+j] for component j. Padding components (dim..dp) are 0.
type quant struct {
	dim, dp int
	words   []uint64
	rows    []qrow
}

func newQuant(dim, capRows int) *quant {
	dp := (dim + 3) &^ 3 // the kernel takes 4 components a step
	return &quant{dim: dim, dp: dp, words: make([]uint64, 0, (capRows+qLanes-1)/qLanes*dp),
		rows: make([]qrow, 0, capRows)}
}

func (qz *quant) bytes() int64 { return int64(cap(qz.words))*8 + int64(cap(qz.rows))*16 }

// set quantizes v as row i (i ≤ the number of rows: an append at most).
func (qz *quant) set(i int, v []float32) {
	if i == len(qz.rows) {
		if i%qLanes == 0 {
			qz.words = append(qz.words, make([]uint64, qz.dp)...)
		}
		qz.rows = append(qz.rows, qrow{})
	}
	var mx, n2 float64
	for _, c := range v {
		if a := math.Abs(float64(c)); a > mx { // not max(): its NaN and -0 rules cost
			mx = a
		}
		n2 += float64(c) * float64(c)
	}
	scale := float32(mx / qLevels)
	inv := 0.0 // a level is only rounded here: the bounds use the error it leaves
	if scale > 0 {
		inv = 1 / float64(scale)
	}
	blk := qz.words[(i/qLanes)*qz.dp:][:qz.dim]
	sh := uint(8 * (i % qLanes))
	var e2 float64
	var sum int32
	for j, c := range v {
		f := math.Floor(float64(c)*inv + 0.5) // one instruction, where math.Round is a bit twiddle
		if f > qLevels {
			f = qLevels
		} else if f < -qLevels {
			f = -qLevels
		}
		level := int(f)
		e := float64(c) - float64(scale)*f
		e2 += e * e
		u := uint64(level + qOffset)
		blk[j] = blk[j]&^(0xff<<sh) | u<<sh
		sum += int32(u)
	}
	qz.rows[i] = qrow{scale: scale, errN: roundUp(math.Sqrt(e2)), norm: roundUp(math.Sqrt(n2)), sum: sum}
}

// roundUp converts to float32 no smaller than x (float32 rounding is 6e-8
// relative; the margin also covers the float64 sums).
func roundUp(x float64) float32 { return float32(x * (1 + 1e-6)) }

// move copies row from into row to (a removal's swap with the last row).
func (qz *quant) move(to, from int) {
	st, sf := uint(8*(to%qLanes)), uint(8*(from%qLanes))
	bt, bf := qz.words[(to/qLanes)*qz.dp:][:qz.dim], qz.words[(from/qLanes)*qz.dp:][:qz.dim]
	for j := range bt {
		bt[j] = bt[j]&^(0xff<<st) | (bf[j]>>sf&0xff)<<st
	}
	qz.rows[to] = qz.rows[from]
}

// truncate drops the rows from n on.
func (qz *quant) truncate(n int) {
	qz.rows = qz.rows[:n]
	qz.words = qz.words[:(n+qLanes-1)/qLanes*qz.dp]
}

// qquery is a query prepared for the first pass.
type qquery struct {
	v      []uint64 // stored levels, dp long, padding 0
	t      float64  // scale
	sumV   int64
	qa, eq float64 // norms of t*levels and of the query's rounding error (rounded up)
	qn, qq float64 // the query's norm and squared norm
	gamma  float64 // relative error bound of the float32 loops
	cosine bool
	dim    int
}

func (qz *quant) prepare(q []float32, cosine bool) *qquery {
	p := &qquery{v: make([]uint64, qz.dp), cosine: cosine, dim: qz.dim}
	var mx float64
	for _, c := range q {
		mx = max(mx, math.Abs(float64(c)))
	}
	p.t = mx / qLevels
	var a2, e2 float64
	for j, c := range q {
		level := 0.0
		if p.t > 0 {
			level = max(-qLevels, min(qLevels, math.Round(float64(c)/p.t)))
		}
		a, e := p.t*level, float64(c)-p.t*level
		a2, e2 = a2+a*a, e2+e*e
		p.qq += float64(c) * float64(c)
		p.v[j] = uint64(level + qOffset)
		p.sumV += int64(level + qOffset)
	}
	p.qa, p.eq, p.qn = math.Sqrt(a2)*(1+1e-9), math.Sqrt(e2)*(1+1e-9), math.Sqrt(p.qq)
	// Recursive summation of n terms errs by at most n·u/(1-n·u) of the sum
	// of their magnitudes (u = 2^-24); dim+16 covers the products, the
	// differences and the final adds of dot and sqdist.
	n := float64(qz.dim+16) * 0x1p-24
	p.gamma = n / (1 - n)
	return p
}

// bounds returns an interval holding the float32 score of a row whose
// integer dot product with the query's levels (both offset) is raw.
func (p *qquery) bounds(r qrow, raw int64) (lo, hi float64) {
	levels := raw - qOffset*int64(r.sum) - qOffset*p.sumV + qOffset*qOffset*int64(p.dim)
	approx := p.t * float64(r.scale) * float64(levels)
	// q·x = (t·lq + eq)·(s·lx + ex) = approx + t·lq·ex + eq·x, each term
	// bounded by Cauchy-Schwarz.
	b := p.qa*float64(r.errN) + p.eq*float64(r.norm)
	norm := float64(r.norm)
	if p.cosine {
		slack := b + p.gamma*p.qn*norm + 1e-9*(p.qn*norm+1)
		return approx - slack, approx + slack
	}
	// l2: the score is -|q-x|² = -(|q|² + |x|² - 2 q·x).
	xlo := norm * (1 - 4e-6)
	dlo := max(0, p.qq+xlo*xlo-2*(approx+b))
	dhi := p.qq + norm*norm - 2*(approx-b)
	slack := 1e-9 * (p.qq + norm*norm + 1)
	return -dhi*(1+p.gamma) - slack, -dlo*(1-p.gamma) + slack
}

const (
	m16 = 0x00ff00ff00ff00ff // even bytes into 16-bit lanes
	m32 = 0x0000ffff0000ffff // even 16-bit lanes into 32-bit lanes
)

// block8 sets out[l] to the dot product of v with row l of a block (w, dp
// words). Products of two levels fit 14 bits, so four of them add up in a
// 16-bit lane before the sums widen into 32-bit lanes.
func block8(w, v []uint64, out *[qLanes]int64) {
	w = w[:len(v)]
	var e04, e26, o15, o37 uint64
	for j := 0; j+4 <= len(v); j += 4 {
		ww, vv := w[j:j+4:j+4], v[j:j+4:j+4]
		e := (ww[0]&m16)*vv[0] + (ww[1]&m16)*vv[1] + (ww[2]&m16)*vv[2] + (ww[3]&m16)*vv[3]
		o := (ww[0]>>8&m16)*vv[0] + (ww[1]>>8&m16)*vv[1] + (ww[2]>>8&m16)*vv[2] + (ww[3]>>8&m16)*vv[3]
		e04 += e & m32
		e26 += e >> 16 & m32
		o15 += o & m32
		o37 += o >> 16 & m32
	}
	out[0], out[4] = int64(uint32(e04)), int64(e04>>32)
	out[2], out[6] = int64(uint32(e26)), int64(e26>>32)
	out[1], out[5] = int64(uint32(o15)), int64(o15>>32)
	out[3], out[7] = int64(uint32(o37)), int64(o37>>32)
}

// candidate is a row that may be in the top k, with its upper bound.
type candidate struct {
	row int32
	hi  float64
}

// firstPass bounds the allowed rows of blocks [blo, bhi): it returns the k
// best lower bounds (a min-heap) and every row whose upper bound reached the
// k-th best lower bound seen so far.
func (x *matrix) firstPass(p *qquery, k int, allow bitset, skip int64, blo, bhi int) ([]float64, []candidate) {
	qz, n := x.quant, len(x.seqs)
	los := make([]float64, 0, k)
	var cands []candidate
	var raw [qLanes]int64
	for b := blo; b < bhi; b++ {
		block8(qz.words[b*qz.dp:(b+1)*qz.dp], p.v, &raw)
		for l := range qLanes {
			i := b*qLanes + l
			if i >= n {
				break
			}
			if seq := x.seqs[i]; seq == skip || (allow != nil && !allow.has(seq)) {
				continue
			}
			lo, hi := p.bounds(qz.rows[i], raw[l])
			if len(los) == k && hi < los[0] {
				continue
			}
			cands = append(cands, candidate{int32(i), hi})
			pushLow(&los, k, lo)
		}
	}
	return los, cands
}

// pushLow keeps the k largest values in a min-heap.
func pushLow(h *[]float64, k int, v float64) {
	a := *h
	if len(a) < k {
		a = append(a, v)
		for i := len(a) - 1; i > 0 && a[(i-1)/2] > a[i]; i = (i - 1) / 2 {
			a[i], a[(i-1)/2] = a[(i-1)/2], a[i]
		}
		*h = a
		return
	}
	if v <= a[0] {
		return
	}
	a[0] = v
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < k && a[l] < a[m] {
			m = l
		}
		if l+1 < k && a[l+1] < a[m] {
			m = l + 1
		}
		if m == i {
			return
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
}

// scanQuant is scanExact's answer by the two passes above.
func (x *matrix) scanQuant(q []float32, k int, allow bitset, skip int64, workers int) []scored {
	p := x.quant.prepare(q, x.cosine)
	blocks := (len(x.seqs) + qLanes - 1) / qLanes
	workers = max(1, min(workers, blocks/256))
	los, cands := make([][]float64, workers), make([][]candidate, workers)
	inParallel(workers, func(w int) {
		los[w], cands[w] = x.firstPass(p, k, allow, skip, blocks*w/workers, blocks*(w+1)/workers)
	})
	// The k-th best lower bound of all rows is among the workers' k best.
	all := slices.Concat(los...)
	floor := math.Inf(-1)
	if len(all) >= k {
		slices.Sort(all)
		floor = all[len(all)-k]
	}
	t := topK{k: k, h: make([]scored, 0, k)}
	for _, part := range cands {
		for _, c := range part {
			if c.hi >= floor {
				t.push(scored{x.seqs[c.row], x.score(q, int(c.row))})
			}
		}
	}
	return ranked(t.h, k)
}
