package format

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// A hand-written encoder for the few messages of tensorflow/core/example
// (Example, Features, Feature, BytesList, FloatList, Int64List), so exports
// need no protobuf dependency. Wire format: a length-delimited field is its
// tag byte, a varint length and the bytes; Features.feature is a map, i.e. a
// repeated entry message {1: key, 2: Feature}; repeated numbers are packed.

const (
	pbField1 = 1<<3 | 2 // field 1, length-delimited
	pbField2 = 2<<3 | 2
	pbField3 = 3<<3 | 2
)

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// delimited is the encoded size of a length-delimited field of n bytes.
func delimited(n int) int { return 1 + uvarintLen(uint64(n)) + n }

func appendDelim(b []byte, tag byte, n int) []byte {
	return binary.AppendUvarint(append(b, tag), uint64(n))
}

// appendEntry starts a Features map entry for key whose Feature has
// featLen bytes; the Feature's bytes must follow.
func appendEntry(b []byte, key string, featLen int) []byte {
	entry := delimited(len(key)) + delimited(featLen)
	b = appendDelim(b, pbField1, entry)
	b = appendDelim(b, pbField1, len(key))
	b = append(b, key...)
	return appendDelim(b, pbField2, featLen)
}

// appendBytesFeature encodes key → BytesList(vals).
func appendBytesFeature(b []byte, key string, vals ...string) []byte {
	list := 0
	for _, v := range vals {
		list += delimited(len(v))
	}
	b = appendEntry(b, key, delimited(list))
	b = appendDelim(b, pbField1, list)
	for _, v := range vals {
		b = appendDelim(b, pbField1, len(v))
		b = append(b, v...)
	}
	return b
}

// appendFloatFeature encodes key → FloatList(vals), packed.
func appendFloatFeature(b []byte, key string, vals []float32) []byte {
	list := 0
	if len(vals) > 0 {
		list = delimited(4 * len(vals))
	}
	b = appendEntry(b, key, delimited(list))
	b = appendDelim(b, pbField2, list)
	if len(vals) > 0 {
		b = appendDelim(b, pbField1, 4*len(vals))
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return b
}

// appendInt64Feature encodes key → Int64List(vals), packed.
func appendInt64Feature(b []byte, key string, vals ...int64) []byte {
	payload := 0
	for _, v := range vals {
		payload += uvarintLen(uint64(v))
	}
	list := 0
	if len(vals) > 0 {
		list = delimited(payload)
	}
	b = appendEntry(b, key, delimited(list))
	b = appendDelim(b, pbField3, list)
	if len(vals) > 0 {
		b = appendDelim(b, pbField1, payload)
		for _, v := range vals {
			b = binary.AppendUvarint(b, uint64(v))
		}
	}
	return b
}

// appendBlobHeader encodes key → BytesList([blob]) up to where the n bytes
// of the blob go, so a large blob is written without being copied.
func appendBlobHeader(b []byte, key string, n int) []byte {
	list := delimited(n)
	b = appendEntry(b, key, delimited(list))
	b = appendDelim(b, pbField1, list)
	return appendDelim(b, pbField1, n)
}
