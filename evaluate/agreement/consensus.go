package agreement

import (
	"maps"
	"slices"

	"github.com/framelake/framelake/lake/shape"
)

// Consensus merges a frame's annotations into one answer: a shape stays
// where more than half of the frame's annotators drew it (their shapes
// matched label by label as Measure matches them, each annotator's in turn
// against what the earlier ones drew), as the mean of their boxes, and for
// masks the pixels more than half of those annotators painted. The class is
// the one more than half gave, or none.
func Consensus(f Frame, opt Options) ([]Shape, string, error) {
	opt.defaults()
	if err := f.check(); err != nil {
		return nil, "", err
	}
	type cluster struct {
		label   string
		members []Shape
	}
	var clusters []cluster
	for _, a := range f.Annotators {
		var mine []Shape
		for _, s := range f.Shapes {
			if s.Annotator == a {
				mine = append(mine, s)
			}
		}
		byLabel := splitLabels(mine)
		// Labels in order, so the consensus lists its shapes in the same
		// order every run (a map's order is random).
		for _, label := range slices.Sorted(maps.Keys(byLabel)) {
			sides := byLabel[label]
			var reps []Shape // one representative a cluster of this label: its first member
			var idx []int
			for i, c := range clusters {
				if c.label == label {
					reps, idx = append(reps, c.members[0]), append(idx, i)
				}
			}
			matched := map[int]bool{}
			for _, m := range matchShapes(sides, reps, opt.IoU) {
				clusters[idx[m[1]]].members = append(clusters[idx[m[1]]].members, sides[m[0]])
				matched[m[0]] = true
			}
			for i, s := range sides {
				if !matched[i] {
					clusters = append(clusters, cluster{label: label, members: []Shape{s}})
				}
			}
		}
	}
	need := len(f.Annotators)/2 + 1
	var out []Shape
	for _, c := range clusters {
		if len(c.members) >= need {
			out = append(out, merge(c.label, c.members, need))
		}
	}
	return out, majorityClass(f, need), nil
}

func splitLabels(shapes []Shape) map[string][]Shape {
	out := map[string][]Shape{}
	for _, s := range shapes {
		out[s.Label] = append(out[s.Label], s)
	}
	return out
}

// merge is the mean box of members and, when every member has pixels, the
// pixels at least need of them painted.
func merge(label string, members []Shape, need int) Shape {
	out := Shape{Label: label}
	n := float64(len(members))
	masks := true
	for _, m := range members {
		out.Box.X += m.Box.X / n
		out.Box.Y += m.Box.Y / n
		out.Box.W += m.Box.W / n
		out.Box.H += m.Box.H / n
		masks = masks && m.Mask != nil
	}
	if !masks {
		return out
	}
	h, w := members[0].Mask.Height, members[0].Mask.Width
	votes := make([]int, h*w)
	for _, m := range members {
		for i, b := range m.Mask.Decode() {
			votes[i] += int(b)
		}
	}
	bits := make([]byte, len(votes))
	for i, v := range votes {
		if v >= need {
			bits[i] = 1
		}
	}
	r := shape.Encode(bits, h, w)
	out.Mask, out.Box = &r, r.Bounds()
	return out
}

func majorityClass(f Frame, need int) string {
	counts := map[string]int{}
	for _, a := range f.Annotators {
		if c := f.Classes[a]; c != "" {
			counts[c]++
		}
	}
	for c, n := range counts {
		if n >= need {
			return c
		}
	}
	return ""
}
