package augment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
)

// spec describes one property: a boolean, or an integer range within lo..hi.
type spec struct {
	boolean bool
	lo, hi  int
}

// table is docs/spec/interface.md 2.9: type id -> property id -> spec.
var table = map[string]map[string]spec{
	FlipImage:      {FlipHorizontal: {boolean: true}, FlipVertical: {boolean: true}},
	ImageRotation:  {PercentageScale: {lo: -360, hi: 360}},
	ImageBlur:      {Blur: {lo: 0, hi: 15}},
	NinetyRotation: {Clockwise: {boolean: true}, CounterClockwise: {boolean: true}, UpsideDown: {boolean: true}},
	Grayscale:      {GrayscalePercentage: {lo: 0, hi: 100}},
	Hue:            {HueDegrees: {lo: -50, hi: 50}},
	Saturation:     {SaturationDegrees: {lo: -50, hi: 50}},
	Brightness:     {BrightnessDegrees: {lo: -50, hi: 50}},
	Noise:          {NoisePercentage: {lo: 0, hi: 100}},
	Shear:          {ShearHorizontal: {lo: -40, hi: 40}, ShearVertical: {lo: -40, hi: 40}},
	Crop:           {CropPercentage: {lo: 0, hi: 100}},
}

// Parse reads and validates a configuration. Errors are *errs.Error with code
// invalid_argument and field augmentation_list.
func Parse(data []byte) (*Config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, errs.Invalid(Field, "not a json object: %s", jsonMessage(err))
	}
	c := &Config{}
	for cat, v := range raw {
		if cat != Category {
			return nil, errs.Invalid(Field, "category %q not supported; only %s", cat, Category)
		}
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		d.DisallowUnknownFields()
		if err := d.Decode(&c.ImageLevel); err != nil {
			return nil, errs.Invalid(Field, "%s: %s", Category, jsonMessage(err))
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func jsonMessage(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// Validate checks every entry, selected or not, against docs/spec/interface.md 2.9.
// A nil Config (no augmentation) is valid.
func (c *Config) Validate() error {
	if c == nil {
		return nil
	}
	seen := map[string]bool{}
	for i, e := range c.ImageLevel {
		props, ok := table[e.ID]
		if !ok {
			return errs.Invalid(Field, "entry %d: unknown augmentation %q", i, e.ID)
		}
		if seen[e.ID] {
			return errs.Invalid(Field, "%s: listed twice", e.ID)
		}
		seen[e.ID] = true
		if len(e.Properties) == 0 {
			return errs.Invalid(Field, "%s: no properties", e.ID)
		}
		have := map[string]bool{}
		for _, p := range e.Properties {
			s, ok := props[p.ID]
			if !ok {
				return errs.Invalid(Field, "%s: unknown property %q", e.ID, p.ID)
			}
			if have[p.ID] {
				return errs.Invalid(Field, "%s.%s: listed twice", e.ID, p.ID)
			}
			have[p.ID] = true
			if err := s.check(p.Values); err != nil {
				return errs.Invalid(Field, "%s.%s: %s", e.ID, p.ID, err.Error())
			}
		}
	}
	return nil
}

// check validates values against the spec; the message is the part after
// "TYPE.PROPERTY: ".
func (s spec) check(values []any) error {
	if s.boolean {
		if len(values) != 1 {
			return fmt.Errorf("values must be one boolean, got %s", show(values))
		}
		if _, ok := asBool(values[0]); !ok {
			return fmt.Errorf("values must be one boolean, got %s", show(values))
		}
		return nil
	}
	lo, hi, ok := s.bounds(values)
	if !ok {
		return fmt.Errorf("values must be two integers in %d..%d, got %s", s.lo, s.hi, show(values))
	}
	if lo > hi {
		return fmt.Errorf("minimum %d is above maximum %d", lo, hi)
	}
	return nil
}

// bounds returns a range property's (min, max) when values are two integers
// inside the spec's limits.
func (s spec) bounds(values []any) (lo, hi int, ok bool) {
	if len(values) != 2 {
		return 0, 0, false
	}
	lo, ok1 := asInt(values[0])
	hi, ok2 := asInt(values[1])
	if !ok1 || !ok2 || lo < s.lo || hi > s.hi || hi < s.lo || lo > s.hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// show renders values as JSON for error messages.
func show(values []any) string {
	if values == nil {
		return "[]"
	}
	b, err := json.Marshal(values)
	if err != nil {
		return fmt.Sprint(values)
	}
	return string(b)
}

// asBool accepts JSON booleans and the Python spellings of the interface.
func asBool(v any) (bool, bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		switch v {
		case "True", "true":
			return true, true
		case "False", "false":
			return false, true
		}
	}
	return false, false
}

// asInt accepts whole numbers in any of the forms json or Go callers use.
func asInt(v any) (int, bool) {
	var f float64
	switch v := v.(type) {
	case int:
		return v, true
	case int64:
		f = float64(v)
	case float64:
		f = v
	case json.Number:
		n, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return 0, false
		}
		f = n
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1e6 {
		return 0, false
	}
	return int(f), true
}

// Selected reports whether the entry takes part in outputs.
func (e Entry) Selected() bool { return e.IsSelected == nil || *e.IsSelected }

// Sample draws the steps of output index of the image named key. It assumes
// a validated Config; a nil one draws no steps.
func (c *Config) Sample(seed uint64, key string, index int) []Step {
	if c == nil {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(index), 10))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	var steps []Step
	for _, e := range c.ImageLevel {
		if e.Selected() {
			steps = e.sample(rng, steps)
		}
	}
	return steps
}

func (e Entry) sample(rng *rand.Rand, steps []Step) []Step {
	var turns []string
	for _, p := range e.Properties {
		s := table[e.ID][p.ID]
		if s.boolean {
			if on, _ := asBool(p.Values[0]); !on {
				continue
			}
			if e.ID == NinetyRotation {
				turns = append(turns, p.ID)
				continue
			}
			steps = append(steps, Step{Type: e.ID, Property: p.ID})
			continue
		}
		lo, hi, _ := s.bounds(p.Values)
		st := Step{Type: e.ID, Property: p.ID, Value: round(float64(lo)+rng.Float64()*float64(hi-lo), 100)}
		switch e.ID {
		case Crop:
			st.X, st.Y = round(rng.Float64(), 1e4), round(rng.Float64(), 1e4)
		case Noise:
			st.Seed = rng.Uint64()
		}
		steps = append(steps, st)
	}
	switch len(turns) {
	case 0:
	case 1:
		steps = append(steps, Step{Type: NinetyRotation, Property: turns[0]})
	default:
		steps = append(steps, Step{Type: NinetyRotation, Property: turns[rng.IntN(len(turns))]})
	}
	return steps
}

func round(v, scale float64) float64 { return math.Round(v*scale) / scale }

// checkStep validates a step given to ApplySteps: known type and property,
// value inside the table's bounds.
func checkStep(i int, st Step) error {
	s, ok := table[st.Type][st.Property]
	if !ok {
		return errs.Invalid("steps", "step %d: unknown augmentation %s.%s", i, st.Type, st.Property)
	}
	if !s.boolean && (st.Value < float64(s.lo) || st.Value > float64(s.hi) || math.IsNaN(st.Value)) {
		return errs.Invalid("steps", "step %d: %s.%s value %g not in %d..%d", i, st.Type, st.Property, st.Value, s.lo, s.hi)
	}
	if st.X < 0 || st.X > 1 || st.Y < 0 || st.Y > 1 {
		return errs.Invalid("steps", "step %d: crop position %g,%g not in 0..1", i, st.X, st.Y)
	}
	return nil
}
