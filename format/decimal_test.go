package format

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestDecimalEqualsParseFloat: the polygon reader's fast decimals are
// strconv.ParseFloat's values, bit for bit, and it declines what it cannot
// read exactly (exponents, 16+ digits), which strconv then reads.
func TestDecimalEqualsParseFloat(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"0", true}, {"-0", true}, {"12", true}, {"12.5", true}, {"-3.25", true}, {"0.1", true}, {"123456.789012345", true},
		{"0.000000000000001", true}, {"1e5", false}, {"1.5E-3", false}, {"1234567890.1234567", false}, {"", false},
		{"-", false}, {"1.", false}, {".5", false}, {"1.2.3", false}, {"+1", false},
	}
	for _, c := range cases {
		v, ok := decimal([]byte(c.in))
		if ok != c.ok {
			t.Errorf("decimal(%q) ok = %v, want %v", c.in, ok, c.ok)
			continue
		}
		if want, _ := strconv.ParseFloat(c.in, 64); ok && math.Float64bits(v) != math.Float64bits(want) {
			t.Errorf("decimal(%q) = %v, ParseFloat %v", c.in, v, want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		s := strconv.FormatFloat((r.Float64()-0.5)*math.Pow(10, float64(r.IntN(12))), 'f', r.IntN(9), 64)
		v, ok := decimal([]byte(s))
		want, _ := strconv.ParseFloat(s, 64)
		if ok && math.Float64bits(v) != math.Float64bits(want) {
			t.Fatalf("decimal(%q) = %v, ParseFloat %v", s, v, want)
		}
	}
}

// TestParseFloat: ParseFloat is strconv.ParseFloat, value and error alike,
// for plain decimals (read by decimal) and the rest (left to strconv).
func TestParseFloat(t *testing.T) {
	for _, s := range []string{"12.5", "-0", "0.85", "1e3", "+4", "1800.07", "0x10", "inf", "", "1.2.3", "9007199254740993", "-"} {
		v, err := ParseFloat([]byte(s))
		want, wantErr := strconv.ParseFloat(s, 64)
		if (err == nil) != (wantErr == nil) || err == nil && math.Float64bits(v) != math.Float64bits(want) {
			t.Errorf("ParseFloat(%q) = %v, %v; strconv %v, %v", s, v, err, want, wantErr)
		}
	}
}
