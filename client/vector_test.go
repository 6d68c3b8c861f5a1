package client

import (
	"slices"
	"testing"
)

func TestNumberBatches(t *testing.T) {
	vecs := func(dims ...int) []Embedding {
		out := make([]Embedding, len(dims))
		for i, d := range dims {
			out[i] = Embedding{Embeddings: make([]float32, d)}
		}
		return out
	}
	cases := []struct {
		name  string
		list  []Embedding
		limit int
		sizes []int // records per batch
	}{
		{"empty list is one empty request", nil, 10, []int{0}},
		{"all fit", vecs(2, 2, 2, 2), 262144, []int{4}},
		{"exact fill", vecs(3, 3, 3, 3), 6, []int{2, 2}},
		{"one over", vecs(3, 3, 3, 3), 7, []int{2, 2}},
		{"a vector above the limit goes alone", vecs(2, 9, 2), 4, []int{1, 1, 1}},
		{"limit below every vector", vecs(2, 2, 2), 1, []int{1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sizes []int
			total := 0
			for _, b := range numberBatches(c.list, c.limit) {
				sizes = append(sizes, len(b))
				total += len(b)
			}
			if !slices.Equal(sizes, c.sizes) || total != len(c.list) {
				t.Errorf("batch sizes %v, want %v", sizes, c.sizes)
			}
		})
	}
}
