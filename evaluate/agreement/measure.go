package agreement

import (
	"slices"

	"github.com/framelake/framelake/internal/assign"
	"github.com/framelake/framelake/lake/shape"
)

// Measure computes the agreement of frames.
func Measure(frames []Frame, opt Options) (Result, error) {
	opt.defaults()
	res := Result{ByLabel: map[string]float64{}, Frames: make([]FrameResult, 0, len(frames)), Review: []string{}}
	type pooled struct{ pairs, shapes int }
	byLabel := map[string]*pooled{}
	var all pooled
	for _, f := range frames {
		if err := f.check(); err != nil {
			return Result{}, err
		}
		var sum float64
		n := 0
		for i, a := range f.Annotators {
			for _, b := range f.Annotators[i+1:] {
				pairs, shapes := 0, 0
				for label, sides := range byLabelOf(f.Shapes, a, b) {
					p := len(matchShapes(sides[0], sides[1], opt.IoU))
					pl := byLabel[label]
					if pl == nil {
						pl = &pooled{}
						byLabel[label] = pl
					}
					pl.pairs += p
					pl.shapes += len(sides[0]) + len(sides[1])
					pairs, shapes = pairs+p, shapes+len(sides[0])+len(sides[1])
				}
				all.pairs, all.shapes = all.pairs+pairs, all.shapes+shapes
				sum += f1(pairs, shapes)
				n++
			}
		}
		fr := FrameResult{Key: f.Key, F1: sum / float64(n)}
		res.Frames = append(res.Frames, fr)
		if fr.F1 < opt.Threshold {
			res.Review = append(res.Review, f.Key)
		}
	}
	res.F1 = f1(all.pairs, all.shapes)
	for label, p := range byLabel {
		res.ByLabel[label] = f1(p.pairs, p.shapes)
	}
	res.Kappa = kappaOf(frames)
	return res, nil
}

// f1 is 2·pairs / shapes, and 1 when neither side drew anything.
func f1(pairs, shapes int) float64 {
	if shapes == 0 {
		return 1
	}
	return 2 * float64(pairs) / float64(shapes)
}

// byLabelOf splits the shapes of annotators a and b by label.
func byLabelOf(shapes []Shape, a, b string) map[string][2][]Shape {
	out := map[string][2][]Shape{}
	for _, s := range shapes {
		side := -1
		switch s.Annotator {
		case a:
			side = 0
		case b:
			side = 1
		}
		if side < 0 {
			continue
		}
		v := out[s.Label]
		v[side] = append(v[side], s)
		out[s.Label] = v
	}
	return out
}

// matchShapes pairs a's and b's shapes at the highest total IoU, keeping
// pairs of IoU at least min: (index in a, index in b).
func matchShapes(a, b []Shape, min float64) [][2]int {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	iou := make([]float64, len(a)*len(b))
	cost := make([]float64, len(iou))
	for i := range a {
		for j := range b {
			v := IoU(a[i], b[j])
			iou[i*len(b)+j] = v
			if v >= min {
				cost[i*len(b)+j] = -v
			}
		}
	}
	rows, cols := assign.Solve(cost, len(a), len(b))
	var out [][2]int
	for k, i := range rows {
		if iou[i*len(b)+cols[k]] >= min {
			out = append(out, [2]int{i, cols[k]})
		}
	}
	slices.SortFunc(out, func(x, y [2]int) int { return x[0] - y[0] })
	return out
}

// IoU is two shapes' mask IoU when both have pixels, else their boxes'.
func IoU(a, b Shape) float64 {
	if a.Mask != nil && b.Mask != nil {
		return shape.IoU(*a.Mask, *b.Mask, false)
	}
	return shape.RectIoU(a.Box, b.Box, false)
}
