package vector

import (
	"math"
	"math/rand/v2"
)

// kmeans returns k centroids (k rows of p) of the sampled rows of z: seeded
// k-means++ seeding, then kmeansIters Lloyd steps.
func kmeans(rng *rand.Rand, z []float64, p int, rows []int, k, workers int) []float64 {
	k = min(k, len(rows))
	c := make([]float64, 0, k*p)
	c = append(c, z[rows[rng.IntN(len(rows))]*p:][:p]...)
	d := make([]float64, len(rows))
	for i := range d {
		d[i] = math.Inf(1)
	}
	for len(c) < k*p {
		last := c[len(c)-p:]
		var sum float64
		for i, r := range rows {
			d[i] = min(d[i], sqdist64(z[r*p:(r+1)*p], last))
			sum += d[i]
		}
		pick := rng.IntN(len(rows))
		if sum > 0 {
			t := rng.Float64() * sum
			for i, x := range d {
				if t -= x; t <= 0 {
					pick = i
					break
				}
			}
		}
		c = append(c, z[rows[pick]*p:][:p]...)
	}
	assign := make([]int, len(rows))
	for range kmeansIters {
		parallel(len(rows), workers, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				assign[i] = nearest(z[rows[i]*p:(rows[i]+1)*p], c, p)
			}
		})
		sums, counts := make([]float64, k*p), make([]int, k)
		for i, r := range rows {
			a := assign[i]
			counts[a]++
			for j, x := range z[r*p : (r+1)*p] {
				sums[a*p+j] += x
			}
		}
		for a := range k {
			if counts[a] == 0 {
				continue // keeps its place: an empty cluster is harmless here
			}
			for j := range p {
				c[a*p+j] = sums[a*p+j] / float64(counts[a])
			}
		}
	}
	return c
}

func nearest(v, c []float64, p int) int {
	best, at := math.Inf(1), 0
	for a := 0; a*p < len(c); a++ {
		if d := sqdist64(v, c[a*p:(a+1)*p]); d < best {
			best, at = d, a
		}
	}
	return at
}

func sqdist64(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		d := x - b[i]
		s += d * d
	}
	return s
}

// tsne lays out the k rows of x (each of p) in 2D with exact t-SNE, from
// start when given, else from their first two coordinates (the principal
// ones), so it is deterministic.
func tsne(x []float64, p int, start [][2]float64) [][2]float64 {
	k := len(x) / p
	y := make([][2]float64, k)
	for i := range k {
		y[i][0] = x[i*p]
		if p > 1 {
			y[i][1] = x[i*p+1]
		}
	}
	if len(start) == k {
		copy(y, start)
	}
	if k < 5 {
		return y
	}
	P := affinities(x, p, min(30, float64(k-1)/3))
	// PCA start scaled to a small spread, as t-SNE's gradient expects.
	var sd float64
	for _, v := range y {
		sd += v[0]*v[0] + v[1]*v[1]
	}
	sd = math.Sqrt(sd / float64(k))
	if sd == 0 {
		sd = 1
	}
	for i := range y {
		y[i][0] *= 1e-2 / sd
		y[i][1] *= 1e-2 / sd
	}
	vel := make([][2]float64, k)
	gain := make([][2]float64, k)
	for i := range gain {
		gain[i] = [2]float64{1, 1}
	}
	lr := max(float64(k)/12, 50)
	q := make([]float64, k*k)
	grad := make([][2]float64, k)
	for it := range tsneIters {
		exag, mom := 1.0, 0.8
		if it < 250 {
			exag, mom = 12, 0.5
		}
		var qsum float64
		for i := range k {
			for j := i + 1; j < k; j++ {
				dx, dy := y[i][0]-y[j][0], y[i][1]-y[j][1]
				v := 1 / (1 + dx*dx + dy*dy)
				q[i*k+j], q[j*k+i] = v, v
				qsum += 2 * v
			}
		}
		for i := range k {
			var gx, gy float64
			for j := range k {
				if i == j {
					continue
				}
				w := q[i*k+j]
				f := (exag*P[i*k+j] - w/qsum) * w
				gx += f * (y[i][0] - y[j][0])
				gy += f * (y[i][1] - y[j][1])
			}
			grad[i] = [2]float64{4 * gx, 4 * gy}
		}
		for i := range k {
			for d := range 2 {
				if (grad[i][d] > 0) != (vel[i][d] > 0) {
					gain[i][d] += 0.2
				} else {
					gain[i][d] = max(0.01, gain[i][d]*0.8)
				}
				vel[i][d] = mom*vel[i][d] - lr*gain[i][d]*grad[i][d]
				y[i][d] += vel[i][d]
			}
		}
	}
	return y
}

// affinities are t-SNE's symmetric input probabilities: a Gaussian around
// each row whose width gives the wanted perplexity.
func affinities(x []float64, p int, perplexity float64) []float64 {
	k := len(x) / p
	P := make([]float64, k*k)
	want := math.Log(perplexity)
	row := make([]float64, k)
	for i := range k {
		d := make([]float64, k)
		for j := range k {
			d[j] = sqdist64(x[i*p:(i+1)*p], x[j*p:(j+1)*p])
		}
		lo, hi, beta := 0.0, math.Inf(1), 1.0
		var dmin float64 = math.Inf(1)
		for j, v := range d {
			if j != i {
				dmin = min(dmin, v)
			}
		}
		for range 60 {
			var sum, h float64
			for j := range k {
				row[j] = 0
				if j != i {
					row[j] = math.Exp(-(d[j] - dmin) * beta)
					sum += row[j]
				}
			}
			for j := range k {
				if j != i && sum > 0 {
					row[j] /= sum
					if row[j] > 1e-300 {
						h -= row[j] * math.Log(row[j])
					}
				}
			}
			if math.Abs(h-want) < 1e-4 {
				break
			}
			if h > want {
				lo = beta
				if math.IsInf(hi, 1) {
					beta *= 2
				} else {
					beta = (beta + hi) / 2
				}
			} else {
				hi = beta
				beta = (beta + lo) / 2
			}
		}
		copy(P[i*k:(i+1)*k], row)
	}
	for i := range k {
		for j := i + 1; j < k; j++ {
			v := max((P[i*k+j]+P[j*k+i])/(2*float64(k)), 1e-12)
			P[i*k+j], P[j*k+i] = v, v
		}
	}
	return P
}
