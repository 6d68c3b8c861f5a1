package vector

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
)

// Matrix is the vectors of a set of files under one model, for analyses that
// work on all of them at once (sample selection, uniqueness): row i
// (Data[i*Dim:(i+1)*Dim]) is the vector of file seq Seqs[i], seqs ascending.
// Rows of a cosine model are unit length, so cosine distance is 1 - dot and
// Euclidean distance sqrt(2 - 2 dot) orders them the same way.
type Matrix struct {
	Dim    int
	Metric string
	Seqs   []int64
	Data   []float32
}

// Row returns row i.
func (x *Matrix) Row(i int) []float32 { return x.Data[i*x.Dim : (i+1)*x.Dim] }

// Len is the number of rows.
func (x *Matrix) Len() int { return len(x.Seqs) }

// Vectors returns the vectors under model of the files f allows (all files
// with one when f is nil). It copies them from the model's in-memory copy
// when that is loaded, else reads sqlite-vec. An unknown model is not_found.
func (s *Store) Vectors(ctx context.Context, modelName string, f *Filter) (*Matrix, error) {
	m, err := mustModel(ctx, s.db.R, modelName)
	if err != nil {
		return nil, err
	}
	var allow bitset
	if f.active() {
		seqs, err := s.allowed(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("vector: vectors: %w", err)
		}
		allow = newBitset(seqs)
	}
	out := &Matrix{Dim: m.dim, Metric: m.metric}
	c, err := s.ready(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("vector: vectors: %w", err)
	}
	if c != nil && copyLoaded(c, allow, out) {
		return out, nil
	}
	if err := s.readVectors(ctx, m, allow, out); err != nil {
		return nil, fmt.Errorf("vector: vectors: %w", err)
	}
	return out, nil
}

// copyLoaded fills out from a loaded copy; false when the copy was dropped
// meanwhile.
func copyLoaded(c *modelCache, allow bitset, out *Matrix) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.m == nil {
		return false
	}
	copyRows(c.m, allow, out)
	return true
}

// copyRows fills out with the rows of x that allow has (all when nil), in
// seq order.
func copyRows(x *matrix, allow bitset, out *Matrix) {
	rows := make([]int, 0, len(x.seqs))
	for i, seq := range x.seqs {
		if allow == nil || allow.has(seq) {
			rows = append(rows, i)
		}
	}
	sort.Slice(rows, func(a, b int) bool { return x.seqs[rows[a]] < x.seqs[rows[b]] })
	out.Seqs = make([]int64, len(rows))
	out.Data = make([]float32, len(rows)*x.dim)
	for j, i := range rows {
		out.Seqs[j] = x.seqs[i]
		copy(out.Data[j*x.dim:(j+1)*x.dim], x.data[i*x.dim:(i+1)*x.dim])
	}
}

// readVectors scans the model's vec0 table (rowid order) keeping the rows
// allow has.
func (s *Store) readVectors(ctx context.Context, m *model, allow bitset, out *Matrix) error {
	x := &matrix{dim: m.dim, cosine: m.metric == Cosine, row: map[int64]int32{}}
	rows, err := s.db.R.QueryContext(ctx, `SELECT rowid, embedding FROM `+m.table+` ORDER BY rowid`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var b sql.RawBytes
		if err := rows.Scan(&seq, &b); err != nil {
			return err
		}
		if allow != nil && !allow.has(seq) {
			continue
		}
		if len(b) != 4*m.dim {
			return fmt.Errorf("vector of file %d has %d bytes, want %d", seq, len(b), 4*m.dim)
		}
		x.putBlob(seq, b)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	out.Seqs, out.Data = x.seqs, x.data
	if !slices.IsSorted(out.Seqs) { // vec0 returns rowid order today; do not rely on it
		copyRows(x, nil, out)
	}
	return nil
}

// Dot is the inner product of two vectors of one length, with the unrolled
// loop searches use.
func Dot(a, b []float32) float32 { return dot(a, b) }

// SquaredDistance is the squared Euclidean distance of two vectors of one length.
func SquaredDistance(a, b []float32) float32 { return sqdist(a, b) }
