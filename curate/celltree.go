package curate

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/framelake/framelake/vector"
)

// branches is how many cells a split of m members makes (fewer when its
// k-means finds fewer): about sqrt(m)/2, so that a point is compared with
// few centres on its way down, in few levels (sqrt(m) and sqrt(m)/4 cost a
// third more on the benchmark's 30,000 vectors).
func branches(m int) int { return max(8, min(maxBranches, int(math.Sqrt(float64(m))/2))) }

// Shape of VectorPairs' cells.
const (
	leafSize     = 64  // a cell of at most this many members is not split
	maxBranches  = 200 // with the strays, a label fits a byte
	kmeansSample = 20  // members a split's k-means is fitted on, per cell made
	kmeansRounds = 4
	maxDepth     = 40  // a deeper cell is a leaf whatever its size (bounds stay exact)
	strayMargin  = 0.1 // radians past a group's 90th percentile of angles that make a stray
)

// cell is a node of the tree: its members are order[lo:hi], none farther
// than radius (an angle) from centre; kids is nil for a leaf.
type cell struct {
	centre []float32
	cnorm  float64   // |centre| in float64
	rest   []float32 // norms of the centre past each block, as tree.rest
	radius float64
	lo, hi int32
	kids   []*cell
}

// tree cuts vectors into cells by spherical k-means, split after split,
// until a cell has at most leafSize members. Exactness never rests on the
// splits being good: every radius is measured over the members. Good splits
// (a cell per cluster) only make the bounds tight.
type tree struct {
	vecs   [][]float32
	norm   []float64 // |v| in float64
	blocks int       // blocks of blockDims dimensions
	rest   []float32 // rest[v*blocks+k]: the norm of v's dimensions past block k
	order  []int32   // members, cell by cell, leaves in depth-first order
	ang    []float64 // ang[p]: angle between order[p] and its leaf's centre, ascending within a leaf
	root   *cell
	leaves []*cell
}

func newTree(vecs [][]float32) *tree {
	n, dim := len(vecs), len(vecs[0])
	t := &tree{vecs: vecs, norm: make([]float64, n), blocks: (dim + blockDims - 1) / blockDims,
		order: make([]int32, n), ang: make([]float64, n)}
	t.rest = make([]float32, n*t.blocks)
	parallelRange(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			t.order[i] = int32(i)
			t.norm[i] = restNorms(vecs[i], t.rest[i*t.blocks:(i+1)*t.blocks])
		}
	})
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)-1)
	t.root = t.build(0, int32(n), 0, sem)
	t.collect(t.root)
	return t
}

// restNorms sets rest[k] to the norm of v's dimensions past block k and
// returns v's norm, in float64.
func restNorms(v []float32, rest []float32) float64 {
	s := 0.0
	for k := len(rest) - 1; k >= 0; k-- {
		rest[k] = float32(math.Sqrt(s))
		for _, x := range v[k*blockDims : min(len(v), (k+1)*blockDims)] {
			s += float64(x) * float64(x)
		}
	}
	return math.Sqrt(s)
}

func (t *tree) restNorms(v []float32) []float32 {
	rest := make([]float32, t.blocks)
	restNorms(v, rest)
	return rest
}

// build makes the cell of order[lo:hi] and, unless it is small, splits it;
// the halves of a split are built on other goroutines while sem has room.
func (t *tree) build(lo, hi int32, depth int, sem chan struct{}) *cell {
	c := &cell{lo: lo, hi: hi}
	members := t.order[lo:hi]
	c.centre, c.cnorm = t.mean(members)
	c.rest = t.restNorms(c.centre)
	if hi-lo <= leafSize || depth >= maxDepth {
		t.seal(c)
		return c
	}
	bounds := t.split(members, t.kmeans(members, uint64(lo)))
	if len(bounds) < 3 { // one group: the members are alike
		t.seal(c)
		return c
	}
	c.radius = t.radius(c)
	c.kids = make([]*cell, len(bounds)-1)
	var wg sync.WaitGroup
	for k := range c.kids {
		a, b := lo+bounds[k], lo+bounds[k+1]
		select {
		case sem <- struct{}{}:
			wg.Go(func() {
				c.kids[k] = t.build(a, b, depth+1, sem)
				<-sem
			})
		default:
			c.kids[k] = t.build(a, b, depth+1, sem)
		}
	}
	wg.Wait()
	return c
}

func (t *tree) collect(c *cell) {
	if c.kids == nil {
		t.leaves = append(t.leaves, c)
	}
	for _, k := range c.kids {
		t.collect(k)
	}
}

// mean is the normalised mean of members, and its norm in float64.
func (t *tree) mean(members []int32) ([]float32, float64) {
	sum := make([]float64, len(t.vecs[members[0]]))
	for _, m := range members {
		for i, x := range t.vecs[m] {
			sum[i] += float64(x)
		}
	}
	c := make([]float32, len(sum))
	s := 0.0
	for _, x := range sum {
		s += x * x
	}
	if s > 0 {
		inv := 1 / math.Sqrt(s)
		for i, x := range sum {
			c[i] = float32(x * inv)
		}
	}
	return c, math.Sqrt(dot64(c, c))
}

// seal makes c a leaf: its members sorted by their angle to its centre.
func (t *tree) seal(c *cell) {
	for p := c.lo; p < c.hi; p++ {
		m := t.order[p]
		t.ang[p] = t.angleOf(t.vecs[m], t.norm[m], c)
	}
	sort.Sort(byAngle{t.order[c.lo:c.hi], t.ang[c.lo:c.hi]})
	c.radius = t.ang[c.hi-1]
}

type byAngle struct {
	order []int32
	ang   []float64
}

func (b byAngle) Len() int           { return len(b.order) }
func (b byAngle) Less(i, j int) bool { return b.ang[i] < b.ang[j] }
func (b byAngle) Swap(i, j int) {
	b.order[i], b.order[j] = b.order[j], b.order[i]
	b.ang[i], b.ang[j] = b.ang[j], b.ang[i]
}

// radius is the greatest angle between c's centre and a member.
func (t *tree) radius(c *cell) float64 {
	var mu sync.Mutex
	r := 0.0
	members := t.order[c.lo:c.hi]
	parallelRange(len(members), func(lo, hi int) {
		m := 0.0
		for _, v := range members[lo:hi] {
			m = max(m, t.angleOf(t.vecs[v], t.norm[v], c))
		}
		mu.Lock()
		r = max(r, m)
		mu.Unlock()
	})
	return r
}

// kmeans fits up to branches(m) centres to a sample of members: k-means++
// seeding (a next centre drawn with odds 1 - its best cosine so far), then
// kmeansRounds rounds of Lloyd's with normalised means.
func (t *tree) kmeans(members []int32, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, uint64(len(members))))
	k := branches(len(members))
	sample := members
	if len(sample) > k*kmeansSample {
		sample = make([]int32, k*kmeansSample)
		for i := range sample {
			sample[i] = members[r.IntN(len(members))]
		}
	}
	centres := [][]float32{slices.Clone(t.vecs[sample[r.IntN(len(sample))]])}
	far := make([]float64, len(sample))
	for i := range far {
		far[i] = math.Inf(1)
	}
	for len(centres) < k {
		last, total := centres[len(centres)-1], 0.0
		for i, s := range sample {
			far[i] = min(far[i], max(0, 1-float64(vector.Dot(t.vecs[s], last))))
			total += far[i]
		}
		if total == 0 {
			break
		}
		x, pick := r.Float64()*total, len(sample)-1
		for i, f := range far {
			if x -= f; x < 0 {
				pick = i
				break
			}
		}
		centres = append(centres, slices.Clone(t.vecs[sample[pick]]))
	}
	label := make([]uint8, len(sample))
	for range kmeansRounds {
		rest := t.centreRests(centres)
		for i, s := range sample {
			label[i], _ = t.nearest(s, centres, rest)
		}
		for k, c := range centres {
			var in []int32
			for i, s := range sample {
				if label[i] == uint8(k) {
					in = append(in, s)
				}
			}
			if len(in) > 0 {
				if m, n := t.mean(in); n > 0 {
					copy(c, m)
				}
			}
		}
	}
	return centres
}

func (t *tree) centreRests(centres [][]float32) [][]float32 {
	rest := make([][]float32, len(centres))
	for k, c := range centres {
		rest[k] = t.restNorms(c)
	}
	return rest
}

// nearest is the centre with the greatest dot product with member x, and
// that product; a centre is given up once it cannot beat the best so far.
func (t *tree) nearest(x int32, centres, rest [][]float32) (uint8, float32) {
	best, at := float32(math.Inf(-1)), 0
	rx := t.rest[int(x)*t.blocks : int(x+1)*t.blocks]
	for k, c := range centres {
		if d, ok := blockedDot(t.vecs[x], c, rx, rest[k], best); ok && d > best {
			best, at = d, k
		}
	}
	return uint8(at), best
}

// split orders members by their nearest centre and returns where each
// non-empty group starts, and its end. Strays come first, as a group of
// their own: members much farther from their centre than most of its
// group (strayMargin past the group's 90th percentile of angles), which
// would otherwise widen the group's radius to their distance. First,
// because a pair is compared from its earlier member: a stray descending
// the tree is excluded from the tight cells, where the cells' members
// could not exclude a wide cell of strays.
func (t *tree) split(members []int32, centres [][]float32) []int32 {
	label := make([]uint8, len(members))
	cos := make([]float32, len(members))
	rest := t.centreRests(centres)
	assign := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			label[i], cos[i] = t.nearest(members[i], centres, rest)
			label[i]++ // 0 is the strays'
		}
	}
	if len(members) > 4096 {
		parallelRange(len(members), assign)
	} else {
		assign(0, len(members))
	}
	groups := len(centres) + 1
	cut := make([]float32, groups) // least cosine to stay in the group
	for k := 1; k < groups; k++ {
		var in []float32
		for i, l := range label {
			if int(l) == k {
				in = append(in, cos[i])
			}
		}
		if len(in) > 0 {
			slices.Sort(in)
			cut[k] = float32(math.Cos(math.Acos(float64(in[len(in)/10])) + strayMargin))
		}
	}
	for i, l := range label {
		if cos[i] < cut[l] {
			label[i] = 0
		}
	}
	at := make([]int32, groups+1)
	for _, l := range label {
		at[l+1]++
	}
	for k := range groups {
		at[k+1] += at[k]
	}
	bounds := []int32{0}
	for k := range groups {
		if at[k+1] > at[k] {
			bounds = append(bounds, at[k+1])
		}
	}
	was := slices.Clone(members)
	for i, m := range was {
		members[at[label[i]]] = m
		at[label[i]]++
	}
	return bounds
}
