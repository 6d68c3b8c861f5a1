package id

import (
	"regexp"
	"testing"
)

// TestOrdered: Ordered ids look like New's and sort by creation, as the
// unique index on annotation ids needs for bulk inserts to append.
func TestOrdered(t *testing.T) {
	shape := regexp.MustCompile(`^ann_[0-9a-hjkmnp-tv-z]{16}$`)
	prev := ""
	for range 100000 {
		s := Ordered("ann")
		if !shape.MatchString(s) || s <= prev {
			t.Fatalf("%q after %q: want the shape of %q and a larger id", s, prev, New("ann"))
		}
		prev = s
	}
}
