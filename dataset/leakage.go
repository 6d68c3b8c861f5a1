package dataset

import (
	"context"
	"fmt"
	"slices"

	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// Leakage is how many near-duplicate pairs of a version's lake frames lie
// in different splits: by perceptual hash, Hamming distance at most
// Threshold (curate.HashPairs). Augmented frames are left out: they are
// copies of training frames by design. Frames without quality scores
// cannot be compared and are counted in Unscored.
type Leakage struct {
	Method    string         `json:"method"` // "phash"
	Threshold int            `json:"threshold"`
	Frames    int            `json:"frames"`   // frames compared
	Unscored  int            `json:"unscored"` // frames without a hash
	Pairs     int            `json:"pairs"`    // near-duplicate pairs in all
	Crossing  int            `json:"crossing"` // of them, pairs in two splits
	BySplits  map[string]int `json:"splitPairs"`
	// Examples are the first MaxLeakExamples crossing pairs (none in a
	// version's statistics, which Dataset List shows for every version).
	Examples []LeakPair `json:"examples,omitempty"`
}

// LeakPair is one crossing pair.
type LeakPair struct {
	A        string `json:"a"`
	SplitA   string `json:"splitA"`
	B        string `json:"b"`
	SplitB   string `json:"splitB"`
	Distance int    `json:"distance"`
}

// MaxLeakExamples bounds the pairs a leakage report lists.
const MaxLeakExamples = 100

// SplitPairs are the keys of Leakage.BySplits.
var SplitPairs = []string{"train/test", "train/validation", "test/validation"}

func splitPair(a, b string) string {
	order := map[string]int{Train: 0, Test: 1, Validation: 2}
	if order[a] > order[b] {
		a, b = b, a
	}
	return a + "/" + b
}

// Leakage reports the near-duplicate pairs that cross the splits of a
// version's current build at Hamming distance at most threshold.
func (s *Service) Leakage(ctx context.Context, versionID string, threshold int) (Leakage, error) {
	if threshold < 0 || threshold > curate.MaxHamming {
		return Leakage{}, errs.Invalid("threshold", "threshold is a Hamming distance in 0..%d, got %d", curate.MaxHamming, threshold)
	}
	v, err := s.versionRow(ctx, s.db.R, versionID)
	if err != nil {
		return Leakage{}, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT file_seq, split FROM version_item
		WHERE version_seq = ? AND build = ? AND derived_from IS NULL AND file_seq IS NOT NULL`, v.seq, v.current)
	if err != nil {
		return Leakage{}, err
	}
	defer rows.Close()
	splits := map[int64]string{}
	for rows.Next() {
		var seq int64
		var split string
		if err := rows.Scan(&seq, &split); err != nil {
			return Leakage{}, err
		}
		splits[seq] = split
	}
	if err := rows.Err(); err != nil {
		return Leakage{}, err
	}
	return s.leakageOf(ctx, splits, threshold)
}

// planLeakage is the leakage of a build's plan, for its statistics.
func (s *Service) planLeakage(ctx context.Context, plan []planned) (*Leakage, error) {
	splits := make(map[int64]string, len(plan))
	for _, p := range plan {
		splits[p.f.Seq()] = p.split
	}
	l, err := s.leakageOf(ctx, splits, curate.DefaultHamming)
	if err != nil {
		return nil, fmt.Errorf("leakage: %w", err)
	}
	l.Examples = nil
	return &l, nil
}

func (s *Service) leakageOf(ctx context.Context, splits map[int64]string, threshold int) (Leakage, error) {
	out := Leakage{Method: curate.PHash, Threshold: threshold, BySplits: map[string]int{}, Examples: []LeakPair{}}
	for _, k := range SplitPairs {
		out.BySplits[k] = 0
	}
	seqs := make([]int64, 0, len(splits))
	for seq := range splits {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	var items []lake.Scored
	const step = 50000
	for i := 0; i < len(seqs); i += step {
		if err := s.lake.ScoredBySeq(ctx, seqs[i:min(len(seqs), i+step)], func(page []lake.Scored) error {
			items = append(items, page...)
			return nil
		}); err != nil {
			return out, err
		}
	}
	out.Frames, out.Unscored = len(items), len(splits)-len(items)
	type pair struct {
		i, j int32
		d    int
	}
	var crossing []pair
	pairs := 0
	curate.ScoredPairs(items, threshold, func(i, j int32, d int) {
		pairs++
		if splits[items[i].Seq] != splits[items[j].Seq] {
			crossing = append(crossing, pair{i, j, d})
		}
	})
	out.Pairs, out.Crossing = pairs, len(crossing)
	slices.SortFunc(crossing, func(a, b pair) int {
		if a.i != b.i {
			return int(a.i - b.i)
		}
		return int(a.j - b.j)
	})
	for _, p := range crossing {
		a, b := items[p.i], items[p.j]
		out.BySplits[splitPair(splits[a.Seq], splits[b.Seq])]++
		if len(out.Examples) < MaxLeakExamples {
			out.Examples = append(out.Examples, LeakPair{A: a.UniqueName, SplitA: splits[a.Seq], B: b.UniqueName,
				SplitB: splits[b.Seq], Distance: p.d})
		}
	}
	return out, nil
}

// bucketOf is how a build puts a new image in a split: by its uniqueName;
// unless SplitIdentical, a file whose bytes another lake file has too by its
// blob's hash (all of them land together); with KeepDuplicatesTogether, by
// its near-duplicate group's id (the keeper's uniqueName, as find_duplicates
// last recorded it), so a whole group lands where its keeper does, and
// byte-identical files by the group one of them is in.
func (s *Service) bucketOf(ctx context.Context, b *buildState) (func(lake.File) string, error) {
	var groups, blobs map[int64]string
	var err error
	if b.recipe.KeepDuplicatesTogether {
		if groups, err = s.lake.AllDuplicateGroups(ctx); err != nil {
			return nil, err
		}
	}
	if !b.recipe.SplitIdentical {
		if blobs, err = s.lake.SharedBlobs(ctx); err != nil {
			return nil, err
		}
	}
	// A blob's group: the least group id of the files holding it, so copies
	// follow a group any one of them is in, whatever order they come in.
	blobGroup := map[string]string{}
	for seq, blob := range blobs {
		if g, ok := groups[seq]; ok {
			if cur, ok := blobGroup[blob]; !ok || g < cur {
				blobGroup[blob] = g
			}
		}
	}
	return func(f lake.File) string {
		key := f.UniqueName
		if g, ok := groups[f.Seq()]; ok {
			key = g
		} else if blob, ok := blobs[f.Seq()]; ok {
			key = "blob:" + blob
			if g, ok := blobGroup[blob]; ok {
				key = g
			}
		}
		return b.recipe.Split.Of(b.v.seed, key)
	}, nil
}
