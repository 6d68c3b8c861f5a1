// Package labelnext chooses what to label next: from a pool of lake images
// (a query) it picks a budget of files by a named strategy, tags them, and
// scores every file's uniqueness among its neighbours (the query field
// uniqueness). Both run as jobs.
//
// Strategies (docs/api.md "Choosing what to label next" says the same):
//
//   - uncertainty: the files whose machine boxes from one operation (a model
//     run's id, or imported predictions with scores) are least sure. A box
//     with confidence p is read as a two-way choice, object or not, with
//     probabilities p and 1-p (a box carries one score, not a distribution
//     over labels), so its uncertainty is, by measure, least_confidence
//     1 - p, margin 1 - |2p - 1| (one minus the gap between the two), or
//     entropy -(p ln p + (1-p) ln(1-p)) / ln 2; all lie in [0, 1]. A file
//     is as uncertain as its most uncertain box (the maximum over its boxes):
//     one doubtful box is what a labeller must look at. Files with no scored
//     box of the operation are not candidates (the run said nothing about
//     them). Highest first.
//   - diversity: k-center greedy over a model's embeddings (Sener & Savarese's
//     core-set selection): the first file is drawn with the seed, then each
//     next one is the file farthest from every file chosen so far. Distances
//     are Euclidean between unit vectors for cosine models (sqrt(2 - 2 cos):
//     the same order as cosine distance, and a metric, so the triangle
//     inequality lets most distance computations be skipped exactly) and
//     Euclidean for l2 models.
//   - uniqueness: the files farthest from their nearest neighbours: a file's
//     uniqueness is the mean distance (cosine distance 1 - cos for cosine
//     models, Euclidean for l2) to its UniquenessK = 3 nearest other files of
//     the pool; highest first. compute_uniqueness stores the same score (over
//     its own pool) for the query field uniqueness.
//   - hybrid: uncertainty-weighted k-center: k-center greedy whose next file
//     maximises uncertainty x distance to the chosen files, starting from the
//     most uncertain file; candidates have both a scored box and a vector.
//     It picks doubtful files without picking many near-copies of one.
//
// Duplicates: by default a selection never chooses two copies of one image.
// Files are copies when they hold the same bytes (the same blob) or when
// find_duplicates put them in one near-duplicate group. Uncertainty and
// uniqueness walk their ranking and skip a file that is a copy of one chosen
// before it; diversity and hybrid keep one file of each set of copies (the
// first in lake order) as a candidate. KeepDuplicates turns this off; the
// result's skippedDuplicates counts the files left out.
//
// Same request and seed, same lake: same selection. Ties are broken by a
// hash of the seed and the file's key in the lake, then by file order. The chosen
// files get the request's tag (made by the selection job: the tag's
// operation is its job id); the tag is the hand-off to labelling, e.g. a
// collection or an annotation task made from the files with that tag.
package labelnext

import (
	"log/slog"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

// Job types.
const (
	SelectJob     = "selection.select"
	UniquenessJob = "selection.uniqueness"
)

// Strategies.
const (
	Uncertainty = "uncertainty"
	Diversity   = "diversity"
	Unique      = "uniqueness"
	Hybrid      = "hybrid"
)

// Strategies lists the strategy names.
var Strategies = []string{Uncertainty, Diversity, Unique, Hybrid}

// Uncertainty measures.
const (
	LeastConfidence = "least_confidence"
	Margin          = "margin"
	Entropy         = "entropy"
)

// Measures lists the measure names; the first is the default.
var Measures = []string{LeastConfidence, Margin, Entropy}

// UniquenessK is how many nearest neighbours a file's uniqueness averages.
const UniquenessK = 3

// MaxBudget bounds a selection's size.
const MaxBudget = 100000

// Request asks for a selection. Field names in errors are the client
// function's parameters (select_samples).
type Request struct {
	Query    string `json:"query"`
	Budget   int    `json:"budget"`
	Strategy string `json:"strategy"`
	RunID    string `json:"runId,omitempty"`   // uncertainty and hybrid
	Model    string `json:"model,omitempty"`   // vector model; diversity, uniqueness and hybrid
	Measure  string `json:"measure,omitempty"` // uncertainty and hybrid; default least_confidence
	Seed     int64  `json:"seed"`
	Tag      string `json:"tag"` // default: the job's id
	// KeepDuplicates lets a selection choose copies of a file it chose
	// already; by default (false) it skips them (see the package comment).
	KeepDuplicates bool `json:"keepDuplicates,omitempty"`
}

// Result is a selection job's result: the chosen files in selection order
// with the score each was chosen by (uncertainty; distance to the files
// chosen before it, 0 for the first; uniqueness; uncertainty x distance).
type Result struct {
	UniqueNames []string  `json:"uniqueNames"`
	Scores      []float64 `json:"scores"`
	Tag         string    `json:"tag"`
	Strategy    string    `json:"strategy"`
	Measure     string    `json:"measure,omitempty"`
	Candidates  int       `json:"candidates"` // pool files the strategy could choose from
	// SkippedDuplicates counts the candidates left out as copies of a file
	// chosen before them (or, for diversity and hybrid, of a file kept in
	// their place); 0 with KeepDuplicates.
	SkippedDuplicates int `json:"skippedDuplicates"`
}

// UniquenessRequest asks for the uniqueness of the files a query selects.
type UniquenessRequest struct {
	Model string `json:"model"`
	Query string `json:"query"`
}

// UniquenessResult is a uniqueness job's result.
type UniquenessResult struct {
	Model  string `json:"model"`
	Files  int    `json:"files"` // files scored (those of the pool with a vector)
	K      int    `json:"k"`
	Metric string `json:"metric"`
}

// Options tune a Service; the zero value is the production default.
type Options struct {
	Workers int // goroutines of the distance loops; default GOMAXPROCS
	Logger  *slog.Logger
}

// Service runs selections over a lake's files and a vector store.
type Service struct {
	lake    *lake.Lake
	vectors *vector.Store
	jobs    *job.Queue
	opt     Options
}
