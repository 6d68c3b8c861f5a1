package vector

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
)

// The embedding map's layout ("landmark t-SNE"):
//
//  1. PCA to layoutDims dimensions, fitted on a seeded sample of at most
//     pcaSample vectors (block power iteration on their covariance);
//  2. k-means (k ≤ maxLandmarks, k-means++ seeded) on a sample of the
//     projected vectors: the landmarks;
//  3. exact t-SNE of the k landmarks alone (k² per step, so a few hundred
//     landmarks cost milliseconds), started from their first two principal
//     coordinates, so the run is deterministic;
//  4. every vector is placed from its nearest landmarks: the inverse-distance
//     weighted mean of their 2D positions plus its offset from the nearest
//     one along the first two principal axes, scaled to the landmark spacing.
//
// Step 4 needs only the fitted basis, landmarks and their positions, so a new
// vector is placed without moving anyone else (layout.place), and the cost of
// a full fit is dominated by reading and projecting the vectors once.
const (
	layoutDims   = 50
	pcaSample    = 10000
	kmeansSample = 20000
	kmeansIters  = 15
	maxLandmarks = 256
	nearLandmark = 5
	tsneIters    = 750
	layoutSeed   = 0x66726d6c // any constant: the same vectors give the same map
)

// layout is a fitted projection: everything needed to place a vector.
type layout struct {
	Dim   int          `json:"dim"`
	Mean  []float32    `json:"mean"`  // dim
	Basis []float32    `json:"basis"` // p rows of dim: the principal axes
	Marks []float32    `json:"marks"` // k rows of p: the landmarks in PCA space
	Pos   [][2]float64 `json:"pos"`   // k landmark positions on the map
	Axes  [4]float64   `json:"axes"`  // maps a point's offset from its landmark (first two principal axes) onto the map, row-major
}

func (l *layout) p() int { return len(l.Basis) / l.Dim }

// project writes v's principal coordinates into z (length p).
func (l *layout) project(v []float32, z []float64) {
	p := l.p()
	for j := range p {
		row := l.Basis[j*l.Dim : (j+1)*l.Dim]
		var s float64
		for i, x := range v {
			s += float64(x-l.Mean[i]) * float64(row[i])
		}
		z[j] = s
	}
}

// place puts a vector with principal coordinates z on the map.
func (l *layout) place(z []float64) (float64, float64) {
	p, k := l.p(), len(l.Pos)
	m := min(nearLandmark, k)
	type near struct {
		i int
		d float64
	}
	best := make([]near, 0, m+1)
	for c := range k {
		d := sqdistMark(z, l.Marks[c*p:(c+1)*p])
		if len(best) == m && d >= best[m-1].d {
			continue
		}
		at := sort.Search(len(best), func(i int) bool { return best[i].d > d })
		best = slices.Insert(best, at, near{c, d})
		if len(best) > m {
			best = best[:m]
		}
	}
	var x, y, w float64
	for _, b := range best {
		// The fourth power of the inverse distance lets the nearest landmark
		// dominate, so clusters stay tight instead of smearing towards the
		// centre of their neighbours.
		wi := 1 / (b.d*b.d + 1e-12)
		x += wi * l.Pos[b.i][0]
		y += wi * l.Pos[b.i][1]
		w += wi
	}
	x, y = x/w, y/w
	if p >= 2 {
		c := l.Marks[best[0].i*p:]
		r0, r1 := z[0]-float64(c[0]), z[1]-float64(c[1])
		x += l.Axes[0]*r0 + l.Axes[1]*r1
		y += l.Axes[2]*r0 + l.Axes[3]*r1
	}
	return x, y
}

func sqdistMark(z []float64, c []float32) float64 {
	var s float64
	for i, x := range z {
		d := x - float64(c[i])
		s += d * d
	}
	return s
}

// fitLayout fits a layout to the rows of data (n rows of dim) and returns it
// with every row's principal coordinates (n rows of p). With prev (the
// model's current layout), the landmarks' t-SNE starts where prev places
// them, so a refit keeps the arrangement of the map a user knows.
func fitLayout(data []float32, dim, workers int, prev *layout) (*layout, []float64) {
	n := len(data) / dim
	rng := rand.New(rand.NewPCG(layoutSeed, uint64(n)))
	l := &layout{Dim: dim}
	l.Mean, l.Basis = pca(data, dim, sample(rng, n, pcaSample), min(layoutDims, dim, max(1, n-1)))
	p := l.p()
	z := make([]float64, n*p)
	parallel(n, workers, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			l.project(data[r*dim:(r+1)*dim], z[r*p:(r+1)*p])
		}
	})
	marks := kmeans(rng, z, p, sample(rng, n, kmeansSample), min(maxLandmarks, n), workers)
	l.Marks = make([]float32, len(marks))
	for i, v := range marks {
		l.Marks[i] = float32(v)
	}
	l.Pos = tsne(marks, p, l.startFrom(prev))
	o := offsetScale(l, z)
	l.Axes = [4]float64{o, 0, 0, o}
	return l, z
}

// startFrom places l's landmarks on prev's map; nil without a usable prev.
func (l *layout) startFrom(prev *layout) [][2]float64 {
	if prev == nil || prev.Dim != l.Dim || len(prev.Pos) == 0 {
		return nil
	}
	p, k := l.p(), len(l.Marks)/l.p()
	orig := make([]float32, l.Dim)
	z := make([]float64, prev.p())
	out := make([][2]float64, k)
	for c := range k {
		copy(orig, l.Mean)
		for j := range p {
			m := l.Marks[c*p+j]
			for i, b := range l.Basis[j*l.Dim : (j+1)*l.Dim] {
				orig[i] += m * b
			}
		}
		prev.project(orig, z)
		out[c][0], out[c][1] = prev.place(z)
	}
	return out
}

// offsetScale sizes a point's own offset so that the points of one landmark
// spread over about a third of the distance to the next landmark.
func offsetScale(l *layout, z []float64) float64 {
	k, p := len(l.Pos), l.p()
	if k < 2 || p < 2 {
		return 1
	}
	var gaps []float64
	for i := range k {
		best := math.Inf(1)
		for j := range k {
			if i != j {
				best = min(best, math.Hypot(l.Pos[i][0]-l.Pos[j][0], l.Pos[i][1]-l.Pos[j][1]))
			}
		}
		gaps = append(gaps, best)
	}
	var spread []float64
	n := len(z) / p
	for r := 0; r < n; r += max(1, n/2000) {
		spread = append(spread, math.Hypot(z[r*p], z[r*p+1]))
	}
	s := median(spread)
	if s == 0 {
		return 0
	}
	return median(gaps) / 3 / s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// sample returns up to m distinct row indices of n, in order.
func sample(rng *rand.Rand, n, m int) []int {
	if n <= m {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := rng.Perm(n)[:m]
	slices.Sort(idx)
	return idx
}

// parallel calls f on [lo, hi) parts of [0, n) from workers goroutines.
func parallel(n, workers int, f func(lo, hi int)) {
	workers = max(1, min(workers, n))
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(n, lo+step))
	}
	wg.Wait()
}

// pca returns the mean of the sampled rows and the top p principal axes (p
// rows of dim), by block power iteration on their covariance matrix.
func pca(data []float32, dim int, rows []int, p int) ([]float32, []float32) {
	mean := make([]float64, dim)
	for _, r := range rows {
		for i, x := range data[r*dim : (r+1)*dim] {
			mean[i] += float64(x)
		}
	}
	for i := range mean {
		mean[i] /= float64(len(rows))
	}
	cov := make([]float64, dim*dim)
	parallel(dim, 4, func(lo, hi int) {
		c := make([]float64, dim)
		for _, r := range rows {
			v := data[r*dim : (r+1)*dim]
			for i := range c {
				c[i] = float64(v[i]) - mean[i]
			}
			for i := lo; i < hi; i++ {
				ci, out := c[i], cov[i*dim:(i+1)*dim]
				for j := i; j < dim; j++ {
					out[j] += ci * c[j]
				}
			}
		}
	})
	for i := range dim {
		for j := i + 1; j < dim; j++ {
			cov[j*dim+i] = cov[i*dim+j]
		}
	}
	rng := rand.New(rand.NewPCG(layoutSeed, uint64(dim)))
	v := make([]float64, p*dim)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	orthonormalize(v, dim)
	w := make([]float64, p*dim)
	for range 40 {
		for a := range p {
			va, wa := v[a*dim:(a+1)*dim], w[a*dim:(a+1)*dim]
			for i := range dim {
				var s float64
				for j, x := range cov[i*dim : (i+1)*dim] {
					s += x * va[j]
				}
				wa[i] = s
			}
		}
		v, w = w, v
		orthonormalize(v, dim)
	}
	m32 := make([]float32, dim)
	for i, x := range mean {
		m32[i] = float32(x)
	}
	b32 := make([]float32, len(v))
	for i, x := range v {
		b32[i] = float32(x)
	}
	return m32, b32
}

// orthonormalize runs Gram-Schmidt over the rows of v (each of dim).
func orthonormalize(v []float64, dim int) {
	p := len(v) / dim
	for a := range p {
		va := v[a*dim : (a+1)*dim]
		for b := range a {
			vb := v[b*dim : (b+1)*dim]
			var d float64
			for i := range va {
				d += va[i] * vb[i]
			}
			for i := range va {
				va[i] -= d * vb[i]
			}
		}
		var s float64
		for _, x := range va {
			s += x * x
		}
		s = math.Sqrt(s)
		if s == 0 {
			s = 1
		}
		for i := range va {
			va[i] /= s
		}
	}
}
