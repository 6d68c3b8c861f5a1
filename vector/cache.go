package vector

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/framelake/framelake/errs"
)

// rowOverhead is the bytes per cached vector besides its components: its
// seq (8) and its entry in the seq→row map (about 24 in Go's swiss tables).
const rowOverhead = 32

// modelCache holds one model's in-memory copy once loaded.
type modelCache struct {
	mu      sync.RWMutex
	m       *matrix // nil until loaded
	loading bool
	tooBig  bool // did not fit the budget; searches use sqlite-vec
}

// matrix is a model's vectors as contiguous float32 rows (unit length for
// cosine, so cosine distance is 1 - dot), with the file seq of each row.
type matrix struct {
	dim    int
	cosine bool
	seqs   []int64
	data   []float32
	row    map[int64]int32
	seen   int64  // last embedding_change.seq reflected here
	quant  *quant // the rows quantized for searches (quant.go); nil in one-off copies
}

func (x *matrix) bytes() int64 {
	b := int64(cap(x.data))*4 + int64(len(x.seqs))*rowOverhead
	if x.quant != nil {
		b += x.quant.bytes()
	}
	return b
}

// put inserts or replaces seq's vector.
func (x *matrix) put(seq int64, v []float32) {
	i, ok := x.row[seq]
	if !ok {
		i = int32(len(x.seqs))
		x.row[seq] = i
		x.seqs = append(x.seqs, seq)
		x.data = append(x.data, v...)
	}
	dst := x.data[int(i)*x.dim : int(i+1)*x.dim]
	copy(dst, v)
	if x.cosine {
		normalize(dst)
	}
	if x.quant != nil {
		x.quant.set(int(i), dst)
	}
}

// putBlob is put for a sqlite-vec blob, decoding straight into the row.
func (x *matrix) putBlob(seq int64, b []byte) {
	i, ok := x.row[seq]
	if !ok {
		i = int32(len(x.seqs))
		x.row[seq] = i
		x.seqs = append(x.seqs, seq)
		x.data = slices.Grow(x.data, x.dim)[:len(x.data)+x.dim]
	}
	dst := x.data[int(i)*x.dim : int(i+1)*x.dim]
	for j := range dst {
		dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
	}
	if x.cosine {
		normalize(dst)
	}
	if x.quant != nil {
		x.quant.set(int(i), dst)
	}
}

// remove deletes seq's vector by moving the last row into its place.
func (x *matrix) remove(seq int64) {
	i, ok := x.row[seq]
	if !ok {
		return
	}
	last := int32(len(x.seqs) - 1)
	if i != last {
		moved := x.seqs[last]
		x.seqs[i] = moved
		x.row[moved] = i
		copy(x.data[int(i)*x.dim:int(i+1)*x.dim], x.data[int(last)*x.dim:])
		if x.quant != nil {
			x.quant.move(int(i), int(last))
		}
	}
	if x.quant != nil {
		x.quant.truncate(int(last))
	}
	delete(x.row, seq)
	x.seqs = x.seqs[:last]
	x.data = x.data[:int(last)*x.dim]
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return // rejected at insert; a zero row just never ranks first
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// cache returns the model's cache entry, or nil when none was made.
func (s *Store) cache(modelSeq int64) *modelCache {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caches[modelSeq]
}

// ready returns the model's in-memory copy brought up to date with the change
// log, or nil when there is none (yet): the caller then uses sqlite-vec. A
// missing copy starts loading in the background unless disabled.
func (s *Store) ready(ctx context.Context, m *model) (*modelCache, error) {
	if s.opt.CacheBytes < 0 {
		return nil, nil
	}
	s.mu.Lock()
	c := s.caches[m.seq]
	if c == nil {
		c = &modelCache{}
		s.caches[m.seq] = c
	}
	s.mu.Unlock()
	c.mu.RLock()
	loaded, busy := c.m != nil, c.loading || c.tooBig
	c.mu.RUnlock()
	if !loaded {
		if !busy && !s.opt.NoBackgroundLoad {
			s.loadAsync(m, c)
		}
		return nil, nil
	}
	ok, err := s.catchUp(ctx, m, c)
	if err != nil || !ok {
		return nil, err
	}
	return c, nil
}

// Warm loads model's in-memory copy now (a no-op when loaded) so that the
// first searches need not fall back to sqlite-vec; the appliance may call it
// at start. A model too big for Options.CacheBytes is a failed_precondition.
func (s *Store) Warm(ctx context.Context, modelName string) error {
	m, err := mustModel(ctx, s.db.R, modelName)
	if err != nil {
		return err
	}
	if s.opt.CacheBytes < 0 {
		return fmt.Errorf("vector: warm %q: in-memory copies are disabled", modelName)
	}
	s.mu.Lock()
	c := s.caches[m.seq]
	if c == nil {
		c = &modelCache{}
		s.caches[m.seq] = c
	}
	s.mu.Unlock()
	c.mu.Lock()
	if c.m != nil || c.loading {
		c.mu.Unlock()
		s.loads.Wait()
		_, err := s.catchUp(ctx, m, c)
		return err
	}
	c.loading, c.tooBig = true, false
	c.mu.Unlock()
	return s.load(ctx, m, c)
}

func (s *Store) loadAsync(m *model, c *modelCache) {
	c.mu.Lock()
	if c.m != nil || c.loading {
		c.mu.Unlock()
		return
	}
	c.loading = true
	c.mu.Unlock()
	s.loads.Add(1)
	go func() {
		defer s.loads.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.closed:
				cancel()
			case <-ctx.Done():
			}
		}()
		defer func() {
			if p := recover(); p != nil {
				c.mu.Lock()
				c.loading = false
				c.mu.Unlock()
			}
		}()
		_ = s.load(ctx, m, c) // a failed load leaves searches on sqlite-vec; the next one retries
	}()
}

var errTooBig = errors.New("in-memory copy exceeds the cache budget")

// load reads the model's vectors from one read snapshot, so the copy and
// its change-log position agree.
func (s *Store) load(ctx context.Context, m *model, c *modelCache) (err error) {
	x, err := s.readMatrix(ctx, m)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loading = false
	if err != nil {
		if errors.Is(err, errTooBig) {
			c.tooBig = true
			return errs.New(errs.FailedPrecondition, "model_name",
				"model %q does not fit the in-memory budget of %d bytes", m.name, s.opt.CacheBytes)
		}
		return fmt.Errorf("vector: load %q: %w", m.name, err)
	}
	c.m = x
	return nil
}

func (s *Store) readMatrix(ctx context.Context, m *model) (*matrix, error) {
	tx, err := s.db.R.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	x := &matrix{dim: m.dim, cosine: m.metric == Cosine, row: map[int64]int32{}, quant: newQuant(m.dim, 0)}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM embedding_change`).Scan(&x.seen); err != nil {
		return nil, err
	}
	// The row count sizes the arrays once (no doubling), and from the shadow
	// table it costs a b-tree count instead of a pass over the vectors.
	var n, reserved int64
	if tx.QueryRowContext(ctx, `SELECT count(*) FROM `+m.table+`_rowids`).Scan(&n) == nil && n > 0 {
		reserved = n * (int64(m.dim)*5 + rowOverhead + 16) // float32 and 7-bit copies
		x.quant = newQuant(m.dim, int(n))
		if !s.reserve(reserved) {
			return nil, errTooBig
		}
		x.seqs = make([]int64, 0, n)
		x.data = make([]float32, 0, n*int64(m.dim))
		x.row = make(map[int64]int32, n)
	}
	if err := s.scanInto(ctx, tx, m, x, &reserved); err != nil {
		s.release(reserved)
		return nil, err
	}
	s.adjust(reserved, x.bytes())
	return x, nil
}

func (s *Store) scanInto(ctx context.Context, tx *sql.Tx, m *model, x *matrix, reserved *int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, embedding FROM `+m.table)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var b sql.RawBytes // decoded before Next: no copy of each blob
		if err := rows.Scan(&seq, &b); err != nil {
			return err
		}
		if len(b) != 4*m.dim {
			return fmt.Errorf("vector of file %d has %d bytes, want %d", seq, len(b), 4*m.dim)
		}
		x.putBlob(seq, b)
		if b := x.bytes(); b > *reserved {
			if !s.reserve(b - *reserved) {
				return errTooBig
			}
			*reserved = b
		}
	}
	return rows.Err()
}

// reserve takes n bytes of the cache budget if they are free.
func (s *Store) reserve(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used+n > s.opt.CacheBytes {
		return false
	}
	s.used += n
	return true
}

func (s *Store) release(n int64) {
	s.mu.Lock()
	s.used -= n
	s.mu.Unlock()
}

// adjust replaces a reservation of old bytes by one of now bytes.
func (s *Store) adjust(old, now int64) {
	s.mu.Lock()
	s.used += now - old
	s.mu.Unlock()
}
