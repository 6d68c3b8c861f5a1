package lake_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

// BenchmarkInsertImportBoxes stores 2,000 new 64x48 files in batches of 100,
// each with 10 boxes (or 10 polygons of 30 vertices) made ready as the file
// is measured (PrepareImportBoxes) and inserted by InsertImportBoxesTx in
// the transaction that stores them, as an import does, and reports the
// thread CPU of each per box: the insert is the part of an import's one
// writer that its boxes cost (issue 32's import figure; migration 015).
// Thread CPU, not wall time: the machine is shared.
func BenchmarkInsertImportBoxes(b *testing.B) {
	for _, kind := range []string{"boxes", "polygons"} {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				benchInsertImportBoxes(b, kind == "polygons")
			}
		})
	}
}

func benchInsertImportBoxes(b *testing.B, polygons bool) {
	ctx := context.Background()
	l, _ := openLake(b)
	base := jpegBytes(b, 64, 48, 7)
	shapes := func(f lake.File) []lake.Box {
		out := make([]lake.Box, 10)
		for j := range out {
			x, y := float64(j*5), float64(j*3)
			out[j] = lake.Box{Label: fmt.Sprint("class-", j%8), X: x, Y: y, W: 12, H: 10}
			if polygons {
				ring := make([]float64, 0, 60)
				for v := range 30 {
					a := 2 * math.Pi * float64(v) / 30
					ring = append(ring, math.Round((x+6+5*math.Cos(a))*100)/100, math.Round((y+5+4*math.Sin(a))*100)/100)
				}
				out[j].Geometry = shape.Geometry{Type: shape.Polygon, Polygon: [][]float64{ring}}
			}
		}
		return out
	}
	var cpu, prep time.Duration
	boxes, n := 0, 0
	for range 20 {
		ups := make([]lake.Upload, 100)
		for i := range ups {
			img := append([]byte{0xFF, 0xD8, 0xFF, 0xFE, 0, 6, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, base[2:]...)
			ups[i] = mem(fmt.Sprintf("f%d.jpg", n), img)
			n++
		}
		// As the import does: each file's boxes made ready as it is
		// measured (Check), the transaction inserting them.
		ready := map[string]*lake.ImportBoxes{}
		check := func(i int, f lake.File) error {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0 := threadCPU()
			ib, err := lake.PrepareImportBoxes(i, f, shapes(f))
			prep += threadCPU() - t0
			ready[f.Name] = ib
			return err
		}
		_, err := l.Add(ctx, lake.AddOptions{Collection: "bench", Check: check, InTx: func(ctx context.Context, tx *sql.Tx, stored []lake.File) error {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0 := threadCPU()
			res, err := lake.InsertImportBoxesTx(ctx, tx, "import:bench", stored, func(f lake.File) (*lake.ImportBoxes, error) {
				return ready[f.Name], nil
			})
			cpu += threadCPU() - t0
			boxes += 10 * res.Changed
			return err
		}}, ups)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(boxes), "tx-cpu-µs/box")
	b.ReportMetric(float64(prep.Microseconds())/float64(boxes), "prepare-cpu-µs/box")
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
