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

// TestSplitChangesMoveFilesOnlyThroughValidation: re-bucketing with other
// percentages (Create Dataset Version) moves files into or out of
// validation, never between train and test, unless the new train or test
// range reaches past the old validation into the other's old range.
func TestSplitChangesMoveFilesOnlyThroughValidation(t *testing.T) {
	for _, c := range []struct {
		from, to Split
		crosses  bool // train<->test moves are unavoidable
	}{
		{Split{70, 20, 10}, Split{60, 20, 20}, false}, // lower train
		{Split{60, 30, 10}, Split{70, 20, 10}, false}, // raise train, lower test
		{Split{70, 20, 10}, Split{70, 10, 20}, false}, // lower test
		{Split{40, 30, 30}, Split{10, 10, 80}, false},
		{Split{40, 30, 30}, Split{70, 0, 30}, false}, // train takes all of validation
		{Split{80, 10, 10}, Split{80, 20, 0}, false},
		{Split{50, 50, 0}, Split{40, 40, 20}, false},
		{Split{0, 0, 100}, Split{45, 45, 10}, false},
		{Split{33.3, 33.3, 33.4}, Split{66.7, 33.3, 0}, false},
		{Split{70, 20, 10}, Split{20, 70, 10}, true}, // test 70 > old test+validation 30
		{Split{60, 20, 20}, Split{90, 10, 0}, true},  // train 90 > old train+validation 80
		{Split{60, 30, 10}, Split{80, 10, 10}, true}, // train 80 > old train+validation 70
		{Split{100, 0, 0}, Split{0, 100, 0}, true},
	} {
		moved := 0
		for i := range 5000 {
			name := fmt.Sprintf("f-%d", i)
			a, b := c.from.Of(7, name), c.to.Of(7, name)
			if a != b && a != Validation && b != Validation {
				moved++
			}
			if a == Train && b != Train && c.to.Train >= c.from.Train {
				t.Errorf("%v -> %v: %s left train (%s) though train grew", c.from, c.to, name, b)
			}
		}
		if (moved > 0) != c.crosses {
			t.Errorf("%v -> %v: %d files moved between train and test, want moves %v", c.from, c.to, moved, c.crosses)
		}
	}
	all, none, test := Split{Train: 100}, Split{Validation: 100}, Split{Test: 100}
	for i := range 1000 {
		name := fmt.Sprintf("g-%d", i)
		if all.Of(1, name) != Train || none.Of(1, name) != Validation || test.Of(1, name) != Test {
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
