// Package tracking scores a tracker's tracks against ground-truth tracks with
// the CLEAR MOT metrics (MOTA, MOTP; Bernardin and Stiefelhagen 2008), the
// identity metrics (IDF1; Ristani et al. 2016) and HOTA (Luiten et al. 2020).
//
// Each metric is computed as TrackEval, the reference implementation of all
// three papers' authors' benchmarks, computes it, step for step:
//
//   - Input is per frame: the ground-truth and tracker ids present and the
//     similarity of every pair (box or mask IoU). Ids are any integers; a
//     video's ids are its own.
//   - CLEAR: a pair matches at similarity 0.5 or more; a pair matched in the
//     previous frame is kept over any other (its score gets 1000 added before
//     the assignment); an identity switch is a ground truth matched to
//     another tracker id than the last one it was matched to; a fragmentation
//     is a track whose matching resumes after a gap. A frame with no
//     tracker detections does not break "matched in the previous frame"
//     (TrackEval skips it). MT/PT/ML at 80% and 20% of a track's frames.
//   - Identity: one global assignment between ground-truth and tracker ids
//     minimising IDFN+IDFP, a frame counting for a pair when its similarity
//     is 0.5 or more.
//   - HOTA: at each α in 0.05, 0.10 … 0.95, frames are matched maximising
//     the pairs' global alignment score times their similarity, pairs below
//     α dropped; DetA, AssA and LocA follow, and HOTA is the mean over α of
//     sqrt(DetA·AssA).
//   - Several videos combine as TrackEval combines sequences: counts add up,
//     AssA and LocA are weighted by each video's true positives.
//   - Assignments solve as SciPy's linear_sum_assignment does, so ties fall
//     the same way.
//
// MOTChallenge's own preprocessing (distractor classes, zero-marked rows) is
// the reader's business: what reaches this package is scored as given.
package tracking

import "fmt"

// Frame is one frame of a video: the ids of its ground-truth objects and
// tracker detections, and Sim[i][j] the similarity (IoU, 0..1) of GT[i]
// and Tracker[j].
type Frame struct {
	GT      []int
	Tracker []int
	Sim     [][]float64
}

// Alphas are HOTA's localisation thresholds, 0.05 to 0.95 by 0.05, each
// computed as numpy's arange computes it (0.05 + i·0.05), so a similarity
// on a threshold falls on the same side as in TrackEval.
var Alphas = func() []float64 {
	a := make([]float64, 19)
	for i := range a {
		a[i] = 0.05 + float64(i)*0.05
	}
	return a
}()

// Result holds every figure of the three families, for one video or several.
type Result struct {
	MOTA     float64 `json:"mota"`
	MOTP     float64 `json:"motp"`
	TP       int     `json:"tp"` // CLEAR's matched, missed and false detections
	FN       int     `json:"fn"`
	FP       int     `json:"fp"`
	IDSW     int     `json:"idsw"`
	Frag     int     `json:"frag"`
	MT       int     `json:"mostlyTracked"` // ground-truth tracks tracked over 80% of their frames
	PT       int     `json:"partlyTracked"`
	ML       int     `json:"mostlyLost"` // tracked under 20%
	GTDets   int     `json:"gtDetections"`
	GTTracks int     `json:"gtTracks"`

	IDF1 float64 `json:"idf1"`
	IDP  float64 `json:"idp"`
	IDR  float64 `json:"idr"`
	IDTP int     `json:"idtp"`
	IDFN int     `json:"idfn"`
	IDFP int     `json:"idfp"`

	HOTA        float64   `json:"hota"`
	DetA        float64   `json:"detA"`
	AssA        float64   `json:"assA"`
	DetRe       float64   `json:"detRe"`
	DetPr       float64   `json:"detPr"`
	AssRe       float64   `json:"assRe"`
	AssPr       float64   `json:"assPr"`
	LocA        float64   `json:"locA"`
	HOTAByAlpha []float64 `json:"hotaByAlpha"` // HOTA at each of Alphas

	clear    clearCounts
	identity identityCounts
	hota     hotaCounts
}

// check validates one video's frames: the similarity matrix fits the ids,
// similarities are in 0..1, and an id appears once in a frame.
func check(frames []Frame) error {
	for t, f := range frames {
		if len(f.Sim) != len(f.GT) {
			return fmt.Errorf("frame %d: %d similarity rows for %d ground-truth objects", t, len(f.Sim), len(f.GT))
		}
		for i, row := range f.Sim {
			if len(row) != len(f.Tracker) {
				return fmt.Errorf("frame %d: similarity row %d has %d values for %d tracker objects", t, i, len(row), len(f.Tracker))
			}
			for j, s := range row {
				if !(s >= 0 && s <= 1) {
					return fmt.Errorf("frame %d: similarity [%d][%d] is %v, not in 0..1", t, i, j, s)
				}
			}
		}
		if err := unique(f.GT); err != nil {
			return fmt.Errorf("frame %d: ground truth: %w", t, err)
		}
		if err := unique(f.Tracker); err != nil {
			return fmt.Errorf("frame %d: tracker: %w", t, err)
		}
	}
	return nil
}

func unique(ids []int) error {
	seen := make(map[int]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return fmt.Errorf("id %d appears twice", id)
		}
		seen[id] = true
	}
	return nil
}

// video is one video's frames with ids renumbered 0..n-1 in order of first
// appearance, as TrackEval renumbers them.
type video struct {
	gt, tr   [][]int
	sim      [][][]float64
	nGT, nTr int
	gtDets   int
	trDets   int
}

func index(frames []Frame) video {
	v := video{gt: make([][]int, len(frames)), tr: make([][]int, len(frames)), sim: make([][][]float64, len(frames))}
	gtIdx, trIdx := map[int]int{}, map[int]int{}
	renumber := func(ids []int, m map[int]int) []int {
		out := make([]int, len(ids))
		for k, id := range ids {
			n, ok := m[id]
			if !ok {
				n = len(m)
				m[id] = n
			}
			out[k] = n
		}
		return out
	}
	for t, f := range frames {
		v.gt[t], v.tr[t], v.sim[t] = renumber(f.GT, gtIdx), renumber(f.Tracker, trIdx), f.Sim
		v.gtDets += len(f.GT)
		v.trDets += len(f.Tracker)
	}
	v.nGT, v.nTr = len(gtIdx), len(trIdx)
	return v
}

// Evaluate scores one video.
func Evaluate(frames []Frame) (Result, error) {
	return EvaluateVideos([][]Frame{frames})
}

// EvaluateVideos scores several videos together, each keeping its own ids.
func EvaluateVideos(videos [][]Frame) (Result, error) {
	var r Result
	r.hota = newHotaCounts()
	for k, frames := range videos {
		if err := check(frames); err != nil {
			if len(videos) > 1 {
				return Result{}, fmt.Errorf("video %d: %w", k, err)
			}
			return Result{}, err
		}
		v := index(frames)
		r.clear.add(clearVideo(v))
		r.identity.add(identityVideo(v))
		r.hota.add(hotaVideo(v))
	}
	r.clear.final(&r)
	r.identity.final(&r)
	r.hota.final(&r)
	return r, nil
}
