package lake

import "testing"

// TestTakeFacts: COCO's area alone (the read without a decode) and beside
// other attributes give the same area and attributes; an area that is no
// positive finite number is refused either way.
func TestTakeFacts(t *testing.T) {
	for _, c := range []struct {
		in, attrs string
		area      float64
		bad       bool
	}{
		{`{"_import_area":1234.5}`, `{}`, 1234.5, false},
		{`{"_import_area":2e3}`, `{}`, 2000, false},
		{`{"_import_area":1234.5,"occluded":true}`, `{"occluded":true}`, 1234.5, false},
		{`{"occluded":true,"_import_area":7}`, `{"occluded":true}`, 7, false},
		{`{"_import_area":{"a":1}}`, ``, 0, true},
		{`{"_import_area":-3}`, ``, 0, true},
		{`{"_import_area":0}`, ``, 0, true},
		{`{"_import_area":1e400}`, ``, 0, true},
		{`{"_import_area":"12"}`, ``, 0, true},
		{`{"occluded":true}`, `{"occluded":true}`, 0, false},
	} {
		attrs, f, err := takeFacts(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("takeFacts(%s) = %s, %v; want an error", c.in, attrs, f.area)
			}
			continue
		}
		if err != nil || attrs != c.attrs || f.area != c.area {
			t.Errorf("takeFacts(%s) = %s, %v, %v; want %s, %v", c.in, attrs, f.area, err, c.attrs, c.area)
		}
	}
}
