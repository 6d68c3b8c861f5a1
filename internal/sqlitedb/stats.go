package sqlitedb

import (
	"sync"
	"time"
)

// WriterStats tells how write transactions (Tx) used the one writer since
// Open: how long they waited for it and how long they held it, so a load
// test can tell a queue for the writer from slow transactions.
type WriterStats struct {
	Transactions int64   `json:"transactions"`
	WaitTotalMs  float64 `json:"waitTotalMs"`
	WaitMaxMs    float64 `json:"waitMaxMs"`
	HoldTotalMs  float64 `json:"holdTotalMs"`
	HoldMaxMs    float64 `json:"holdMaxMs"`
	// WaitP99Ms and HoldP99Ms are read from power-of-two buckets (0.25 ms,
	// 0.5 ms, ... up to 64 s): the upper bound of the bucket the 99th
	// percentile falls in.
	WaitP99Ms float64 `json:"waitP99Ms"`
	HoldP99Ms float64 `json:"holdP99Ms"`
}

const statBuckets = 19 // 0.25 ms << 18 = 65.5 s

type writerStats struct {
	mu         sync.Mutex
	n          int64
	wait, hold time.Duration
	waitMax    time.Duration
	holdMax    time.Duration
	waitB      [statBuckets]int64
	holdB      [statBuckets]int64
}

func bucket(d time.Duration) int {
	b, top := 0, 250*time.Microsecond
	for d > top && b < statBuckets-1 {
		b, top = b+1, top*2
	}
	return b
}

func (s *writerStats) add(wait, hold time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.wait += wait
	s.hold += hold
	s.waitMax = max(s.waitMax, wait)
	s.holdMax = max(s.holdMax, hold)
	s.waitB[bucket(wait)]++
	s.holdB[bucket(hold)]++
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// p99 is the upper bound of the bucket holding the 99th percentile of n.
func p99(b *[statBuckets]int64, n int64) float64 {
	want, seen := n-n/100, int64(0)
	top := 250 * time.Microsecond
	for i := range b {
		seen += b[i]
		if seen >= want {
			return ms(top)
		}
		top *= 2
	}
	return ms(top)
}

// WriterStats returns the writer's use since Open.
func (db *DB) WriterStats() WriterStats {
	s := &db.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	st := WriterStats{Transactions: s.n, WaitTotalMs: ms(s.wait), WaitMaxMs: ms(s.waitMax),
		HoldTotalMs: ms(s.hold), HoldMaxMs: ms(s.holdMax)}
	if s.n > 0 {
		st.WaitP99Ms, st.HoldP99Ms = p99(&s.waitB, s.n), p99(&s.holdB, s.n)
	}
	return st
}
