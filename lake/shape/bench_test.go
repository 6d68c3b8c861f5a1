package shape

import (
	"math"
	"math/rand/v2"
	"testing"
)

// person is a 1080p mask the size of a standing person (about 300×700 px):
// a five-lobed outline (head, arms, legs) of 96 vertices, with jitter, at
// (cx, cy). Lobes give two set runs in many columns, about 1,000 runs in all.
func person(r *rand.Rand, cx, cy float64) RLE {
	const n = 96
	xy := make([]float64, 0, 2*n)
	for i := range n {
		a := 2 * math.Pi * float64(i) / n
		k := 1 + 0.35*math.Sin(5*a) + 0.05*r.Float64()
		xy = append(xy, cx+150*k*math.Cos(a), cy+350*k*math.Sin(a))
	}
	return FromRing(xy, 1080, 1920)
}

// BenchmarkMaskIoU compares overlapping pairs of person masks on one core,
// reporting pairs a second (issue 32: at least 200,000) and the masks'
// runs and stored bytes (at most 4 KB).
func BenchmarkMaskIoU(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	const pairs = 256
	ds, gs := make([]*Prepared, pairs), make([]*Prepared, pairs)
	runs, bytes := 0, 0
	for i := range pairs {
		cx, cy := 300+r.Float64()*1300, 400+r.Float64()*200
		g := person(r, cx, cy)
		ds[i] = Prepare(person(r, cx+r.Float64()*40-20, cy+r.Float64()*40-20))
		gs[i] = Prepare(g)
		runs += len(g.Counts)
		bytes += len(g.String())
	}
	b.ResetTimer()
	sum := 0.0
	for i := 0; i < b.N; i++ {
		for j := range pairs {
			sum += ds[j].IoU(gs[j], false)
		}
	}
	b.StopTimer()
	if sum <= 0 {
		b.Fatal("the pairs do not overlap")
	}
	b.ReportMetric(float64(b.N*pairs)/b.Elapsed().Seconds(), "pairs/s")
	b.ReportMetric(float64(runs)/pairs, "runs/mask")
	b.ReportMetric(float64(bytes)/pairs, "bytes/mask")
	b.ReportMetric(sum/float64(b.N*pairs), "mean-IoU")
}
