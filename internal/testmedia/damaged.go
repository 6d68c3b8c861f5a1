package testmedia

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
)

// GarbageScanJPEG returns a copy of the JPEG j whose entropy-coded data
// (after the first start-of-scan header, up to the end marker) is random
// bytes: the headers and the end marker are intact, the pixels are not.
func GarbageScanJPEG(j []byte) []byte {
	out := bytes.Clone(j)
	sos := bytes.Index(out, []byte{0xFF, 0xDA})
	start := sos + 2 + int(binary.BigEndian.Uint16(out[sos+2:]))
	r := rand.New(rand.NewPCG(1, 2))
	for i := start; i < len(out)-2; i++ {
		out[i] = byte(r.Uint32())
	}
	return out
}

// GarbageIDATPNG returns a copy of the PNG p whose first IDAT chunk holds
// random bytes (with a correct CRC, so only inflating fails) and ends in IEND.
func GarbageIDATPNG(p []byte) []byte {
	out := bytes.Clone(p)
	at := bytes.Index(out, []byte("IDAT")) - 4
	n := int(binary.BigEndian.Uint32(out[at:]))
	data := out[at+8 : at+8+n]
	r := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	binary.BigEndian.PutUint32(out[at+8+n:], crc32.ChecksumIEEE(out[at+4:at+8+n]))
	return out
}

// WithSize returns a copy of the PNG or baseline JPEG b whose header claims
// w x h pixels; the pixel data is left as it was, so it no longer decodes.
func WithSize(b []byte, w, h int) []byte {
	out := bytes.Clone(b)
	if bytes.HasPrefix(out, []byte("\x89PNG")) { // IHDR is the first chunk
		binary.BigEndian.PutUint32(out[16:], uint32(w))
		binary.BigEndian.PutUint32(out[20:], uint32(h))
		binary.BigEndian.PutUint32(out[29:], crc32.ChecksumIEEE(out[12:29]))
		return out
	}
	sof := bytes.Index(out, []byte{0xFF, 0xC0})
	binary.BigEndian.PutUint16(out[sof+5:], uint16(h))
	binary.BigEndian.PutUint16(out[sof+7:], uint16(w))
	return out
}
