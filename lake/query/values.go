package query

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// valueType says how a field reads its literals.
type valueType int

const (
	vText valueType = iota
	vEnum
	vNumber // integers and reals; bound as int64 when integral
	vSize   // bytes, optionally with a unit: 10MB, 1.5GiB
	vDate   // an interval of unix milliseconds, UTC
)

// number reads v as a decimal number, quoted or not, bound as int64 when it
// is an integer so comparisons with INTEGER columns stay exact.
func number(f Field, v Value) (any, error) {
	if i, err := strconv.ParseInt(v.Text, 10, 64); err == nil {
		return i, nil
	}
	if isNumber(v.Text) {
		if x, err := strconv.ParseFloat(v.Text, 64); err == nil {
			return x, nil
		}
		return nil, errorAt(v.Pos, "%s: number %s is out of range", f, v.Text)
	}
	return nil, errorAt(v.Pos, "%s: want a number, got %s", f, v)
}

// sizeUnits are multipliers for fileSize literals: SI units are powers of
// 1000, IEC units powers of 1024, as `ls -h --si` and `ls -h` print them.
var sizeUnits = [...]struct {
	unit string
	mul  float64
}{
	{"b", 1}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
}

func size(f Field, v Value) (any, error) {
	i := strings.IndexFunc(v.Text, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' })
	if i <= 0 || isNumber(v.Text) { // 1e6 is a number, not 1 of unit "e6"
		return number(f, v)
	}
	num, unit := v.Text[:i], strings.ToLower(v.Text[i:])
	for _, u := range sizeUnits {
		if u.unit != unit || !isNumber(num) {
			continue
		}
		x, err := strconv.ParseFloat(num, 64)
		x *= u.mul
		if err != nil || math.IsInf(x, 0) || math.Abs(x) >= 1<<62 {
			return nil, errorAt(v.Pos, "%s: size %s is out of range", f, v)
		}
		if x == math.Trunc(x) {
			return int64(x), nil
		}
		return x, nil
	}
	return nil, errorAt(v.Pos, "%s: want a number of bytes such as 2048, 10MB or 1.5GiB, got %s", f, v)
}

// dateLayouts are tried in order; precision is the length of the interval a
// literal in that layout denotes.
var dateLayouts = [...]struct {
	layout    string
	precision time.Duration // 0 means one calendar month or day, see date
	month     bool
}{
	{layout: "2006-01", month: true},
	{layout: "2006-01-02"},
	{layout: "2006-01-02T15:04Z07:00", precision: time.Minute},
	{layout: "2006-01-02T15:04", precision: time.Minute},
	{layout: "2006-01-02T15:04:05Z07:00", precision: time.Second},
	{layout: "2006-01-02T15:04:05", precision: time.Second},
}

// date reads v as the interval [start, end) of unix milliseconds it denotes.
// Times without a zone are UTC, like the stored ones.
func date(f Field, v Value) (start, end int64, err error) {
	s := v.Text
	if len(s) > 10 && (s[10] == ' ' || s[10] == 't') {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	if !v.Number {
		for _, d := range dateLayouts {
			t, perr := time.Parse(d.layout, s)
			if perr != nil {
				continue
			}
			t = t.UTC()
			var next time.Time
			switch {
			case d.month:
				next = t.AddDate(0, 1, 0)
			case d.precision == 0:
				next = t.AddDate(0, 0, 1)
			case strings.Contains(s, "."): // a fraction of a second: millisecond precision
				t = t.Truncate(time.Millisecond)
				next = t.Add(time.Millisecond)
			default:
				next = t.Add(d.precision)
			}
			return t.UnixMilli(), next.UnixMilli(), nil
		}
	}
	return 0, 0, errorAt(v.Pos, "%s: want a date such as 2026-01-31, 2026-01-31T10:00 or 2026-01-31T10:00:00Z, got %s", f, v)
}

// asciiLower lowers ASCII letters only, as SQLite's lower() does, so the
// pattern and the column fold the same way.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
