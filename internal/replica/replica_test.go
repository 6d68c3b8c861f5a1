package replica_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/replica"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/tests3"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tests3.StopShared()
	os.Exit(code)
}

// TestReplicateRestore replicates a database to a bucket of a real S3
// server and to a folder, closes it, and restores it whole, and as of a
// time between two batches of rows.
func TestReplicateRestore(t *testing.T) {
	srv := tests3.Shared(t)
	srv.SetEnv(t)
	for _, url := range []string{srv.Bucket(t, "db"), "file://" + t.TempDir() + "/replica"} {
		t.Run(strings.SplitN(url, ":", 2)[0], func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "framelake.db")
			db, err := sqlitedb.Open(ctx, path, sqlitedb.Options{NoAutoCheckpoint: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := replica.Start(ctx, path, url, replica.Options{})
			if err != nil {
				t.Fatal(err)
			}
			exec := func(q string) {
				if _, err := db.W.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			exec(`CREATE TABLE t (n INTEGER)`)
			exec(`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM s WHERE n < 1000) INSERT INTO t SELECT n FROM s`)
			waitReplicated(t, r)
			between := time.Now()
			time.Sleep(100 * time.Millisecond)
			exec(`WITH RECURSIVE s(n) AS (SELECT 1001 UNION ALL SELECT n+1 FROM s WHERE n < 2000) INSERT INTO t SELECT n FROM s`)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(ctx); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				at   time.Time
				want int
			}{{time.Time{}, 2000}, {between, 1000}} {
				out := filepath.Join(t.TempDir(), "restored.db")
				pos, err := replica.Restore(ctx, url, out, c.at, nil)
				if err != nil {
					t.Fatal(err)
				}
				if pos.TXID == 0 || !c.at.IsZero() && !pos.Time.Before(c.at) {
					t.Fatalf("restore at %v: position %+v", c.at, pos)
				}
				rdb, err := sqlitedb.Open(ctx, out, sqlitedb.Options{})
				if err != nil {
					t.Fatal(err)
				}
				var n int
				if err := rdb.R.QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != c.want {
					t.Fatalf("restore at %v: %d rows (%v), want %d", c.at, n, err, c.want)
				}
				rdb.Close()
			}
			if _, err := replica.Restore(ctx, url, filepath.Join(t.TempDir(), "x.db"), time.Now().Add(-time.Hour), nil); err == nil ||
				!strings.Contains(err.Error(), "holds no database as of") {
				t.Fatalf("restore before the first sync: %v", err)
			}
		})
	}
}

// waitReplicated waits until what Litestream read of the WAL is uploaded.
func waitReplicated(t *testing.T, r *replica.Replicator) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if local, up := r.Positions(); local > 0 && up == local {
			time.Sleep(300 * time.Millisecond) // past a sync that might have been reading
			if l2, u2 := r.Positions(); u2 == l2 {
				return
			}
		}
	}
	t.Fatal("the replica did not catch up in 30 s")
}
