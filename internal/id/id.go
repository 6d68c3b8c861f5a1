// Package id makes the opaque identifiers framelake hands out: a short type
// prefix and 80 random bits in lowercase base32, e.g. "prj_k5x2m9qa4hd3w7te".
// The prefix tells a reader at a glance what an id names.
package id

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"sync/atomic"
	"time"
)

var enc = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// New returns prefix + "_" + 16 random base32 characters.
func New(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux (Go 1.24+)
	return prefix + "_" + enc.EncodeToString(b[:])
}

// Token returns n random bytes as lowercase base32, for secrets and suffixes.
func Token(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(enc.EncodeToString(b))
}

// ordered is the low half of Ordered's ids: a counter that starts at a
// random value, so two processes in one millisecond do not meet.
var ordered atomic.Uint32

func init() {
	var b [4]byte
	_, _ = rand.Read(b[:])
	ordered.Store(binary.BigEndian.Uint32(b[:]) >> 1) // 2^31 ids before it wraps
}

// Ordered is New with ids that sort by creation: 48 bits of Unix
// milliseconds, then 32 bits of a per-process counter, in the same 16
// characters (the alphabet is in ASCII order). A bulk insert of a million
// boxes then appends to the end of the unique index on ids instead of
// landing on random pages of it. For ids that are no secret.
func Ordered(prefix string) string {
	var b [10]byte
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	binary.BigEndian.PutUint32(b[6:10], ordered.Add(1))
	return prefix + "_" + enc.EncodeToString(b[:])
}
