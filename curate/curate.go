// Package curate computes the figures that help curate a lake: quality
// scores of images (sharpness, brightness, contrast, entropy, aspect ratio
// and a perceptual hash), near-duplicate groups by perceptual hash or by
// embedding, and the pairs of near duplicates that a set of files splits
// between train, validation and test.
//
// Scores are computed from a greyscale decode no larger than ScoreSize on
// its longest side (libvips shrink-on-load, internal/vips.DecodeGrey):
//   - sharpness: variance of the 4-neighbour Laplacian (0 1 0 / 1 -4 1 /
//     0 1 0) over the interior pixels, in grey levels squared (0..255 scale);
//     a blurred photo scores under ~50, a sharp one hundreds to thousands.
//   - brightness: mean grey level / 255, 0 black .. 1 white.
//   - contrast: RMS contrast, the standard deviation of grey levels / 255.
//   - entropy: Shannon entropy of the 256-bin grey histogram, in bits (0..8).
//   - aspect: stored width / height (as the lake probed it).
//   - phash: 64-bit DCT perceptual hash: the image averaged down to 32x32,
//     its 2-D DCT-II, and one bit per coefficient of the 8x8 lowest
//     frequencies, set when above their median; and the same hash of the
//     image's centre 0.9 and 0.8 of its width and height (CentreScales), so
//     that centred crops meet their original (ScoredPairs).
//
// The lake stores the scores (lake.Quality); quality at ingest is
// IngestScorer passed to lake.Lake.ScoreAtIngest. Jobs (ComputeJob, DuplicatesJob)
// score existing files and record near-duplicate groups.
package curate

import (
	"log/slog"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// ScoreSize is the longest side, in pixels, that scores are computed at:
// 240 lets a 1920x1080 JPEG (the commonest camera frame) load at libjpeg's
// 1/8 DCT scale with no resize, the cheapest decode there is, and a 640x480
// one at 3/8, also with no resize.
const ScoreSize = 240

// Job types.
const (
	ComputeJob    = "curate.quality"
	DuplicatesJob = "curate.duplicates"
)

// Methods of near-duplicate search.
const (
	PHash     = "phash"
	Embedding = "embedding"
)

// Default thresholds: Hamming distance of 64-bit hashes (at most), and
// cosine distance of embeddings (below).
const (
	DefaultHamming = 10
	DefaultCosine  = 0.05
	MaxHamming     = 16
)

// DuplicateTag is the tag that TagNonKeepers gives the members of a group
// other than its keeper.
const DuplicateTag = "near-duplicate"

// MaxListedGroups bounds the groups a duplicates job lists in its result;
// the rest are queryable (duplicates.count > 1).
const MaxListedGroups = 1000

// QualityRequest asks for the scores of the images a query selects that
// have none.
type QualityRequest struct {
	Query string `json:"query,omitempty"`
}

// DuplicatesRequest asks for the near-duplicate groups among the images a
// query selects.
type DuplicatesRequest struct {
	Query     string   `json:"query,omitempty"`
	Method    string   `json:"method"`              // PHash (default) or Embedding
	ModelName string   `json:"modelName,omitempty"` // embedding: whose vectors
	Threshold *float64 `json:"threshold,omitempty"` // nil: the method's default
	// Tag gives the non-keepers of each group the tag DuplicateTag.
	Tag bool `json:"tag,omitempty"`
	// RemoveFromCollection takes the non-keepers out of this collection (id).
	RemoveFromCollection string `json:"removeFromCollection,omitempty"`
}

// Member is a file of a group.
type Member struct {
	UniqueName string  `json:"uniqueName"`
	Pixels     int64   `json:"pixels"`
	Size       int64   `json:"fileSize"`
	Sharpness  float64 `json:"sharpness"`
}

// Group is a near-duplicate group: its id (the keeper's uniqueName), the
// keeper (most pixels, then most bytes, then sharpest) and every member,
// keeper first.
type Group struct {
	ID      string   `json:"group"`
	Keeper  string   `json:"keeper"`
	Members []Member `json:"members"`
}

// DuplicatesResult is a duplicates job's result.
type DuplicatesResult struct {
	Method     string  `json:"method"`
	Threshold  float64 `json:"threshold"`
	Files      int     `json:"files"`  // files compared
	Pairs      int64   `json:"pairs"`  // pairs within the threshold
	Groups     int     `json:"groups"` // groups of two or more
	Duplicates int     `json:"duplicates"`
	Tagged     int     `json:"tagged,omitempty"`
	Removed    int     `json:"removedFromCollection,omitempty"`
	Listed     []Group `json:"groupList"`
	Truncated  bool    `json:"truncated"` // more groups than MaxListedGroups
}

// QualityResult is a quality job's result.
type QualityResult struct {
	Scored  int `json:"scored"`
	Skipped int `json:"skipped"` // images that did not decode
}

// Options tune a Service.
type Options struct {
	Workers int // images scored at once by a job; default GOMAXPROCS
	Logger  *slog.Logger
}

// Service runs the curation jobs over a lake.
type Service struct {
	lake    *lake.Lake
	vectors *vector.Store
	jobs    *job.Queue
	opt     Options
	log     *slog.Logger
}

// ErrMethod is the error of an unknown method.
var errMethod = errs.Invalid("method", `method must be "phash" or "embedding"`)
