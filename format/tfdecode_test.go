package format

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
	"strings"
)

// tfText decodes a TFRecord file into readable text for the golden files:
// it checks the framing and both CRCs itself, then prints every Example's
// features sorted by key. It is written from the format description, apart
// from the writer, so the two check each other.
func tfText(data []byte) (string, error) {
	table := crc32.MakeTable(crc32.Castagnoli)
	mask := func(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }
	var b strings.Builder
	for n := 0; len(data) > 0; n++ {
		if len(data) < 12 {
			return "", fmt.Errorf("record %d: short header", n)
		}
		size := binary.LittleEndian.Uint64(data)
		if mask(crc32.Checksum(data[:8], table)) != binary.LittleEndian.Uint32(data[8:]) {
			return "", fmt.Errorf("record %d: length crc", n)
		}
		if uint64(len(data)) < 16+size {
			return "", fmt.Errorf("record %d: short data", n)
		}
		rec := data[12 : 12+size]
		if mask(crc32.Checksum(rec, table)) != binary.LittleEndian.Uint32(data[12+size:]) {
			return "", fmt.Errorf("record %d: data crc", n)
		}
		data = data[16+size:]
		features, err := pbFields(rec)
		if err != nil || len(features) != 1 || features[0].num != 1 {
			return "", fmt.Errorf("record %d: not an Example: %v", n, err)
		}
		entries, err := pbFields(features[0].data)
		if err != nil {
			return "", err
		}
		var lines []string
		for _, e := range entries {
			kv, err := pbFields(e.data)
			if err != nil || len(kv) != 2 {
				return "", fmt.Errorf("record %d: bad map entry: %v", n, err)
			}
			lines = append(lines, string(kv[0].data)+": "+featureText(kv[1].data))
		}
		sort.Strings(lines)
		fmt.Fprintf(&b, "record %d\n  %s\n", n, strings.Join(lines, "\n  "))
	}
	return b.String(), nil
}

type pbField struct {
	num  int
	data []byte
}

// pbFields splits a message made only of length-delimited fields.
func pbFields(b []byte) ([]pbField, error) {
	var out []pbField
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 || tag&7 != 2 {
			return nil, fmt.Errorf("unexpected tag %d", tag)
		}
		size, m := binary.Uvarint(b[n:])
		if m <= 0 || uint64(len(b)-n-m) < size {
			return nil, fmt.Errorf("bad length")
		}
		out = append(out, pbField{int(tag >> 3), b[n+m : n+m+int(size)]})
		b = b[n+m+int(size):]
	}
	return out, nil
}

// featureText prints a Feature: its kind and values.
func featureText(b []byte) string {
	kind, err := pbFields(b)
	if err != nil || len(kind) != 1 {
		return fmt.Sprintf("bad feature %v", err)
	}
	list, err := pbFields(kind[0].data)
	if err != nil {
		return fmt.Sprintf("bad list %v", err)
	}
	var vals []string
	for _, v := range list {
		p := v.data
		switch kind[0].num {
		case 1:
			if len(p) > 64 {
				vals = append(vals, fmt.Sprintf("<%d bytes>", len(p)))
			} else {
				vals = append(vals, fmt.Sprintf("%q", p))
			}
		case 2:
			for ; len(p) >= 4; p = p[4:] {
				vals = append(vals, fmt.Sprint(math.Float32frombits(binary.LittleEndian.Uint32(p))))
			}
		case 3:
			for len(p) > 0 {
				x, n := binary.Uvarint(p)
				vals = append(vals, fmt.Sprint(int64(x)))
				p = p[max(n, 1):]
			}
		}
	}
	return [...]string{"?", "bytes", "floats", "int64s"}[min(kind[0].num, 3)] + " [" + strings.Join(vals, " ") + "]"
}
