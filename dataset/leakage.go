package dataset

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// Leakage is how many near-duplicate pairs of a version's lake frames lie
// in different splits: by perceptual hash, Hamming distance at most
// Threshold (curate.HashPairs). Augmented frames are left out: they are
// copies of training frames by design. Frames without quality scores
// cannot be compared and are counted in Unscored. Frames sampled from
// videos are compared by the hashes their build measured; two frames of one
// video are never a pair (they share a split by design, and neighbouring
// frames look alike), and a pair naming a frame of a video names the video
// and the frame too.
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
	// Videos are the crossing pairs that involve a video, counted by the two
	// files they join (a video and a video, or a video and an image), most
	// pairs first, at most MaxLeakExamples of them: which videos show the
	// same scene as something in another split.
	Videos []LeakVideos `json:"videos,omitempty"`
}

// LeakVideos is the crossing pairs between two files, one of them a video
// (A, or both): A and B are uniqueNames of a video or an image.
type LeakVideos struct {
	A      string `json:"a"`
	SplitA string `json:"splitA"`
	B      string `json:"b"`
	SplitB string `json:"splitB"`
	Pairs  int    `json:"pairs"`
}

// LeakPair is one crossing pair.
type LeakPair struct {
	A        string `json:"a"`
	SplitA   string `json:"splitA"`
	B        string `json:"b"`
	SplitB   string `json:"splitB"`
	Distance int    `json:"distance"`
	// VideoA and FrameA name the video and frame A was sampled from (none
	// for an image); so VideoB and FrameB.
	VideoA string `json:"videoA,omitempty"`
	FrameA *int   `json:"frameA,omitempty"`
	VideoB string `json:"videoB,omitempty"`
	FrameB *int   `json:"frameB,omitempty"`
}

// sampledHash is a frame sampled from a video as leakage compares it.
type sampledHash struct {
	uniqueName, video, split string
	frame                    int
	hashes                   [3]uint64
}

// sampledHashes are the hashes of a build's sampled frames.
func (s *Service) sampledHashes(ctx context.Context, versionSeq int64, build int) ([]sampledHash, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT unique_name, video, video_frame, split, phash, phash_c1, phash_c2
		FROM version_item WHERE version_seq = ? AND build = ? AND video IS NOT NULL AND phash IS NOT NULL ORDER BY ord`,
		versionSeq, build)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sampledHash
	for rows.Next() {
		var h sampledHash
		var a, b, c int64
		if err := rows.Scan(&h.uniqueName, &h.video, &h.frame, &h.split, &a, &b, &c); err != nil {
			return nil, err
		}
		h.hashes = [3]uint64{uint64(a), uint64(b), uint64(c)}
		out = append(out, h)
	}
	return out, rows.Err()
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
		WHERE version_seq = ? AND build = ? AND derived_from IS NULL AND file_seq IS NOT NULL AND video IS NULL`, v.seq, v.current)
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
	rows.Close()
	sampled, err := s.sampledHashes(ctx, v.seq, v.current)
	if err != nil {
		return Leakage{}, err
	}
	return s.leakageOf(ctx, splits, sampled, threshold)
}

// planLeakage is the leakage of a build's plan and the frames it sampled,
// for its statistics.
func (s *Service) planLeakage(ctx context.Context, b *buildState, plan []planned) (*Leakage, error) {
	splits := make(map[int64]string, len(plan))
	for _, p := range plan {
		if p.f.Type != lake.Video {
			splits[p.f.Seq()] = p.split
		}
	}
	sampled, err := s.sampledHashes(ctx, b.v.seq, b.build)
	if err != nil {
		return nil, fmt.Errorf("leakage: %w", err)
	}
	l, err := s.leakageOf(ctx, splits, sampled, curate.DefaultHamming)
	if err != nil {
		return nil, fmt.Errorf("leakage: %w", err)
	}
	l.Examples = nil
	return &l, nil
}

func (s *Service) leakageOf(ctx context.Context, splits map[int64]string, sampled []sampledHash, threshold int) (Leakage, error) {
	out := Leakage{Method: curate.PHash, Threshold: threshold, BySplits: map[string]int{}, Examples: []LeakPair{}}
	for _, k := range SplitPairs {
		out.BySplits[k] = 0
	}
	f, err := s.leakFramesOf(ctx, splits, sampled)
	if err != nil {
		return out, err
	}
	out.Unscored, out.Frames = len(splits)-f.images, len(f.items)
	var crossing []leakPair
	out.Pairs, crossing = f.pairs(threshold)
	out.Crossing = len(crossing)
	f.tell(&out, crossing)
	return out, nil
}

// leakFrames are the frames a leakage compares: the lake images that have
// scores (items[:images], in splits by seq), then the sampled video frames,
// by a key no lake file has.
type leakFrames struct {
	items   []lake.Scored
	images  int
	splits  map[int64]string
	sampled []sampledHash
}

// leakPair is two frames within the threshold, by their index in items.
type leakPair struct {
	i, j int32
	d    int
}

func (s *Service) leakFramesOf(ctx context.Context, splits map[int64]string, sampled []sampledHash) (*leakFrames, error) {
	seqs := slices.Sorted(maps.Keys(splits))
	f := &leakFrames{splits: splits, sampled: sampled}
	const step = 50000
	for i := 0; i < len(seqs); i += step {
		if err := s.lake.ScoredBySeq(ctx, seqs[i:min(len(seqs), i+step)], func(page []lake.Scored) error {
			f.items = append(f.items, page...)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	f.images = len(f.items)
	for i, h := range sampled {
		f.items = append(f.items, lake.Scored{Seq: -int64(i + 1), UniqueName: h.uniqueName, PHash: h.hashes[0],
			CentreHashes: [2]uint64{h.hashes[1], h.hashes[2]}, HasCentre: true})
	}
	return f, nil
}

func (f *leakFrames) split(i int32) string {
	if int(i) < f.images {
		return f.splits[f.items[i].Seq]
	}
	return f.sampled[int(i)-f.images].split
}

// video is the video and frame number of a sampled frame ("" for an image).
func (f *leakFrames) video(i int32) (string, *int) {
	if int(i) < f.images {
		return "", nil
	}
	h := f.sampled[int(i)-f.images]
	n := h.frame
	return h.video, &n
}

// pairs counts the frames within threshold of each other, but for two of
// one video (together by design), and gives those of different splits in
// index order.
func (f *leakFrames) pairs(threshold int) (int, []leakPair) {
	var crossing []leakPair
	n := 0
	curate.ScoredPairs(f.items, threshold, func(i, j int32, d int) {
		if va, _ := f.video(i); va != "" {
			if vb, _ := f.video(j); va == vb {
				return
			}
		}
		n++
		if f.split(i) != f.split(j) {
			crossing = append(crossing, leakPair{i, j, d})
		}
	})
	slices.SortFunc(crossing, func(a, b leakPair) int { return cmp.Or(cmp.Compare(a.i, b.i), cmp.Compare(a.j, b.j)) })
	return n, crossing
}

// tell counts the crossing pairs by their splits into out, with the first
// MaxLeakExamples of them and of the videos they involve, most pairs first.
func (f *leakFrames) tell(out *Leakage, crossing []leakPair) {
	videos := map[[2]string]*LeakVideos{}
	for _, p := range crossing {
		a, b := f.items[p.i], f.items[p.j]
		sa, sb := f.split(p.i), f.split(p.j)
		va, fa := f.video(p.i)
		vb, fb := f.video(p.j)
		out.BySplits[splitPair(sa, sb)]++
		if len(out.Examples) < MaxLeakExamples {
			out.Examples = append(out.Examples, LeakPair{A: a.UniqueName, SplitA: sa, B: b.UniqueName,
				SplitB: sb, Distance: p.d, VideoA: va, FrameA: fa, VideoB: vb, FrameB: fb})
		}
		if va == "" && vb == "" {
			continue
		}
		if va == "" { // the video first
			va, vb, sa, sb = vb, va, sb, sa
			a, b = b, a
		}
		if vb == "" {
			vb = b.UniqueName
		}
		k := [2]string{va, vb}
		if videos[k] == nil {
			videos[k] = &LeakVideos{A: va, SplitA: sa, B: vb, SplitB: sb}
		}
		videos[k].Pairs++
	}
	for _, v := range videos {
		out.Videos = append(out.Videos, *v)
	}
	slices.SortFunc(out.Videos, func(a, b LeakVideos) int {
		return cmp.Or(b.Pairs-a.Pairs, strings.Compare(a.A+"\x00"+a.B, b.A+"\x00"+b.B))
	})
	if len(out.Videos) > MaxLeakExamples {
		out.Videos = out.Videos[:MaxLeakExamples]
	}
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
