package labelnext

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

// Hand-computed: entropy(0.9) = -(0.9 ln 0.9 + 0.1 ln 0.1)/ln 2 = 0.46900;
// entropy(0.3) = -(0.3 ln 0.3 + 0.7 ln 0.7)/ln 2 = 0.88129.
func TestBoxUncertainty(t *testing.T) {
	for _, c := range []struct {
		p                  float64
		least, margin, ent float64
	}{
		{0.9, 0.1, 0.2, 0.46900},
		{0.5, 0.5, 1, 1},
		{1, 0, 0, 0},
		{0.3, 0.7, 0.6, 0.88129},
		{0, 1, 0, 0},
	} {
		for measure, want := range map[string]float64{LeastConfidence: c.least, Margin: c.margin, Entropy: c.ent} {
			if got := BoxUncertainty(measure, c.p); !near(got, want) {
				t.Errorf("%s(%v) = %v, want %v", measure, c.p, got, want)
			}
		}
	}
}

// A file with boxes of confidence 0.95, 0.6 and 0.3 is as uncertain as its
// most uncertain box: least confidence 1 - 0.3; margin and entropy from 0.6,
// the confidence nearest 0.5 (margin 1 - |1.2 - 1| = 0.8, entropy(0.6) =
// entropy(0.4) = 0.97095).
func TestFileUncertaintyIsItsMostUncertainBox(t *testing.T) {
	confs := []float64{0.95, 0.6, 0.3}
	c := lake.FileConfidence{Seq: 1, Boxes: 3, MinConf: 0.3, MinGap: 0.1}
	for measure, want := range map[string]float64{LeastConfidence: 0.7, Margin: 0.8, Entropy: 0.97095} {
		got := fileUncertainty(measure, c)
		brute := 0.0
		for _, p := range confs {
			brute = max(brute, BoxUncertainty(measure, p))
		}
		if !near(got, want) || !near(brute, want) {
			t.Errorf("%s: file %v, max over boxes %v, want %v", measure, got, brute, want)
		}
	}
}

func TestRankTopBreaksTiesBySeed(t *testing.T) {
	mk := func(seed int64) []int64 {
		var cands []candidate
		for seq := int64(1); seq <= 20; seq++ {
			cands = append(cands, candidate{seq: seq, score: float64(seq % 2), tie: tieBreak(seed, seq)})
		}
		var out []int64
		for _, c := range rankTop(cands, 5) {
			out = append(out, c.seq)
		}
		return out
	}
	a, b, c := mk(1), mk(1), mk(2)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different order: %v %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 broke the ties alike: %v", a)
	}
	for _, seq := range a {
		if seq%2 != 1 {
			t.Errorf("picked %d (score 0) before the score-1 files: %v", seq, a)
		}
	}
}

// matrix makes an l2 or cosine matrix from rows; cosine rows are normalised
// as the vector store returns them.
func matrix(metric string, rows ...[]float32) *vector.Matrix {
	x := &vector.Matrix{Dim: len(rows[0]), Metric: metric}
	for i, r := range rows {
		r = slices.Clone(r)
		if metric == vector.Cosine {
			var s float64
			for _, v := range r {
				s += float64(v * v)
			}
			for j := range r {
				r[j] /= float32(math.Sqrt(s))
			}
		}
		x.Seqs = append(x.Seqs, int64(i+1))
		x.Data = append(x.Data, r...)
	}
	return x
}

func TestKCenterHandCases(t *testing.T) {
	ctx := context.Background()
	line := matrix(vector.L2, []float32{0, 0}, []float32{1, 0}, []float32{2, 0}, []float32{10, 0}, []float32{6, 0})
	for _, c := range []struct {
		name   string
		x      *vector.Matrix
		budget int
		first  int
		weight []float64
		want   []int
		scores []float64
	}{
		// From 0 the farthest is 10; then 6 (4 from 10, 6 from 0 -> 4), then 2
		// (2 from 0, 4 from 6 -> 2), then 1.
		{"farthest first", line, 5, 0, nil, []int{0, 3, 4, 2, 1}, []float64{0, 10, 4, 2, 1}},
		{"budget", line, 2, 2, nil, []int{2, 3}, []float64{0, 8}},
		// Weights: 6 (distance 6, weight 1) beats 10 (distance 10, weight 0.5).
		{"weighted", line, 2, 0, []float64{1, 1, 1, 0.5, 1}, []int{0, 4}, []float64{0, 6}},
		// Cosine: from the x axis the opposite direction is farthest
		// (|a-b| = 2), then the y axis (sqrt 2 from both).
		{"cosine", matrix(vector.Cosine, []float32{1, 0}, []float32{0.9, 0.1}, []float32{0, 1}, []float32{-1, 0}),
			3, 0, nil, []int{0, 3, 2}, []float64{0, 2, math.Sqrt2}},
	} {
		rows, scores, err := kCenter(ctx, c.x, c.budget, c.first, c.weight, 2, func() {})
		if err != nil || !slices.Equal(rows, c.want) {
			t.Errorf("%s: rows %v %v, want %v", c.name, rows, err, c.want)
			continue
		}
		for i := range scores {
			if !near(scores[i], c.scores[i]) {
				t.Errorf("%s: scores %v, want %v", c.name, scores, c.scores)
				break
			}
		}
	}
}

// bruteKCenter is k-center greedy without the triangle-inequality skip.
func bruteKCenter(x *vector.Matrix, budget, first int) []int {
	minD := make([]float64, x.Len())
	for i := range minD {
		minD[i] = math.Inf(1)
	}
	out := []int{first}
	for len(out) < budget {
		c := out[len(out)-1]
		best, bd := -1, -1.0
		for i := range minD {
			minD[i] = min(minD[i], float64(sqDist(x, x.Row(i), x.Row(c))))
			if minD[i] > bd {
				best, bd = i, minD[i]
			}
		}
		out = append(out, best)
	}
	return out
}

// The skip is exact: on clustered data (where it skips most rows) the
// picks equal a plain k-center's.
func TestKCenterSkipIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const dim, n = 16, 3000
	centres := make([][]float32, 20)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64() * 5)
		}
	}
	var rows [][]float32
	for range n {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64())
		}
		rows = append(rows, v)
	}
	for _, metric := range []string{vector.L2, vector.Cosine} {
		x := matrix(metric, rows...)
		got, _, err := kCenter(context.Background(), x, 60, 5, nil, 3, func() {})
		want := bruteKCenter(x, 60, 5)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: k-center %v %v\nbrute force %v", metric, got, err, want)
		}
	}
}

func TestUniquenessHandCases(t *testing.T) {
	ctx := context.Background()
	// Points 0, 1, 2, 10 on a line, k = 2: 0 -> (1+2)/2, 1 -> (1+1)/2,
	// 2 -> (1+2)/2, 10 -> (8+9)/2.
	line := matrix(vector.L2, []float32{0}, []float32{1}, []float32{2}, []float32{10})
	got, err := uniquenessScores(ctx, line, 2, 2, func(int) {})
	if want := []float64{1.5, 1, 1.5, 8.5}; err != nil || !slices.EqualFunc(got, want, near) {
		t.Errorf("l2: %v %v, want %v", got, err, want)
	}
	// Cosine, k = 1: x and a copy of x are at distance 0; y is 1 - cos 90° = 1
	// from both.
	cos := matrix(vector.Cosine, []float32{1, 0}, []float32{2, 0}, []float32{0, 3})
	got, err = uniquenessScores(ctx, cos, 1, 1, func(int) {})
	if want := []float64{0, 0, 1}; err != nil || !slices.EqualFunc(got, want, near) {
		t.Errorf("cosine: %v %v, want %v", got, err, want)
	}
	// More rows than a block, each scored against all the others.
	var rows [][]float32
	for i := range 40 {
		rows = append(rows, []float32{float32(i * i)})
	}
	got, _ = uniquenessScores(ctx, matrix(vector.L2, rows...), 1, 3, func(int) {})
	for i, g := range got {
		want := float64(2*i - 1) // the square before is nearer than the next one
		if i == 0 {
			want = 1
		}
		if !near(g, want) {
			t.Errorf("row %d: %v, want %v", i, g, want)
		}
	}
	if got, _ := uniquenessScores(ctx, matrix(vector.L2, []float32{1}), 3, 1, func(int) {}); got != nil {
		t.Errorf("one row scored %v", got)
	}
}

func TestKeepSmallest(t *testing.T) {
	var s []float32
	for _, d := range []float32{5, 3, 9, 1, 4, 1} {
		s = keepSmallest(s, d, 3)
	}
	if !slices.Equal(s, []float32{1, 1, 3}) {
		t.Errorf("kept %v", s)
	}
}

// dot agrees with a float64 sum at every length (the vector tails too).
func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := range 70 {
		a, b := make([]float32, n), make([]float32, n+3)
		var want float64
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			want += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b[:n]); math.Abs(float64(got)-want) > 1e-4*(1+math.Abs(want)) {
			t.Errorf("length %d: %v, want %v", n, got, want)
		}
	}
}

// TestKCenterProgressCountsEveryPick: a selection job's progress is its
// picks, so at the end done equals the total it set (min(budget, rows)); the
// first pick was not counted, and completed jobs showed "5/6" (issue 31,
// item 6).
func TestKCenterProgressCountsEveryPick(t *testing.T) {
	x := matrix(vector.L2, []float32{0, 0}, []float32{1, 0}, []float32{2, 0}, []float32{10, 0}, []float32{6, 0})
	for _, budget := range []int{1, 3, 5, 9} {
		calls := 0
		rows, _, err := kCenter(context.Background(), x, budget, 0, nil, 2, func() { calls++ })
		if err != nil {
			t.Fatal(err)
		}
		if want := min(budget, x.Len()); calls != want || len(rows) != want {
			t.Errorf("budget %d: %d progress calls for %d picks, want %d", budget, calls, len(rows), want)
		}
	}
}
