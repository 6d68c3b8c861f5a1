package dataset

import (
	"fmt"
	"math"
	"testing"

	"github.com/framelake/framelake/errs"
)

func TestSplitIsStableAndProportional(t *testing.T) {
	sp := Split{Train: 70, Test: 20, Validation: 10}
	const n = 20000
	counts := map[string]int{}
	differ := 0
	for i := range n {
		name := fmt.Sprintf("street-img-%05d-k3f9a2m7", i)
		s := sp.Of(42, name)
		if sp.Of(42, name) != s {
			t.Fatalf("%s: split not a function of seed and name", name)
		}
		if sp.Of(43, name) != s {
			differ++
		}
		counts[s]++
	}
	for s, want := range map[string]float64{Train: 70, Test: 20, Validation: 10} {
		if got := float64(counts[s]) * 100 / n; math.Abs(got-want) > 1.5 {
			t.Errorf("%s: %.1f%%, want %.0f%%", s, got, want)
		}
	}
	if differ < n/4 {
		t.Errorf("another seed changed only %d of %d splits", differ, n)
	}
}

func TestSplitRaisingTrainOnlyMovesFilesIntoTrain(t *testing.T) {
	from, to := Split{Train: 60, Test: 30, Validation: 10}, Split{Train: 80, Test: 10, Validation: 10}
	for i := range 5000 {
		name := fmt.Sprintf("f-%d", i)
		if a, b := from.Of(7, name), to.Of(7, name); a == Train && b != Train {
			t.Fatalf("%s left train (%s)", name, b)
		}
	}
	all := Split{Train: 100}
	none := Split{Validation: 100}
	for i := range 1000 {
		name := fmt.Sprintf("g-%d", i)
		if all.Of(1, name) != Train || none.Of(1, name) != Validation {
			t.Fatalf("%s: 100%% splits must hold every file", name)
		}
	}
}

func TestSplitCheck(t *testing.T) {
	for _, c := range []struct {
		s     Split
		field string
	}{
		{Split{70, 20, 10}, ""},
		{Split{33.3, 33.3, 33.4}, ""},
		{Split{100, 0, 0}, ""},
		{Split{70, 20, 5}, "split_info"},
		{Split{-10, 100, 10}, "split_info.train"},
		{Split{0, 101, -1}, "split_info.test"},
		{Split{0, 0, math.NaN()}, "split_info.validation"},
	} {
		err := c.s.Check("split_info", SplitFields)
		var field string
		if e, ok := err.(*errs.Error); ok {
			field = e.Field
		}
		if (err == nil) != (c.field == "") || field != c.field {
			t.Errorf("%+v: %v (field %q), want field %q", c.s, err, field, c.field)
		}
	}
}
