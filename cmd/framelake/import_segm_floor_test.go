package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
)

// segmFloor is the least the polygons can add to BenchmarkImportCOCOSegm's
// box import on this machine: the importer CPU-seconds of the two things a
// polygon import must do that a box import does not, each done the
// cheapest way, with nothing checked and nothing else kept.
//   - read: one pass over the polygon file turning every number in it into
//     a float64, less the same pass over the box file.
//   - store: writing each polygon's segmentation text, as the file gives
//     it, into the annotation rows of a bare table with the lake's columns
//     and indexes, less writing the same rows without it, in the import's
//     transactions (2,560 rows) and statements (32 rows).
//
// Both imports keep the two cores busy, so this work adds to the wall time
// what it adds to the CPU time over the cores the box import keeps busy.
type segmFloor struct{ read, store float64 }

// measureSegmFloor measures segmFloor on the benchmark's two label files.
func measureSegmFloor(b *testing.B, boxes, polygons string) segmFloor {
	var f segmFloor
	var sink float64
	box, poly := readBench(b, boxes), readBench(b, polygons)
	f.read = cpuSeconds(func() { sink += scanNumbers(poly) }) - cpuSeconds(func() { sink += scanNumbers(box) })
	if sink == 0 {
		b.Fatal("no numbers read")
	}
	segs := segmentations(poly)
	if len(segs) != benchImages*boxesPerImage {
		b.Fatalf("%d segmentations in %s, want %d", len(segs), polygons, benchImages*boxesPerImage)
	}
	f.store = cpuSeconds(func() { storeRows(b, segs) }) - cpuSeconds(func() { storeRows(b, nil) })
	// This process held the files, over a gigabyte, and an import it starts
	// reports as its peak RSS this process's at the start (the child shares
	// its memory until it execs): freed, and the high-water mark reset, so
	// the next run's imports report their own.
	box, poly, segs = nil, nil, nil
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatal(err)
	}
	return f
}

func readBench(b *testing.B, dir string) []byte {
	data, err := os.ReadFile(filepath.Join(dir, "annotations", "instances_train.json"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// cpuSeconds is the process's CPU time that fn took.
func cpuSeconds(fn func()) float64 {
	at := func() float64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	t0 := at()
	fn()
	return at() - t0
}

// scanNumbers turns every run of digits with its decimal point in data into
// a float64 and sums them: a byte's work and a number's, no more.
func scanNumbers(data []byte) float64 {
	var sum float64
	var n, scale uint64
	frac, in := false, false
	for _, c := range data {
		switch d := uint64(c - '0'); {
		case d < 10:
			n, in = n*10+d, true
			if frac {
				scale *= 10
			}
		case c == '.':
			frac, scale = true, 1
		case in:
			v := float64(n)
			if frac {
				v /= float64(scale)
			}
			sum += v
			n, frac, in = 0, false, false
		default:
			frac = false
		}
	}
	return sum
}

// segmentations are the segmentation values of a COCO file, as text.
func segmentations(data []byte) [][]byte {
	var out [][]byte
	key := []byte(`"segmentation": `)
	for {
		i := bytes.Index(data, key)
		if i < 0 {
			return out
		}
		data = data[i+len(key):]
		end := bytes.Index(data, []byte("]]")) + 2
		out = append(out, data[:end])
		data = data[end:]
	}
}

// storeRows writes benchImages files' worth of annotation rows, ten a file,
// each with segs' text as its geometry (NULL without segs), into a new
// database in the import's transactions and statements.
func storeRows(b *testing.B, segs [][]byte) {
	ctx := context.Background()
	dir := b.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "floor.db"), sqlitedb.Options{MmapSize: 32 << 20, CheckpointPages: 10_000})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.W.ExecContext(ctx, floorSchema); err != nil {
		b.Fatal(err)
	}
	const rowsPerStatement, filesPerTx = 32, 256
	insert := "INSERT INTO annotation (id, file_seq, label, x, y, w, h, source, operation, created_at, updated_at, type, geometry, points) VALUES " +
		strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,'human','import:bench',?,?,?,?,?),", rowsPerStatement), ",")
	now := time.Now().UnixMilli()
	args := make([]any, 0, 12*rowsPerStatement)
	row := 0
	for file := 0; file < benchImages; file += filesPerTx {
		tx, err := db.W.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, insert)
		if err != nil {
			b.Fatal(err)
		}
		for ; row < min(file+filesPerTx, benchImages)*boxesPerImage; row++ {
			typ, geometry := "box", any(nil)
			if segs != nil {
				typ, geometry = "polygon", string(segs[row])
			}
			args = append(args, fmt.Sprintf("ann_%024d", row), row/boxesPerImage+1, fmt.Sprintf("class-%d", row%8),
				10.5, 20.5, 30.5, 40.5, now, now, typ, geometry, 30)
			if len(args) == cap(args) {
				if _, err := stmt.ExecContext(ctx, args...); err != nil {
					b.Fatal(err)
				}
				args = args[:0]
			}
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// floorSchema is the lake's annotation table and its indexes (lake's
// migrations 001, 005, 009 and 010), without the triggers and the file table,
// whose work does not depend on a row's geometry.
const floorSchema = `
CREATE TABLE annotation (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, file_seq INTEGER NOT NULL,
    frame INTEGER NOT NULL DEFAULT 0, label TEXT NOT NULL, x REAL NOT NULL, y REAL NOT NULL,
    w REAL NOT NULL, h REAL NOT NULL, confidence REAL, source TEXT NOT NULL, operation TEXT NOT NULL,
    attributes TEXT NOT NULL DEFAULT '{}', created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    area REAL, type TEXT NOT NULL DEFAULT 'box', geometry TEXT, points INTEGER, visible INTEGER
) STRICT;
CREATE INDEX annotation_file ON annotation (file_seq, label);
CREATE INDEX annotation_label ON annotation (label, file_seq);
CREATE INDEX annotation_source ON annotation (source, file_seq);
CREATE INDEX annotation_operation ON annotation (operation, file_seq);
CREATE INDEX annotation_operation_scores ON annotation (operation, source, file_seq, confidence);`
