package evaluate

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkEngine10k is the metric engine alone (no SQLite) on 10,000 frames
// shaped like BenchmarkEvaluate1M's: 10 human and 20 predicted boxes each.
func BenchmarkEngine10k(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	frames := make([]frameBoxes, 10000)
	seq := int64(0)
	for i := range frames {
		for range 10 {
			seq++
			l := fmt.Sprintf("label%02d", r.IntN(10))
			x, y, w, h := r.Float64()*540, r.Float64()*380, 8+r.Float64()*150, 8+r.Float64()*150
			frames[i].gs = append(frames[i].gs, box{seq: seq, label: l, x: x, y: y, w: w, h: h})
			seq++
			frames[i].ds = append(frames[i].ds, box{seq: seq, label: l, x: x + 3, y: y - 2, w: w * 1.05, h: h, score: r.Float64()})
		}
		for range 10 {
			seq++
			frames[i].ds = append(frames[i].ds, box{seq: seq, label: fmt.Sprintf("label%02d", r.IntN(10)),
				x: r.Float64() * 540, y: r.Float64() * 380, w: 50, h: 50, score: r.Float64() * .6})
		}
	}
	for b.Loop() {
		e := newEvaluator(0.5, 0)
		var packed []byte
		for _, f := range frames {
			packed = packOutcomes(packed[:0], e.addFrame(append([]box(nil), f.gs...), append([]box(nil), f.ds...)))
		}
		e.result()
	}
}
