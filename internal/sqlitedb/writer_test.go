package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// Write transactions get the one writer in the order they asked for it:
// database/sql hands a freed connection to a random waiter, so before the
// queue in Tx a write could be passed over by any number of later ones.
// WriterStats counts every transaction with its wait and hold.
func TestTxTakesTheWriterInOrder(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if _, err := db.W.Exec(`CREATE TABLE w (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	holding := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := db.Tx(ctx, func(*sql.Tx) error {
			close(holding)
			<-hold
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	})
	<-holding
	const waiters = 12
	var mu sync.Mutex
	var order []int
	for i := range waiters {
		wg.Go(func() {
			err := db.Tx(ctx, func(tx *sql.Tx) error {
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				_, err := tx.Exec(`INSERT INTO w VALUES (?)`, i)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
		time.Sleep(20 * time.Millisecond) // waiter i is queued before i+1 asks
	}
	close(hold)
	wg.Wait()
	want := make([]int, waiters)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(order, want) {
		t.Fatalf("writers ran in the order %v, want the order they asked in %v", order, want)
	}
	st := db.WriterStats()
	if st.Transactions != waiters+1 {
		t.Fatalf("WriterStats counted %d transactions, want %d", st.Transactions, waiters+1)
	}
	// The first held the writer while the others queued about 20 ms apart.
	if st.HoldMaxMs < 200 || st.WaitMaxMs < 200 || st.WaitP99Ms < st.WaitMaxMs {
		t.Fatalf("WriterStats %+v: want a hold and a wait of at least 200 ms, and the p99 bucket at or above the max wait", st)
	}
}

// A write that gives up waiting for the writer (its context ends) changes
// nothing and leaves the queue working for the next.
func TestTxGivesUpWaiting(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if _, err := db.W.Exec(`CREATE TABLE w (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	hold, holding := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Tx(ctx, func(*sql.Tx) error { close(holding); <-hold; return nil })
	}()
	<-holding
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	ran := false
	err := db.Tx(short, func(*sql.Tx) error { ran = true; return nil })
	if err == nil || ran || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a write past its deadline: ran %v, err %v; want it not run and the deadline named", ran, err)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := db.Tx(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(`INSERT INTO w VALUES (1)`); return err }); err != nil {
		t.Fatalf("a write after one gave up: %v", err)
	}
}

// Long reads take turns one a core by default (at least two), fewer than R
// has connections, so reads that take no turn still find one; Turns sets
// the number, at most Readers.
func TestTurnsDefaultToCores(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		opt  Options
		want int
	}{
		{Options{}, max(2, runtime.GOMAXPROCS(0))},
		{Options{Readers: 8, Turns: 3}, 3},
		{Options{Readers: 1, Turns: 3}, 1},
	} {
		db, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), c.opt)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if r := db.R.Stats().MaxOpenConnections; c.opt.Readers == 0 && r != max(4, 2*runtime.GOMAXPROCS(0)) {
			t.Errorf("default readers: %d connections", r)
		}
		for i := range c.want {
			if _, err := db.Turn(ctx); err != nil {
				t.Fatalf("%+v: turn %d: %v", c.opt, i+1, err)
			}
		}
		short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		if _, err := db.Turn(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%+v: turn %d of %d: %v, want it to wait", c.opt, c.want+1, c.want, err)
		}
		cancel()
	}
}
