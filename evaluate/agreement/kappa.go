package agreement

import (
	"maps"
	"slices"
)

// kappaOf is Cohen's kappa when every classed frame has the same two
// raters, else Fleiss' kappa over the frames with the most common number
// of raters; nil when no frame has classes. ByLabel is the same kappa of
// each class one against the rest (perLabel).
func kappaOf(frames []Frame) *Kappa {
	var classed []Frame
	for _, f := range frames {
		if len(f.Classes) > 0 {
			classed = append(classed, f)
		}
	}
	if len(classed) == 0 {
		return nil
	}
	if same, a, b := sameTwo(classed); same {
		rows := make([][]string, len(classed))
		for i, f := range classed {
			rows[i] = []string{f.Classes[a], f.Classes[b]} // "": no class, a category of its own
		}
		return &Kappa{Kind: "cohen", Value: cohenRows(rows), Frames: len(classed), ByLabel: perLabel(rows, cohenRows)}
	}
	counts := map[int]int{}
	for _, f := range classed {
		counts[len(f.Annotators)]++
	}
	n := 0
	for raters, c := range counts {
		if c > counts[n] || (c == counts[n] && raters > n) {
			n = raters
		}
	}
	var rows [][]string
	for _, f := range classed {
		if len(f.Annotators) != n {
			continue
		}
		row := make([]string, 0, n)
		for _, a := range f.Annotators {
			row = append(row, f.Classes[a])
		}
		rows = append(rows, row)
	}
	return &Kappa{Kind: "fleiss", Value: Fleiss(rows), Frames: len(rows), Skipped: len(classed) - len(rows),
		ByLabel: perLabel(rows, Fleiss)}
}

// perLabel is the per-category kappa: for each class given, the same kappa
// over the same ratings recoded as that class or not (one against the
// rest). "No class" is no label of its own here, only one of the rest.
func perLabel(rows [][]string, kappa func([][]string) float64) map[string]float64 {
	labels := map[string]bool{}
	for _, r := range rows {
		for _, c := range r {
			if c != "" {
				labels[c] = true
			}
		}
	}
	out := make(map[string]float64, len(labels))
	for label := range labels {
		bin := make([][]string, len(rows))
		for i, r := range rows {
			bin[i] = make([]string, len(r))
			for j, c := range r {
				if c == label {
					bin[i][j] = "1"
				}
			}
		}
		out[label] = kappa(bin)
	}
	return out
}

// cohenRows is Cohen's kappa of rows of two ratings (the first rater's,
// the second's).
func cohenRows(rows [][]string) float64 {
	a, b := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		a[i], b[i] = r[0], r[1]
	}
	return Cohen(a, b)
}

func sameTwo(frames []Frame) (bool, string, string) {
	first := frames[0].Annotators
	if len(first) != 2 {
		return false, "", ""
	}
	for _, f := range frames {
		if len(f.Annotators) != 2 || !(f.Annotators[0] == first[0] && f.Annotators[1] == first[1] ||
			f.Annotators[0] == first[1] && f.Annotators[1] == first[0]) {
			return false, "", ""
		}
	}
	return true, first[0], first[1]
}

// Cohen is Cohen's kappa of two raters' categories of the same items:
// (p_o - p_e) / (1 - p_e), p_o the share they agree on, p_e the chance
// agreement of their category frequencies; 1 when p_e is 1 and they agree.
func Cohen(a, b []string) float64 {
	n := float64(len(a))
	if n == 0 {
		return 0
	}
	fa, fb := map[string]float64{}, map[string]float64{}
	agree := 0.0
	for i := range a {
		fa[a[i]]++
		fb[b[i]]++
		if a[i] == b[i] {
			agree++
		}
	}
	po, pe := agree/n, 0.0
	for _, c := range slices.Sorted(maps.Keys(fa)) {
		pe += fa[c] / n * fb[c] / n
	}
	if pe == 1 {
		return 1
	}
	return (po - pe) / (1 - pe)
}

// Fleiss is Fleiss' kappa: each row is one item's categories from its n
// raters (every row the same n, who may be other people on each item).
func Fleiss(rows [][]string) float64 {
	if len(rows) == 0 || len(rows[0]) < 2 {
		return 0
	}
	n := float64(len(rows[0]))
	total := map[string]float64{}
	var pBar float64
	for _, r := range rows {
		counts := map[string]float64{}
		for _, c := range r {
			counts[c]++
			total[c]++
		}
		var sq float64
		for _, v := range counts {
			sq += v * v
		}
		pBar += (sq - n) / (n * (n - 1))
	}
	N := float64(len(rows))
	pBar /= N
	var pe float64
	for _, c := range slices.Sorted(maps.Keys(total)) {
		p := total[c] / (N * n)
		pe += p * p
	}
	if pe == 1 {
		return 1
	}
	return (pBar - pe) / (1 - pe)
}
