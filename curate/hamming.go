package curate

import (
	"math/bits"
)

// HashPairs calls fn once for every pair i < j of hashes at Hamming
// distance at most t (0..MaxHamming), from several goroutines at once.
//
// It is multi-index hashing: the 64 bits are cut into m bands, and two
// hashes within t differ in at most r = t/m bits in some band (pigeonhole),
// so a hash only meets those whose band value is within r of its own in
// some band. A pair is reported in the first band where it meets, so once.
// Each band is a counting sort of the hashes by band value, its buckets
// holding the full hashes. The work goes bucket by bucket: all the hashes of
// a bucket meet those of its neighbouring buckets together, so the
// neighbours are read once per bucket and stay in cache. m is chosen per t
// and n for the fewest expected comparisons.
func HashPairs(hashes []uint64, t int, fn func(i, j int32, d int)) {
	n := len(hashes)
	if n < 2 || t < 0 {
		return
	}
	m := bandCount(n, t)
	idx := newMultiIndex(hashes, m)
	r := t / m
	for bi := range idx.bands {
		values := len(idx.bands[bi].start) - 1
		parallelRange(values, func(lo, hi int) {
			probes := make([]uint32, 0, 256)
			for v := lo; v < hi; v++ {
				idx.meet(bi, uint32(v), r, t, &probes, fn)
			}
		})
	}
}

// bandCount picks m in 2..16 minimising m * probes(r, 64/m) * (1 + n/2^(64/m)).
func bandCount(n, t int) int {
	best, bestCost := 4, -1.0
	for m := 2; m <= 16; m++ {
		w := 64 / m
		if w > 24 { // bucket tables over 16M entries cost more memory than they save
			continue
		}
		r := t / m
		probes := 0.0
		c := 1.0
		for k := 0; k <= r && k <= w; k++ {
			probes += c
			c = c * float64(w-k) / float64(k+1)
		}
		cost := float64(m) * probes * (1 + float64(n)/float64(uint64(1)<<w))
		if w > 16 {
			cost *= 2 // probes into tables past the cache
		}
		if bestCost < 0 || cost < bestCost {
			best, bestCost = m, cost
		}
	}
	return best
}

type band struct {
	shift, width uint
	start        []uint32 // bucket v holds entries start[v]..start[v+1]
	seq          []int32  // the hashes' indexes, by bucket
	hash         []uint64 // the hashes, by bucket
}

type multiIndex struct {
	hashes []uint64
	bands  []band
}

func newMultiIndex(hashes []uint64, m int) *multiIndex {
	x := &multiIndex{hashes: hashes, bands: make([]band, m)}
	shift := uint(0)
	for b := range m {
		w := uint(64 / m)
		if b < 64%m {
			w++
		}
		x.bands[b] = buildBand(hashes, shift, w)
		shift += w
	}
	return x
}

func buildBand(hashes []uint64, shift, width uint) band {
	b := band{shift: shift, width: width, start: make([]uint32, (1<<width)+1),
		seq: make([]int32, len(hashes)), hash: make([]uint64, len(hashes))}
	mask := uint64(1)<<width - 1
	for _, h := range hashes {
		b.start[(h>>shift)&mask+1]++
	}
	for v := 1; v < len(b.start); v++ {
		b.start[v] += b.start[v-1]
	}
	fill := append([]uint32(nil), b.start[:len(b.start)-1]...)
	for i, h := range hashes {
		v := (h >> shift) & mask
		b.seq[fill[v]], b.hash[fill[v]] = int32(i), h
		fill[v]++
	}
	return b
}

func (b *band) value(h uint64) uint32 { return uint32((h >> b.shift) & (uint64(1)<<b.width - 1)) }

// meet reports the pairs of a hash in bucket v of band bi and a hash in a
// bucket within r of v, the second of higher index, that are within t and
// did not meet in an earlier band.
func (x *multiIndex) meet(bi int, v uint32, r, t int, probes *[]uint32, fn func(i, j int32, d int)) {
	b := &x.bands[bi]
	qlo, qhi := b.start[v], b.start[v+1]
	if qlo == qhi {
		return
	}
	*probes = neighbours((*probes)[:0], v, b.width, r)
	for _, u := range *probes {
		clo, chi := b.start[u], b.start[u+1]
		cands, cseq := b.hash[clo:chi], b.seq[clo:chi]
		for q := qlo; q < qhi; q++ {
			i, h := b.seq[q], b.hash[q]
			for k, o := range cands {
				d := bits.OnesCount64(h ^ o)
				if d > t {
					continue
				}
				j := cseq[k]
				if j <= i || x.metEarlier(h, o, bi, r) {
					continue
				}
				fn(i, j, d)
			}
		}
	}
}

// metEarlier says whether h and o are within r in a band before bi.
func (x *multiIndex) metEarlier(h, o uint64, bi, r int) bool {
	for e := range bi {
		b := &x.bands[e]
		if bits.OnesCount32(b.value(h)^b.value(o)) <= r {
			return true
		}
	}
	return false
}

// neighbours appends every w-bit value within Hamming distance r of v.
func neighbours(out []uint32, v uint32, w uint, r int) []uint32 {
	out = append(out, v)
	var flip func(v uint32, from uint, left int)
	flip = func(v uint32, from uint, left int) {
		for b := from; b < w; b++ {
			u := v ^ 1<<b
			out = append(out, u)
			if left > 1 {
				flip(u, b+1, left-1)
			}
		}
	}
	if r > 0 {
		flip(v, 0, r)
	}
	return out
}

// HashMatches calls fn once for every query q and hash i at Hamming
// distance at most t, from several goroutines at once. Both sides are
// multi-indexed as in HashPairs, with the same bands, and the work goes
// bucket by bucket: the queries of a bucket meet the hashes of its
// neighbouring buckets together.
func HashMatches(hashes, queries []uint64, t int, fn func(q, i int32, d int)) {
	if len(hashes) == 0 || len(queries) == 0 || t < 0 {
		return
	}
	m := bandCount(len(hashes), t)
	idx, qidx := newMultiIndex(hashes, m), newMultiIndex(queries, m)
	r := t / m
	for bi := range idx.bands {
		b, qb := &idx.bands[bi], &qidx.bands[bi]
		parallelRange(len(b.start)-1, func(lo, hi int) {
			probes := make([]uint32, 0, 256)
			for v := lo; v < hi; v++ {
				qlo, qhi := qb.start[v], qb.start[v+1]
				if qlo == qhi {
					continue
				}
				probes = neighbours(probes[:0], uint32(v), b.width, r)
				for _, u := range probes {
					cands, cseq := b.hash[b.start[u]:b.start[u+1]], b.seq[b.start[u]:b.start[u+1]]
					for q := qlo; q < qhi; q++ {
						h := qb.hash[q]
						for k, o := range cands {
							if d := bits.OnesCount64(h ^ o); d <= t && !idx.metEarlier(h, o, bi, r) {
								fn(qb.seq[q], cseq[k], d)
							}
						}
					}
				}
			}
		})
	}
}
