package main_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestCheckFindsAndRepairs damages a data folder each way check looks at
// and checks that it says so, exits non-zero, repairs only what is safe and
// repairs nothing while a server has the folder open.
func TestCheckFindsAndRepairs(t *testing.T) {
	data, media := t.TempDir(), t.TempDir()
	if err := testmedia.WriteJPEGs(media, 3, 64, 48); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "import", media, "--data", data, "--collection", "c"); err != nil {
		t.Fatalf("import: %v %s", err, out)
	}
	mustCheck(t, data)

	db, err := sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var blob, ext string
	if err := db.R.QueryRow(`SELECT blob, ext FROM file LIMIT 1`).Scan(&blob, &ext); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.Exec(`INSERT INTO job (id, type, status, attempts, created_at, updated_at)
		VALUES ('job_crashed', 'dataset.build', 'running', 1, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.Remove(filepath.Join(data, "media", blob[:2], blob[2:4], blob+"."+ext))
	orphan := "ab" + strings.Repeat("0", 62)
	os.MkdirAll(filepath.Join(data, "media", "ab", "00"), 0o755)
	os.WriteFile(filepath.Join(data, "media", "ab", "00", orphan+".png"), []byte("x"), 0o644)

	kinds := func(args ...string) map[string]int {
		out, err := run(t, append([]string{"check", "--data", data, "--json"}, args...)...)
		if err == nil {
			t.Fatalf("check of a damaged folder exited 0:\n%s", out)
		}
		var r struct {
			Problems []struct {
				Kind     string
				Repaired bool
			}
		}
		json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &r)
		got := map[string]int{}
		for _, p := range r.Problems {
			if !p.Repaired {
				got[p.Kind]++
			}
		}
		return got
	}
	want := map[string]int{"missing_blob": 1, "orphan_blob": 1, "job_interrupted": 1}
	if got := kinds(); !maps.Equal(got, want) {
		t.Fatalf("check found %v, want %v", got, want)
	}
	// With a server on the folder, nothing is repaired and its jobs are its own.
	s := startServer(t, data)
	if got := kinds("--repair"); !maps.Equal(got, map[string]int{"missing_blob": 1, "orphan_blob": 1}) {
		t.Fatalf("check --repair beside a server left %v", got)
	}
	if _, err := os.Stat(filepath.Join(data, "media", "ab", "00", orphan+".png")); err != nil {
		t.Fatal("check --repair removed a blob while a server ran")
	}
	s.stop(t)
	// The server's start resumed the job; crash it again for --repair.
	db, _ = sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	db.W.Exec(`UPDATE job SET status = 'running' WHERE id = 'job_crashed'`)
	db.Close()
	if got := kinds("--repair"); !maps.Equal(got, map[string]int{"missing_blob": 1}) {
		t.Fatalf("check --repair left %v; only the missing blob cannot be repaired", got)
	}
	if got := kinds(); !maps.Equal(got, map[string]int{"missing_blob": 1}) {
		t.Fatalf("after --repair check finds %v", got)
	}
}

// TestCheckBeforeFirstStartEnded: a kill during a folder's first start
// leaves a database without tables; check says so instead of failing.
func TestCheckBeforeFirstStartEnded(t *testing.T) {
	data := t.TempDir()
	db, err := sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, err := run(t, "check", "--data", data)
	if err != nil || !strings.Contains(out, "first start was interrupted") {
		t.Fatalf("check of a folder whose first start was killed: %v\n%s", err, out)
	}
}
