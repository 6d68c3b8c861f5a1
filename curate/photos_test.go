package curate

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"testing"

	"github.com/framelake/framelake/internal/testphotos"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/lake"
)

func readPhotos(t testing.TB) [][]byte {
	out := make([][]byte, len(testphotos.Files))
	for i, p := range testphotos.Files {
		out[i] = testphotos.Read(t, p)
	}
	return out
}

func edit(t testing.TB, b []byte, q int, op func(r *vips.Raster) (*vips.Raster, error)) []byte {
	return testphotos.Edit(t, b, q, op)
}

// tiles cuts a photo into n x n tiles, each a distinct picture.
func tiles(t testing.TB, b []byte, n int) [][]byte {
	info, err := vips.Probe(b)
	if err != nil {
		t.Fatal(err)
	}
	w, h := info.Width/n, info.Height/n
	var out [][]byte
	for ty := range n {
		for tx := range n {
			out = append(out, edit(t, b, 92, func(r *vips.Raster) (*vips.Raster, error) { return r.Crop(tx*w, ty*h, w, h) }))
		}
	}
	return out
}

// cropPct is how much the cropped copy loses on every side, in percent; a
// second copy, cropped10, loses 10%.
var cropPct = 5

func TestScoresOfRealPhotos(t *testing.T) {
	photo := readPhotos(t)[0] // darknet's dog, 768x576
	q, err := Score(photo, 768, 576)
	if err != nil {
		t.Fatal(err)
	}
	blurred, err := Score(edit(t, photo, 90, func(r *vips.Raster) (*vips.Raster, error) { return r.Blur(3) }), 768, 576)
	if err != nil {
		t.Fatal(err)
	}
	var dark [256]byte
	for i := range dark {
		dark[i] = byte(i / 4)
	}
	darker, err := Score(edit(t, photo, 90, func(r *vips.Raster) (*vips.Raster, error) { return r.MapLUT(&dark) }), 768, 576)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dog: %+v; blurred: %+v; darker: %+v", q, blurred, darker)
	if !(q.Sharpness > 100 && blurred.Sharpness < q.Sharpness/4) {
		t.Errorf("sharpness %.1f, blurred (sigma 3) %.1f: want a sharp photo over 100 and its blur under a quarter", q.Sharpness, blurred.Sharpness)
	}
	if !(q.Brightness > 0.2 && q.Brightness < 0.8 && darker.Brightness < q.Brightness/3) {
		t.Errorf("brightness %.3f, darkened to a quarter %.3f", q.Brightness, darker.Brightness)
	}
	if !(darker.Contrast < q.Contrast/3 && q.Contrast > 0.1) {
		t.Errorf("contrast %.3f, darkened %.3f", q.Contrast, darker.Contrast)
	}
	if !(q.Entropy > 6 && q.Entropy <= 8 && darker.Entropy < q.Entropy-1.5) {
		t.Errorf("entropy %.2f bits, darkened (64 grey levels at most) %.2f", q.Entropy, darker.Entropy)
	}
	if q.Aspect != 768.0/576 {
		t.Errorf("aspect %g, want %g", q.Aspect, 768.0/576)
	}
	flat := edit(t, photo, 90, func(r *vips.Raster) (*vips.Raster, error) {
		var grey [256]byte
		for i := range grey {
			grey[i] = 128
		}
		return r.MapLUT(&grey)
	})
	f, err := Score(flat, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sharpness != 0 || f.Contrast != 0 || f.Entropy != 0 || f.Aspect != 768.0/576 {
		t.Errorf("a flat grey image scores %+v, want sharpness, contrast and entropy 0 and the decoded aspect", f)
	}
	if _, err := Score([]byte("not an image"), 10, 10); err == nil {
		t.Error("scoring bytes that are no image succeeded")
	}
}

// TestNearDuplicatePrecision: real photos cut into 3x3 tiles (117 distinct
// pictures), each with seven near-duplicate copies (see copies; cropped by
// cropPct and by 10% a side), all mixed and grouped as find_duplicates
// groups them (ScoredPairs at DefaultHamming, joined). At least 95% of the
// copies must land in their original's group, and at most 1% of the pairs
// of distinct pictures may share a group.
func TestNearDuplicatePrecision(t *testing.T) {
	if p := os.Getenv("CROP"); p != "" {
		fmt.Sscan(p, &cropPct)
	}
	var items []lake.Scored
	var family []int
	var kindOf []string
	for _, photo := range readPhotos(t) {
		for _, tile := range tiles(t, photo, 3) {
			fam := 0
			if len(family) > 0 {
				fam = family[len(family)-1] + 1
			}
			add := func(kind string, b []byte) {
				q, err := Score(b, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, lake.Scored{PHash: q.PHash, CentreHashes: q.CentreHashes, HasCentre: true})
				family, kindOf = append(family, fam), append(kindOf, kind)
			}
			add("original", tile)
			kinds := testphotos.Copies(t, tile, cropPct)
			kinds["cropped10"] = edit(t, tile, 90, func(r *vips.Raster) (*vips.Raster, error) {
				w, h := r.Width(), r.Height()
				return r.Crop(w/10, h/10, w-2*(w/10), h-2*(h/10))
			})
			for _, kind := range slices.Sorted(maps.Keys(kinds)) {
				add(kind, kinds[kind])
			}
		}
	}
	u := newUnionFind(len(items))
	direct := map[[2]int32]bool{}
	ScoredPairs(items, DefaultHamming, func(i, j int32, d int) {
		direct[[2]int32{i, j}] = true
		u.union(i, j)
	})
	// Per copy: found with its original directly (a pair) and in its group.
	perKind := map[string][3]int{} // pair, group, copies
	var copiesN, inGroup, withPair int
	orig := 0
	for i := range items {
		if kindOf[i] == "original" {
			orig = i
			continue
		}
		k := perKind[kindOf[i]]
		k[2]++
		copiesN++
		if direct[[2]int32{int32(orig), int32(i)}] {
			k[0]++
			withPair++
		}
		if u.find(int32(orig)) == u.find(int32(i)) {
			k[1]++
			inGroup++
		}
		perKind[kindOf[i]] = k
	}
	var across, falseGrouped, falsePairs int
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			if family[i] != family[j] {
				across++
				if u.find(int32(i)) == u.find(int32(j)) {
					falseGrouped++
				}
				if direct[[2]int32{int32(i), int32(j)}] {
					falsePairs++
				}
			}
		}
	}
	recall := float64(inGroup) / float64(copiesN)
	falseRate := float64(falseGrouped) / float64(across)
	t.Logf("%d images (%d pictures, %d copies; crops %d%% and 10%% a side), Hamming <= %d: copies in their original's group %d (%.4f), "+
		"as a direct pair %d (%.4f); pairs of distinct pictures in one group %d of %d (%.4f%%), as a direct pair %d (%.4f%%)",
		len(items), family[len(family)-1]+1, copiesN, cropPct, DefaultHamming, inGroup, recall, withPair,
		float64(withPair)/float64(copiesN), falseGrouped, across, 100*falseRate, falsePairs, 100*float64(falsePairs)/float64(across))
	for _, k := range slices.Sorted(maps.Keys(perKind)) {
		v := perKind[k]
		t.Logf("  %-10s pair %3d, group %3d of %d", k, v[0], v[1], v[2])
	}
	if recall < 0.95 || falseRate >= 0.01 {
		t.Errorf("copies in their group %.4f (want >= 0.95), distinct pairs grouped %.4f%% (want < 1%%)", recall, 100*falseRate)
	}
}
