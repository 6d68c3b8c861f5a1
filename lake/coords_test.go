package lake_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/framelake/framelake/lake"
)

// TestRoundCoordKeepsSixDecimals: a coordinate written with at most six
// decimals (up to 1e9 px) is its own rounding, so imports and exports of
// such coordinates stay exact; arithmetic noise is taken off (issue 31
// item 9).
func TestRoundCoordKeepsSixDecimals(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		k := r.Int64N(2e15) - 1e15 // up to ±1e9 px in millionths
		s := strconv.FormatFloat(float64(k)/1e6, 'f', 6, 64)
		v, _ := strconv.ParseFloat(s, 64)
		if got := lake.RoundCoord(v); got != v {
			t.Fatalf("RoundCoord(%s) = %v, want it unchanged", s, got)
		}
	}
	for in, want := range map[float64]float64{223.00000000000006: 223, 0.1 + 0.2: 0.3, 99.99999999: 100, -3.0000004: -3,
		12.3456785: 12.345679} {
		if got := lake.RoundCoord(in); got != want {
			t.Errorf("RoundCoord(%v) = %v, want %v", in, got, want)
		}
	}
}

// TestBoxCoordinatesRounded: boxes are stored and read back rounded to
// 1e-6 px; a box given with six decimals reads back exactly.
func TestBoxCoordinatesRounded(t *testing.T) {
	l, _ := openLake(t)
	ctx := context.Background()
	res, err := l.Add(ctx, lake.AddOptions{}, []lake.Upload{mem("a.jpg", jpegBytes(t, 640, 480, 1))})
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("add: %+v %v", res, err)
	}
	f := res.Stored[0]
	if _, err := l.SetHumanBoxes(ctx, "import:x", []lake.FileBoxes{{UniqueName: f.UniqueName, Boxes: []lake.Box{
		{Label: "noisy", X: 223.00000000000006, Y: 0.1 + 0.2, W: 10.000000000000002, H: 3 * 1.1},
		{Label: "exact", X: 12.345678, Y: 0.000001, W: 100.5, H: 479.999999},
	}}}); err != nil {
		t.Fatal(err)
	}
	boxes, err := l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}})
	if err != nil || len(boxes) != 2 {
		t.Fatalf("boxes: %v %v", boxes, err)
	}
	got := map[string][4]float64{}
	for _, b := range boxes {
		got[b.Label] = [4]float64{b.X, b.Y, b.W, b.H}
	}
	if got["noisy"] != [4]float64{223, 0.3, 10, 3.3} || got["exact"] != [4]float64{12.345678, 0.000001, 100.5, 479.999999} {
		t.Errorf("read back %v", got)
	}
	// Rows written before rounding (or by hand) are answered rounded too.
	if _, err := l.DB().W.ExecContext(ctx, `UPDATE annotation SET x = 223.00000000000006 WHERE label = 'exact'`); err != nil {
		t.Fatal(err)
	}
	boxes, _ = l.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{f.Seq()}})
	for _, b := range boxes {
		if b.Label == "exact" && b.X != 223 {
			t.Errorf("a stored 223.00000000000006 reads %v", b.X)
		}
	}
}
