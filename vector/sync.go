package vector

import (
	"context"

	"github.com/framelake/framelake/internal/sqlitedb"
)

// changes is what happened to a model after some change-log position.
type changes struct {
	newest int64               // last change-log seq in the snapshot
	pruned int64               // log rows up to here are gone
	put    map[int64][]float32 // file seq → current vector
	gone   []int64             // file seqs whose vector was deleted
}

// catchUp applies the change-log entries the copy has not seen. It returns
// false when the copy cannot be used for this search: it fell behind the
// pruned log (it is dropped and reloads in the background) or kept racing
// other writers.
func (s *Store) catchUp(ctx context.Context, m *model, c *modelCache) (bool, error) {
	for range 3 {
		c.mu.RLock()
		x := c.m
		var seen int64
		if x != nil {
			seen = x.seen
		}
		c.mu.RUnlock()
		if x == nil {
			return false, nil
		}
		ch, err := s.readChanges(ctx, m, seen)
		if err != nil {
			return false, err
		}
		if ch.newest == seen {
			return true, nil
		}
		if ch.pruned > seen {
			s.drop(c, x)
			return false, nil
		}
		c.mu.Lock()
		if c.m == x && x.seen == seen {
			before := x.bytes()
			for _, seq := range ch.gone {
				x.remove(seq)
			}
			for seq, v := range ch.put {
				x.put(seq, v)
			}
			x.seen = ch.newest
			now := x.bytes()
			c.mu.Unlock()
			return s.account(c, x, before, now), nil
		}
		c.mu.Unlock()
	}
	return false, nil
}

// readChanges reads, from one snapshot, the model's changes after seen and
// the current vectors of the files they touched.
func (s *Store) readChanges(ctx context.Context, m *model, seen int64) (*changes, error) {
	tx, err := s.db.R.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ch := &changes{put: map[int64][]float32{}}
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM embedding_change), pruned_through
		FROM embedding_state`).Scan(&ch.newest, &ch.pruned); err != nil {
		return nil, err
	}
	if ch.newest == seen || ch.pruned > seen {
		return ch, nil
	}
	touched, err := sqlitedb.Int64s(ctx, tx, `SELECT DISTINCT file_seq FROM embedding_change WHERE seq > ? AND model_seq = ?`,
		seen, m.seq)
	if err != nil || len(touched) == 0 {
		return ch, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT v.rowid, v.embedding FROM json_each(?) AS j
		CROSS JOIN `+m.table+` AS v ON v.rowid = j.value`, jsonInts(touched)) // probes, see writeVectors
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var b []byte
		if err := rows.Scan(&seq, &b); err != nil {
			return nil, err
		}
		ch.put[seq] = decode(b)
	}
	for _, seq := range touched {
		if _, ok := ch.put[seq]; !ok {
			ch.gone = append(ch.gone, seq)
		}
	}
	return ch, rows.Err()
}

// applyWrite puts this process's committed vectors, change-log seqs
// first..last, into the copy when nothing else changed before them;
// otherwise the next search catches up from the log.
func (s *Store) applyWrite(m *model, first, last int64, seqs []int64, recs []Record) {
	c := s.cache(m.seq)
	if c == nil {
		return
	}
	c.mu.Lock()
	x := c.m
	if x == nil || x.seen != first-1 {
		c.mu.Unlock()
		return
	}
	before := x.bytes()
	for i, seq := range seqs {
		x.put(seq, recs[i].Vector)
	}
	x.seen = last
	now := x.bytes()
	c.mu.Unlock()
	s.account(c, x, before, now)
}

// account charges the copy's growth to the budget, dropping the copy when it
// no longer fits; it reports whether the copy is still in use.
func (s *Store) account(c *modelCache, x *matrix, before, now int64) bool {
	if now <= before {
		s.adjust(before, now)
		return true
	}
	if s.reserve(now - before) {
		return true
	}
	s.release(before)
	c.mu.Lock()
	if c.m == x {
		c.m, c.tooBig = nil, true
	}
	c.mu.Unlock()
	return false
}

// drop discards a copy that can no longer catch up; it reloads in the
// background on a later search.
func (s *Store) drop(c *modelCache, x *matrix) {
	c.mu.Lock()
	if c.m != x {
		c.mu.Unlock()
		return
	}
	c.m = nil
	c.mu.Unlock()
	s.release(x.bytes())
}
