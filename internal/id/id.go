// Package id makes the opaque identifiers framelake hands out: a short type
// prefix and 80 random bits in lowercase base32, e.g. "prj_k5x2m9qa4hd3w7te".
// The prefix tells a reader at a glance what an id names.
package id

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
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
