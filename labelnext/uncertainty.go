package labelnext

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"

	"github.com/framelake/framelake/lake"
)

// BoxUncertainty is the uncertainty of one box with confidence p under a
// measure (see the package comment), in [0, 1].
func BoxUncertainty(measure string, p float64) float64 {
	p = min(1, max(0, p))
	switch measure {
	case Margin:
		return 1 - math.Abs(2*p-1)
	case Entropy:
		return binaryEntropy(p)
	}
	return 1 - p
}

// binaryEntropy is the entropy of (p, 1-p) in bits.
func binaryEntropy(p float64) float64 {
	h := 0.0
	for _, q := range []float64{p, 1 - p} {
		if q > 0 {
			h -= q * math.Log(q)
		}
	}
	return h / math.Ln2
}

// fileUncertainty is the uncertainty of a file's most uncertain box: least
// confidence grows as p falls, margin and entropy as p nears 0.5, so the
// lowest confidence and the confidence nearest 0.5 decide.
func fileUncertainty(measure string, c lake.FileConfidence) float64 {
	switch measure {
	case Margin, Entropy:
		return BoxUncertainty(measure, 0.5-c.MinGap)
	}
	return BoxUncertainty(measure, c.MinConf)
}

// candidate is a pool file with the score a strategy ranks it by.
type candidate struct {
	seq   int64
	score float64
	tie   uint64 // hash of seed and seq: breaks equal scores
}

// tieBreak is the seed's order among files with equal scores.
func tieBreak(seed, seq int64) uint64 {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(seq))
	sum := sha256.Sum256(b[:])
	return binary.LittleEndian.Uint64(sum[:])
}

// rankTop returns the budget best candidates, highest score first, ties by
// tie then seq.
func rankTop(cands []candidate, budget int) []candidate {
	slices.SortFunc(cands, func(a, b candidate) int {
		switch {
		case a.score != b.score:
			if a.score > b.score {
				return -1
			}
			return 1
		case a.tie != b.tie:
			if a.tie < b.tie {
				return -1
			}
			return 1
		}
		return int(a.seq - b.seq)
	})
	return cands[:min(budget, len(cands))]
}

// uncertain scores the files of confs by measure.
func uncertain(confs []lake.FileConfidence, measure string, seed int64) []candidate {
	out := make([]candidate, len(confs))
	for i, c := range confs {
		out[i] = candidate{seq: c.Seq, score: fileUncertainty(measure, c), tie: tieBreak(seed, c.Seq)}
	}
	return out
}
