package augment

import (
	"math"
	"testing"

	"github.com/framelake/framelake/errs"
)

// FuzzParse feeds arbitrary augmentation configs to Parse: it never panics,
// refuses with an invalid_argument on augmentation_list, and every step a
// config it accepts draws passes the step check with finite values. The
// corpus lives in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{fullConfig, `{}`, `{"IMAGE_LEVEL": []}`, `{"OBJECT_LEVEL": []}`,
		`{"IMAGE_LEVEL": [{"id": "IMAGE_ROTATION", "properties": [{"id": "PERCENTAGE_SCALE", "values": [1e308, -1e308]}]}]}`,
		`{"IMAGE_LEVEL": [{"id": "CROP", "properties": [{"id": "CROP_PERCENTAGE", "values": [0, 100]}]}]}`,
		`{"IMAGE_LEVEL": [{"id": "NOISE", "properties": [{"id": "NOISE_PERCENTAGE", "values": ["5", 9223372036854775808]}]}]}`,
		`{"IMAGE_LEVEL": [{"id": "HUE", "properties": [{"id": "HUE_DEGREES", "values": [-1, 1, 2]}]}]}`,
		`[`, `null`, `{"IMAGE_LEVEL": null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if e, ok := err.(*errs.Error); !ok || e.Code != errs.InvalidArgument || e.Field != Field {
				t.Fatalf("Parse(%q): %v, want an invalid_argument on %s", data, err, Field)
			}
			return
		}
		for i := range 3 {
			for j, st := range c.Sample(uint64(i), "key", i) {
				if err := checkStep(j, st); err != nil {
					t.Fatalf("Parse(%q) accepted a config that draws %+v: %v", data, st, err)
				}
				for _, v := range []float64{st.Value, st.X, st.Y} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("Parse(%q) draws a step with %v", data, v)
					}
				}
			}
		}
	})
}
