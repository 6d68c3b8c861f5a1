package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestStatementsPreparedOncePerConnection: a query or exec run again on a
// connection reuses its prepared statement (the writer's one connection
// prepares each text once), answers stay right when the same query runs
// again while its rows are open, and past the cache's size statements are
// let go and prepared again, still answering right.
func TestStatementsPreparedOncePerConnection(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	before := db.prepares.Load()
	for i := range 200 {
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
				return err
			}
			var n int
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE k <= ?`, i).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
	}
	// BEGIN and COMMIT are the driver's own; the insert and the count are
	// prepared once each on the one writer connection.
	if n := db.prepares.Load() - before; n != 2 {
		t.Errorf("200 transactions of the same two statements prepared %d statements, want 2", n)
	}

	// The same query while its rows are open: a statement of its own.
	conn, err := db.W.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const q = `SELECT k, v FROM t WHERE k < ? ORDER BY k`
	outer, err := conn.QueryContext(ctx, q, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var k int
		var v string
		if err := outer.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		var inner string
		if err := conn.QueryRowContext(ctx, q, k+1).Scan(new(int), &inner); err != nil {
			t.Fatal(err)
		}
		got = append(got, v+"/"+inner)
	}
	outer.Close()
	if fmt.Sprint(got) != "[v0/v0 v1/v0 v2/v0]" {
		t.Errorf("nested uses of one query answered %v", got)
	}
	conn.Close()

	// More distinct statements than the cache holds, then the first again.
	for i := range stmtCacheSize + 10 {
		var v string
		if err := db.W.QueryRowContext(ctx, fmt.Sprintf(`SELECT v FROM t WHERE k = ? -- %d`, i), i).Scan(&v); err != nil || v != fmt.Sprint("v", i) {
			t.Fatalf("statement %d: %q %v", i, v, err)
		}
	}
	var v string
	if err := db.W.QueryRowContext(ctx, `SELECT v FROM t WHERE k = ? -- 0`, 7).Scan(&v); err != nil || v != "v7" {
		t.Fatalf("an evicted statement again: %q %v", v, err)
	}
}

// TestExplicitPreparesReuseTheCache: a statement a write transaction
// prepares (tx.PrepareContext, as an upload's inserts are) is prepared once
// on the writer, not once a transaction; the same text as a plain exec
// while the prepared one is open gets a statement of its own; and both
// answer right.
func TestExplicitPreparesReuseTheCache(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const ins = `INSERT INTO t (k, v) VALUES (?, ?)`
	before := db.prepares.Load()
	for i := range 50 {
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			st, err := tx.PrepareContext(ctx, ins)
			if err != nil {
				return err
			}
			defer st.Close()
			if _, err := st.ExecContext(ctx, 2*i, "p"); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, ins, 2*i+1, "x") // the prepared one is open: its own
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The prepare's statement once; the plain exec's own, once a transaction.
	if n := db.prepares.Load() - before; n != 51 {
		t.Errorf("50 transactions preparing one insert prepared %d statements through the cache, want 51: the prepare once, kept, and each plain exec of the same text its own while the prepared one is open", n)
	}
	var n, p int
	if err := db.R.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE v = 'p' AND k % 2 = 0) FROM t`).Scan(&n, &p); err != nil || n != 100 || p != 50 {
		t.Fatalf("rows %d, prepared ones %d, %v; want 100 and 50", n, p, err)
	}
}
