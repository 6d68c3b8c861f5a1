package curate

import (
	"math/bits"
	"runtime"
	"sync"
)

// HashPairs calls fn once for every pair i < j of hashes at Hamming
// distance at most t (0..MaxHamming), from several goroutines at once.
//
// It is multi-index hashing: the 64 bits are cut into m bands, and two
// hashes within t differ in at most r = t/m bits in some band (pigeonhole),
// so each hash only meets those whose band value is within r of its own in
// some band. A pair is reported in the first band where it meets, so once.
// Each band is a counting sort of the hashes by band value, its buckets
// holding the full hashes (read in sequence). m is chosen per t and n for
// the fewest expected comparisons.
func HashPairs(hashes []uint64, t int, fn func(i, j int32, d int)) {
	n := len(hashes)
	if n < 2 || t < 0 {
		return
	}
	m := bandCount(n, t)
	idx := newMultiIndex(hashes, m)
	r := t / m
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	const chunk = 4096
	next := make(chan int, workers)
	for range workers {
		wg.Go(func() {
			probes := make([]uint32, 0, 256)
			for lo := range next {
				for i := lo; i < min(n, lo+chunk); i++ {
					idx.query(int32(i), r, t, &probes, fn)
				}
			}
		})
	}
	for lo := 0; lo < n; lo += chunk {
		next <- lo
	}
	close(next)
	wg.Wait()
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

// query reports the pairs (i, j > i) within t that meet first in some band.
func (x *multiIndex) query(i int32, r, t int, probes *[]uint32, fn func(i, j int32, d int)) {
	h := x.hashes[i]
	for bi := range x.bands {
		b := &x.bands[bi]
		*probes = neighbours((*probes)[:0], b.value(h), b.width, r)
		for _, v := range *probes {
			// A bucket lists indexes in ascending order: walking it from the
			// end stops at the first index not above i.
			for k := int64(b.start[v+1]) - 1; k >= int64(b.start[v]); k-- {
				j := b.seq[k]
				if j <= i {
					break
				}
				o := b.hash[k]
				d := bits.OnesCount64(h ^ o)
				if d > t || x.metEarlier(h, o, bi, r) {
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
