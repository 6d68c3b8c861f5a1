package labelnext

import (
	"context"

	"github.com/framelake/framelake/vector"
)

// copies remembers the copy keys (lake.CopyKeys) of the files chosen so far.
type copies map[string]bool

// take reports whether a file with these keys is a copy of one taken
// before, and takes its keys if not.
func (c copies) take(blob, group string) (dup bool) {
	if c[blob] || (group != "" && c["g:"+group]) {
		return true
	}
	c[blob] = true
	if group != "" {
		c["g:"+group] = true
	}
	return false
}

// topDistinct is the first budget of ranked (best first) that are no copy
// of one before them, and how many it skipped. It reads the files' keys a
// window at a time, so a budget far below the pool reads few.
func (s *Service) topDistinct(ctx context.Context, ranked []candidate, budget int) ([]candidate, int, error) {
	out := make([]candidate, 0, min(budget, len(ranked)))
	seen, skipped := copies{}, 0
	window := max(2*budget, 1000)
	for lo := 0; lo < len(ranked) && len(out) < budget; lo += window {
		part := ranked[lo:min(len(ranked), lo+window)]
		seqs := make([]int64, len(part))
		for i, c := range part {
			seqs[i] = c.seq
		}
		keys, err := s.lake.DuplicateKeys(ctx, seqs)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range part {
			if len(out) == budget {
				break
			}
			k, ok := keys[c.seq]
			if ok && seen.take(k.Blob, k.Group) {
				skipped++
				continue
			}
			out = append(out, c)
		}
	}
	return out, skipped, nil
}

// distinctRows keeps the first row (in x's order, lake order) of each set of
// copies in x, with its weight when weight is not nil, and counts the rows
// it dropped.
func (s *Service) distinctRows(ctx context.Context, x *vector.Matrix, weight []float64) (*vector.Matrix, []float64, int, error) {
	keys, err := s.lake.DuplicateKeys(ctx, x.Seqs)
	if err != nil {
		return nil, nil, 0, err
	}
	out := &vector.Matrix{Dim: x.Dim, Metric: x.Metric}
	var w []float64
	seen, skipped := copies{}, 0
	for i, seq := range x.Seqs {
		if k, ok := keys[seq]; ok && seen.take(k.Blob, k.Group) {
			skipped++
			continue
		}
		out.Seqs = append(out.Seqs, seq)
		out.Data = append(out.Data, x.Row(i)...)
		if weight != nil {
			w = append(w, weight[i])
		}
	}
	return out, w, skipped, nil
}
