package evaluate

import (
	"encoding/binary"
	"errors"
	"math"
)

// A file's outcomes are stored packed, one record a box: the annotation's
// key (uvarint), a byte holding the Kind in its low bits and 4 when the
// match has another label (8 when there is a match), then, with a match,
// the matched box's key (uvarint) and the IoU (float64, little endian).

const (
	flagMismatch = 4
	flagMatch    = 8
)

func packOutcomes(dst []byte, outs []outcome) []byte {
	for _, o := range outs {
		dst = binary.AppendUvarint(dst, uint64(o.seq))
		flags := byte(o.kind)
		if o.other {
			flags |= flagMismatch
		}
		if o.match == 0 {
			dst = append(dst, flags)
			continue
		}
		dst = append(dst, flags|flagMatch)
		dst = binary.AppendUvarint(dst, uint64(o.match))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(o.iou))
	}
	return dst
}

var errPacked = errors.New("evaluate: damaged packed outcomes")

func unpackOutcomes(b []byte) ([]outcome, error) {
	var out []outcome
	for len(b) > 0 {
		seq, n := binary.Uvarint(b)
		if n <= 0 || len(b) < n+1 {
			return nil, errPacked
		}
		flags := b[n]
		b = b[n+1:]
		o := outcome{seq: int64(seq), kind: Kind(flags & 3), other: flags&flagMismatch != 0}
		if flags&flagMatch != 0 {
			m, n := binary.Uvarint(b)
			if n <= 0 || len(b) < n+8 {
				return nil, errPacked
			}
			o.match = int64(m)
			o.iou = math.Float64frombits(binary.LittleEndian.Uint64(b[n:]))
			b = b[n+8:]
		}
		out = append(out, o)
	}
	return out, nil
}
