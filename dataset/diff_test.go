package dataset

import (
	"strings"
	"testing"
)

func TestCompareBoxes(t *testing.T) {
	car := func(x float64) Box { return Box{Label: "car", X: x, Y: 0, W: 10, H: 10} }
	dog := Box{Label: "dog", X: 0, Y: 0, W: 10, H: 10}
	for _, c := range []struct {
		name     string
		from, to []Box
		want     map[string]BoxChanges
	}{
		{"same", []Box{car(0), car(0)}, []Box{car(0), car(0)}, map[string]BoxChanges{"car": {Unchanged: 2}}},
		{"moved", []Box{car(0)}, []Box{car(5)}, map[string]BoxChanges{"car": {Changed: 1}}},
		{"apart", []Box{car(0)}, []Box{car(50)}, map[string]BoxChanges{"car": {Added: 1, Removed: 1}}},
		{"relabelled", []Box{car(0)}, []Box{dog}, map[string]BoxChanges{"car": {Removed: 1}, "dog": {Added: 1}}},
		// car(4) overlaps car(0) (IoU 6/14) less than car(1) (IoU 9/11): car(1)
		// pairs with car(0), car(4) is new.
		{"best pair", []Box{car(0)}, []Box{car(4), car(1)}, map[string]BoxChanges{"car": {Changed: 1, Added: 1}}},
		{"one kept", []Box{car(0), car(30)}, []Box{car(0)}, map[string]BoxChanges{"car": {Unchanged: 1, Removed: 1}}},
	} {
		got := compareBoxes(c.from, c.to)
		if len(got) != len(c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		for l, w := range c.want {
			if got[l] != w {
				t.Errorf("%s: %s %+v, want %+v", c.name, l, got[l], w)
			}
		}
	}
	if v := iou(car(0), car(5)); v < 1.0/3-1e-9 || v > 1.0/3+1e-9 {
		t.Errorf("iou of half-overlapping squares %v, want 1/3", v)
	}
}

func TestBoxLabels(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[]`, ""},
		{`[{"label":"car","x":1,"y":2,"w":3,"h":4},{"label":"bus","x":1,"y":2,"w":3,"h":4}]`, "car,bus"},
		{`[{"label":"a \"b\"","x":1,"y":2,"w":3,"h":4}]`, `a "b"`},
		{`[{"x":1,"label":"dog","y":2,"w":3,"h":4}]`, "dog"},
	} {
		got, err := boxLabels(c.in)
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("%s: %q %v, want %q", c.in, got, err, c.want)
		}
	}
}
