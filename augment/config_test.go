package augment

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

const fullConfig = `{"IMAGE_LEVEL": [
	{"id": "FLIP_IMAGE", "description": "flip", "isSelected": true,
	 "properties": [{"id": "FLIP_HORIZONTAL", "values": [true]}, {"id": "FLIP_VERTICAL", "values": ["False"]}]},
	{"id": "IMAGE_ROTATION", "properties": [{"id": "PERCENTAGE_SCALE", "values": [-15, 15]}]},
	{"id": "IMAGE_BLUR", "properties": [{"id": "BLUR", "values": [0, 3]}]},
	{"id": "NINETY_ROTATION", "properties": [{"id": "CLOCKWISE", "values": [true]},
	 {"id": "COUNTER_CLOCKWISE", "values": [true]}, {"id": "UPSIDE_DOWN", "values": [false]}]},
	{"id": "GRAYSCALE", "properties": [{"id": "GRAYSCALE_PERCENTAGE", "values": [0, 30]}]},
	{"id": "HUE", "properties": [{"id": "HUE_DEGREES", "values": [-50, 50]}]},
	{"id": "SATURATION", "properties": [{"id": "SATURATION_DEGREES", "values": [-20, 20]}]},
	{"id": "BRIGHTNESS", "properties": [{"id": "BRIGHTNESS_DEGREES", "values": [-10, 10]}]},
	{"id": "NOISE", "properties": [{"id": "NOISE_PERCENTAGE", "values": [1, 5]}]},
	{"id": "SHEAR", "properties": [{"id": "SHEAR_HORIZONTAL", "values": [-10, 10]}, {"id": "SHEAR_VERTICAL", "values": [5, 5]}]},
	{"id": "CROP", "isSelected": false, "properties": [{"id": "CROP_PERCENTAGE", "values": [70, 90]}]}
]}`

func TestParseValid(t *testing.T) {
	c, err := Parse([]byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ImageLevel) != 11 {
		t.Fatalf("%d entries", len(c.ImageLevel))
	}
	steps := c.Sample(7, "img-1", 0)
	if again := c.Sample(7, "img-1", 0); !equalSteps(steps, again) {
		t.Errorf("sample not deterministic: %v vs %v", steps, again)
	}
	if other := c.Sample(7, "img-1", 1); equalSteps(steps, other) {
		t.Errorf("outputs 0 and 1 drew the same steps %v", steps)
	}
	if other := c.Sample(7, "img-2", 0); equalSteps(steps, other) {
		t.Errorf("two images drew the same steps %v", steps)
	}
	types := []string{}
	for _, s := range steps {
		types = append(types, s.Type+"."+s.Property)
		if err := checkStep(0, s); err != nil {
			t.Error(err)
		}
	}
	// FLIP_VERTICAL is "False", CROP is not selected; NINETY_ROTATION picks
	// one of its two true options.
	got := strings.Join(types, " ")
	for _, want := range []string{"FLIP_IMAGE.FLIP_HORIZONTAL", "IMAGE_ROTATION.", "SHEAR.SHEAR_VERTICAL", "NOISE."} {
		if !strings.Contains(got, want) {
			t.Errorf("steps %s lack %s", got, want)
		}
	}
	for _, bad := range []string{"FLIP_VERTICAL", "CROP", "UPSIDE_DOWN"} {
		if strings.Contains(got, bad) {
			t.Errorf("steps %s contain %s", got, bad)
		}
	}
	if n := strings.Count(got, "NINETY_ROTATION"); n != 1 {
		t.Errorf("steps %s have %d right-angle turns, want 1", got, n)
	}
	turns := map[string]bool{}
	for i := range 40 {
		for _, s := range c.Sample(7, "img-1", i) {
			if s.Type == NinetyRotation {
				turns[s.Property] = true
			}
			if s.Type == ImageRotation && (s.Value < -15 || s.Value > 15) {
				t.Errorf("rotation %g outside -15..15", s.Value)
			}
			if s.Type == Shear && s.Property == ShearVertical && s.Value != 5 {
				t.Errorf("vertical shear %g, want 5", s.Value)
			}
		}
	}
	if !turns[Clockwise] || !turns[CounterClockwise] || turns[UpsideDown] {
		t.Errorf("right-angle turns drawn: %v", turns)
	}
}

// A parsed Config marshals back to the interface's JSON, so a dataset
// version can store it and parse it again.
func TestConfigRoundTrip(t *testing.T) {
	c, err := Parse([]byte(fullConfig))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !equalSteps(c.Sample(1, "x", 0), again.Sample(1, "x", 0)) {
		t.Errorf("round trip changed the draws: %s", b)
	}
	var none *Config
	if err := none.Validate(); err != nil || none.Sample(1, "x", 0) != nil {
		t.Errorf("nil config: %v", err)
	}
	built := &Config{ImageLevel: []Entry{{ID: Crop, Properties: []Property{{ID: CropPercentage, Values: []any{50, 90}}}}}}
	if err := built.Validate(); err != nil {
		t.Errorf("config built in Go: %v", err)
	}
}

func equalSteps(a, b []Step) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseInvalid(t *testing.T) {
	entry := func(id, prop, values string) string {
		return `{"IMAGE_LEVEL": [{"id": "` + id + `", "properties": [{"id": "` + prop + `", "values": ` + values + `}]}]}`
	}
	cases := []struct {
		name, config, want string
	}{
		{"not json", `{`, "not a json object"},
		{"array", `[]`, "not a json object"},
		{"other category", `{"OBJECT_LEVEL": []}`, `category "OBJECT_LEVEL" not supported; only IMAGE_LEVEL`},
		{"unknown type", entry("SPIN", "X", "[1, 2]"), `entry 0: unknown augmentation "SPIN"`},
		{"unknown property", entry("HUE", "SATURATION_DEGREES", "[1, 2]"), `HUE: unknown property "SATURATION_DEGREES"`},
		{"unknown field", `{"IMAGE_LEVEL": [{"id": "HUE", "selected": true, "properties": []}]}`, `unknown field "selected"`},
		{"no properties", `{"IMAGE_LEVEL": [{"id": "HUE", "properties": []}]}`, "HUE: no properties"},
		{"one value", entry("IMAGE_ROTATION", "PERCENTAGE_SCALE", "[10]"),
			"IMAGE_ROTATION.PERCENTAGE_SCALE: values must be two integers in -360..360, got [10]"},
		{"three values", entry("IMAGE_BLUR", "BLUR", "[1, 2, 3]"), "IMAGE_BLUR.BLUR: values must be two integers in 0..15, got [1,2,3]"},
		{"above range", entry("IMAGE_BLUR", "BLUR", "[0, 16]"), "IMAGE_BLUR.BLUR: values must be two integers in 0..15, got [0,16]"},
		{"below range", entry("HUE", "HUE_DEGREES", "[-51, 0]"), "HUE.HUE_DEGREES: values must be two integers in -50..50, got [-51,0]"},
		{"fraction", entry("NOISE", "NOISE_PERCENTAGE", "[1.5, 2]"), "NOISE.NOISE_PERCENTAGE: values must be two integers in 0..100, got [1.5,2]"},
		{"string number", entry("CROP", "CROP_PERCENTAGE", `["50", 60]`), `CROP.CROP_PERCENTAGE: values must be two integers in 0..100, got ["50",60]`},
		{"reversed", entry("SHEAR", "SHEAR_HORIZONTAL", "[20, -20]"), "SHEAR.SHEAR_HORIZONTAL: minimum 20 is above maximum -20"},
		{"no values", entry("GRAYSCALE", "GRAYSCALE_PERCENTAGE", "null"), "GRAYSCALE.GRAYSCALE_PERCENTAGE: values must be two integers in 0..100, got []"},
		{"bool as number", entry("FLIP_IMAGE", "FLIP_HORIZONTAL", "[1]"), "FLIP_IMAGE.FLIP_HORIZONTAL: values must be one boolean, got [1]"},
		{"two bools", entry("NINETY_ROTATION", "CLOCKWISE", "[true, false]"), "NINETY_ROTATION.CLOCKWISE: values must be one boolean, got [true,false]"},
		{"duplicate entry", `{"IMAGE_LEVEL": [{"id": "HUE", "properties": [{"id": "HUE_DEGREES", "values": [1, 2]}]},
			{"id": "HUE", "properties": [{"id": "HUE_DEGREES", "values": [1, 2]}]}]}`, "HUE: listed twice"},
		{"duplicate property", `{"IMAGE_LEVEL": [{"id": "SHEAR", "properties": [{"id": "SHEAR_VERTICAL", "values": [1, 2]},
			{"id": "SHEAR_VERTICAL", "values": [1, 2]}]}]}`, "SHEAR.SHEAR_VERTICAL: listed twice"},
		{"unselected still checked", `{"IMAGE_LEVEL": [{"id": "HUE", "isSelected": false, "properties": [{"id": "HUE_DEGREES", "values": [1]}]}]}`,
			"HUE.HUE_DEGREES: values must be two integers in -50..50, got [1]"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.config))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to contain %q", c.name, err, c.want)
		}
		var e *errs.Error
		if errs.CodeOf(err) != errs.InvalidArgument || !errors.As(err, &e) || e.Field != Field {
			t.Errorf("%s: error %#v is not invalid_argument on %s", c.name, err, Field)
		}
	}
}

func TestApplyStepsRejectsBadSteps(t *testing.T) {
	img := scenePNG(t, 40, 30, nil)
	for _, st := range []Step{
		{Type: "SPIN", Property: "X"},
		{Type: Hue, Property: HueDegrees, Value: 90},
		{Type: Crop, Property: CropPercentage, Value: 50, X: 2},
		{Type: ImageBlur, Property: Blur, Value: -1},
	} {
		if _, err := ApplySteps(t.Context(), img, nil, []Step{st}, Options{}); errs.CodeOf(err) != errs.InvalidArgument {
			t.Errorf("%+v: err %v, want invalid_argument", st, err)
		}
	}
	if _, err := ApplySteps(t.Context(), []byte("not an image"), nil, nil, Options{}); errs.CodeOf(err) != errs.UnsupportedMedia {
		t.Errorf("garbage image: err %v, want unsupported_media", err)
	}
	if _, err := ApplySteps(t.Context(), img, []Box{{X: 1, Y: 1, W: -3, H: 2}}, nil, Options{}); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("negative box: err %v, want invalid_argument", err)
	}
	if _, err := ApplySteps(t.Context(), img, nil, nil, Options{Format: "bmp"}); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("bmp output: err %v, want invalid_argument", err)
	}
}
