package labelnext

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/vector"
)

// embeddings makes n unit vectors of dim: Gaussian around clusters random
// centres (clusters 0: plain Gaussian, where distances concentrate and a
// new center rarely changes another row's distance).
func embeddings(n, dim, clusters int) *vector.Matrix {
	r := rand.New(rand.NewPCG(1, 2))
	centres := make([][]float64, clusters)
	for i := range centres {
		centres[i] = make([]float64, dim)
		for j := range centres[i] {
			centres[i][j] = r.NormFloat64() * 2
		}
	}
	x := &vector.Matrix{Dim: dim, Metric: vector.Cosine, Seqs: make([]int64, n), Data: make([]float32, n*dim)}
	for i := range n {
		x.Seqs[i] = int64(i + 1)
		row := x.Row(i)
		var s float64
		for j := range row {
			v := r.NormFloat64()
			if clusters > 0 {
				v += centres[i%clusters][j]
			}
			row[j] = float32(v)
			s += v * v
		}
		for j := range row {
			row[j] /= float32(math.Sqrt(s))
		}
	}
	return x
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKCenter1000Of100k picks 1,000 of 100,000 512-d embeddings by
// exact k-center greedy (issue 24: < 30 s on 2 cores), on Gaussian vectors
// and on vectors in 1,000 clusters. cpu-s is the process's CPU time per
// selection, which a shared machine's load does not inflate.
func BenchmarkKCenter1000Of100k(b *testing.B) {
	for _, c := range []struct {
		name     string
		clusters int
	}{{"gaussian", 0}, {"clustered", 1000}} {
		b.Run(c.name, func(b *testing.B) {
			x := embeddings(100_000, 512, c.clusters)
			cpu0 := cpuTime()
			for b.Loop() {
				rows, _, err := kCenter(context.Background(), x, 1000, 0, nil, runtime.GOMAXPROCS(0), func() {})
				if err != nil || len(rows) != 1000 {
					b.Fatalf("%d rows, %v", len(rows), err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/selection")
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/selection")
		})
	}
}
