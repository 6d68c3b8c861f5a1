package curate

import (
	"cmp"
	"slices"
	"sync"

	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
)

// CentreScales are the centres of an image whose perceptual hashes are kept
// beside the whole image's (lake.Quality.CentreHashes), as fractions of its
// width and height: a copy cropped by 5% on every side is the original's
// centre 0.9, by 10% its centre 0.8.
var CentreScales = [2]float64{0.9, 0.8}

// centreHashes are the perceptual hashes of g's centres at CentreScales,
// from g's summed-area table.
func centreHashes(g vips.Grey, s sums) [2]uint64 {
	var out [2]uint64
	for k, f := range CentreScales {
		w, h := max(1, int(float64(g.W)*f+0.5)), max(1, int(float64(g.H)*f+0.5))
		out[k] = dctHash(s.shrink((g.W-w)/2, (g.H-h)/2, w, h))
	}
	return out
}

// ScoredPairs calls fn, from one goroutine, once for every pair i < j of
// items that are near duplicates by perceptual hash: their whole-image
// hashes within t, or one's whole-image hash within t of a centre hash of
// the other (the first a centred crop of the second); d is the least of
// those distances. Pairs come sorted.
func ScoredPairs(items []lake.Scored, t int, fn func(i, j int32, d int)) {
	full := make([]uint64, len(items))
	var centres []uint64
	var owner []int32
	for i, it := range items {
		full[i] = it.PHash
		if it.HasCentre {
			for _, h := range it.CentreHashes {
				centres, owner = append(centres, h), append(owner, int32(i))
			}
		}
	}
	least := map[[2]int32]int{}
	var mu sync.Mutex
	add := func(i, j int32, d int) {
		k := [2]int32{min(i, j), max(i, j)}
		mu.Lock()
		if old, ok := least[k]; !ok || d < old {
			least[k] = d
		}
		mu.Unlock()
	}
	HashPairs(full, t, add)
	HashMatches(full, centres, t, func(q, i int32, d int) {
		if owner[q] != i {
			add(owner[q], i, d)
		}
	})
	keys := make([][2]int32, 0, len(least))
	for k := range least {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int32) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, k := range keys {
		fn(k[0], k[1], least[k])
	}
}
