package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/framelake/framelake/errs"
)

// Check validates a split: each part in 0..100, the three summing to 100.
// field prefixes the error's field ("split_info" for the client functions).
func (s Split) Check(field string, names [3]string) error {
	for i, v := range []float64{s.Train, s.Test, s.Validation} {
		if math.IsNaN(v) || v < 0 || v > 100 {
			return errs.Invalid(names[i], "%s must be a percentage in 0..100, got %g", names[i], v)
		}
	}
	if sum := s.Train + s.Test + s.Validation; math.Abs(sum-100) > 1e-9 {
		return errs.Invalid(field, "%s percentages must sum to 100, got %s", field, trimFloat(sum))
	}
	return nil
}

// SplitFields are the field names split errors use in the client functions.
var SplitFields = [3]string{"split_info.train", "split_info.test", "split_info.validation"}

// Bucket is where a file falls in [0, 10000) for a group's seed: a pure
// function of the two, so every version of the group agrees.
func Bucket(seed int64, uniqueName string) int {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(uniqueName))
	sum := h.Sum(nil)
	return int(binary.LittleEndian.Uint64(sum[:8]) % 10000)
}

// Of returns the split a file with uniqueName gets in a group with seed.
// Train takes the bottom of the bucket range, test the top and validation
// the middle, so that changing the percentages moves files into or out of
// validation, never between train and test, unless the new train or test
// range reaches into the other's old one (see the package comment).
func (s Split) Of(seed int64, uniqueName string) string {
	p := float64(Bucket(seed, uniqueName)) / 100
	switch {
	case p < s.Train:
		return Train
	case p >= 100-s.Test:
		return Test
	}
	return Validation
}

func (s Split) String() string {
	return fmt.Sprintf("train %s%% / test %s%% / validation %s%%", trimFloat(s.Train), trimFloat(s.Test),
		trimFloat(s.Validation))
}

func trimFloat(f float64) string { return fmt.Sprintf("%.4g", f) }
