// Package dataset is framelake's datasets: groups of numbered versions
// (1.0, 2.0, …), each a set of frames cut from the media lake with a class
// list, a train/test/validation split, the boxes of chosen annotation
// sources and optional augmentations, built by a durable job and exported in
// the formats of package format.
//
// The package owns the tables dataset_group, dataset_version and
// version_item. It reads files and boxes through the lake and writes
// augmented frames' bytes into the lake's content-addressed media store;
// those frames are not lake files but items of the version that made them.
//
// Semantics (docs/spec/interface.md 2.4, 2.8, 4.2, and what it leaves open, decided here):
//
//   - Selection: the images of a collection, or of the lake, narrowed by the
//     lake's query and filter. item_type image selects images; image_collection
//     the images of the collections that the query and filter select; dataset
//     the images that are frames of a built version of any dataset (query and
//     filter apply to those files); video the videos the query and filter
//     select, whose frames the build samples (Spec.VideoFrames, video.go).
//     Other files are never items.
//   - Labels (at least one, unique) fix the class order: class id i is the
//     i-th label. Boxes with other labels are left out; a frame without boxes
//     stays in (a negative example).
//   - operation_list: absent or null takes boxes from every annotation project
//     and model run, [] takes none, ids take only those operations. An id is
//     known if an OperationSource (annotation projects, analysis runs) has it
//     or an annotation in the lake carries it, so a project without boxes yet
//     or a run that found nothing is accepted (its frames get no boxes); any
//     other id is refused as unknown.
//   - Splits are stable: a file's split is a pure function of the group's seed
//     (drawn once, at group creation) and its uniqueName. SHA-256 of the seed
//     (8 bytes, little endian) and the uniqueName gives a bucket in [0, 10000);
//     with p = bucket/100, p < train% is train, p >= 100 - test% is test, and
//     the middle is validation. An update never moves a file: items carried
//     from the source version keep the split they had, new files are bucketed
//     with the update's percentages. Create Dataset Version (REST) re-buckets
//     every file with its new percentages; since train grows from the bottom
//     and test from the top, a change moves files only into or out of
//     validation (raising train% only moves files into train). The one
//     exception cannot be avoided with fixed percentages: when the new train%
//     exceeds the old train% + validation% (or test% the old test% +
//     validation%), the new range takes files from the other's old one.
//   - Versions: update_* with is_new_version_required true makes the group's
//     next version holding the source version's frames plus the new ones;
//     false (the default) rebuilds the source version in place. Either way the
//     build reads boxes afresh with the call's labels and operation list. An
//     update's selection (collection, item type, query, filter) must hold at
//     least one image, else it is refused naming the query (or the collection
//     or item type when there is no query) and nothing changes; images already
//     in the version count, so a relabelling update may select only those.
//     augmentation_list absent or null keeps the source version's
//     augmentation (so its augmented frames are made again), a configuration
//     replaces it ({} or one with nothing selected: none); export_types absent
//     or null keeps the source's.
//   - What a version records: the labels, split, export types, operation
//     list and augmentation of its build, the selection it added (source:
//     collection, item type, query, filter) and the version whose frames it
//     carries (baseVersionId); Version shows those of its current build, or
//     of the pending one before any completed.
//   - export_types are the formats a version advertises: checked at creation,
//     stored under their canonical names (format.ParseExportType), listed as exportTypes
//     and first in downloadFormats (every other format follows, since any
//     format can be downloaded), and the format download_dataset uses when it
//     is given no export_type (the first advertised one).
//   - Builds run as jobs of type BuildJob with progress in frames. A build
//     writes its frames apart from the version's visible ones and swaps them in
//     with its statistics in one transaction when it completes. Every version
//     is listed from the moment it is created, with the status of its latest
//     build: building (queued or running), ready, failed or cancelled, and
//     that build's job id. A failed or cancelled build leaves the version as
//     it was (no frames yet, or its previous frames) and can be retried
//     (Retry). Only one build of a version runs at a time.
//   - Augmentation (augmentation_list, docs/spec/interface.md 2.9, validated by package
//     augment) makes AugmentationsPerFrame outputs of every training frame,
//     drawn from the group's seed and the frame's uniqueName, so a rebuild
//     makes the same bytes. An output whose steps repeat an earlier one's of
//     the same frame is left out (a configuration with nothing to draw, such
//     as a flip alone, gives one output), so a version holds no duplicates. Outputs are stored content-addressed in the media
//     store and listed as frames with augmented true, derived_from their
//     source, their steps as params and their moved boxes; they inherit the
//     source's split (train) and count in the statistics. Every export format
//     marks them and names their source (see package format).
//   - Statistics per version: totalFrames and totalBoxes (augmented frames
//     included), augmentedFrames, and frames and boxes per split and per label;
//     with videos, the videos, the frames sampled from them and the track
//     shapes (interpolated ones apart) they carry.
//   - Videos (item_type video, video.go): each frame VideoFrames samples is an
//     item, extracted at that exact frame into the media store, with its
//     tracks' shapes; every frame of a video lands in the video's split.
//   - Exports stream in constant memory: frames are read from the database a
//     page at a time and media is copied from the store as stored, never
//     re-encoded.
//   - Dataset names need not be unique: groups are told apart by id.
//   - Versions are immutable snapshots: a lake file deleted later stays in
//     every version that holds it, with its boxes and augmented frames, and
//     its bytes stay on disk while a version names them (the lake asks
//     namesBlob). Its frames' URLs are then blob URLs. A rebuild, an update
//     or a new version made from such a version reads the lake afresh, so
//     deleted files are not in what it makes.
//   - Deleting a version releases its frames: the rows go, and each blob they
//     named leaves the disk unless a lake file or another version names it.
//     A version whose build is queued or running has the build's job
//     cancelled first (the answer lists it). Deleting a dataset deletes its
//     versions so. Deleting a dataset's last version leaves the (empty)
//     dataset, which Dataset List no longer shows.
package dataset

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"time"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the package's numbered schema files, applied after the
// lake's (items reference lake files) with db.Migrate(ctx, "dataset", ...).
var Migrations, _ = fs.Sub(migrations, "migrations")

// BuildJob is the job type of version builds.
const BuildJob = "dataset.build"

// AugmentationsPerFrame is how many augmented frames each training frame
// gets when a version has an augmentation configuration (fewer when outputs
// would repeat).
const AugmentationsPerFrame = 2

// Paging of Download Dataset (docs/spec/rest.md).
const (
	DefaultPageSize = 100
	MaxPageSize     = 10000
)

// Split names.
const (
	Train      = "train"
	Test       = "test"
	Validation = "validation"
)

// Split is a train/test/validation division in percent; the three sum to 100.
type Split struct {
	Train      float64 `json:"train"`
	Test       float64 `json:"test"`
	Validation float64 `json:"validation"`
}

// Source says which lake images a create or update adds.
type Source struct {
	CollectionID string       `json:"collectionId,omitempty"` // images of this collection
	ItemType     string       `json:"itemType,omitempty"`     // image (default), image_collection, dataset, video
	Query        string       `json:"query,omitempty"`
	Filter       *lake.Filter `json:"filter,omitempty"`
}

// Spec is what every create and update fixes for the version it builds.
type Spec struct {
	Labels      []string `json:"labels"`
	Split       Split    `json:"split"`
	ExportTypes []string `json:"exportTypes"`
	// Operations are the annotation sources: nil for all, empty for none.
	Operations []string `json:"operations"`
	// Augmentation is a docs/spec/interface.md 2.9 configuration; nil or JSON null for none.
	Augmentation json.RawMessage `json:"augmentation,omitempty"`
	// KeepDuplicatesTogether puts each near-duplicate group (as
	// find_duplicates recorded it) in one split: its keeper's.
	KeepDuplicatesTogether bool `json:"keepDuplicatesTogether,omitempty"`
	// SplitIdentical lets byte-identical files (one blob) land in different
	// splits. By default (false) every set of them lands in one split, found
	// from the lake's blobs whether or not find_duplicates ran: with
	// KeepDuplicatesTogether, the split of a group one of them is in, else
	// the split the blob's hash draws.
	SplitIdentical bool `json:"splitIdentical,omitempty"`
	// VideoFrames says which frames of the selected videos become items and
	// which of their tracks' shapes they carry; nil when the build takes no
	// videos (item_type video needs it).
	VideoFrames *VideoFrames `json:"videoFrames,omitempty"`
}

// NewDataset asks for a new group with its version 1.0.
type NewDataset struct {
	Name      string
	Source    Source
	Spec      Spec
	CreatedBy string
}

// Update asks to add a source's images to a version: in place, or into the
// group's next version when NewVersion is set.
type Update struct {
	VersionID  string
	DatasetID  string // optional; must be the version's group when set
	Source     Source
	Spec       Spec
	NewVersion bool
	CreatedBy  string
}

// Created identifies a version whose build was queued.
type Created struct {
	DatasetID string `json:"datasetId"`
	VersionID string `json:"versionId"`
	VersionNo string `json:"versionNo"`
	JobID     string `json:"jobId"`
}

// Count is frames and boxes of a part of a version.
type Count struct {
	Frames    int `json:"frames"`
	Boxes     int `json:"boxes"`
	Augmented int `json:"augmented"` // augmented frames among Frames
}

// Stats describe a version's current build.
type Stats struct {
	TotalFrames     int              `json:"totalFrames"`
	TotalBoxes      int              `json:"totalBoxes"`
	AugmentedFrames int              `json:"augmentedFrames"`
	Splits          map[string]Count `json:"splits"` // train, test, validation
	Labels          map[string]Count `json:"labels"` // frames with the label and its boxes
	// Shapes counts the annotations by type (box, polygon, mask, keypoints,
	// polyline); absent for builds before shapes.
	Shapes map[string]int `json:"shapes,omitempty"`
	// Videos and VideoFrames count the videos sampled and the frames taken
	// from them (among TotalFrames); TrackShapes the shapes of tracks among
	// TotalBoxes, Interpolated those of them interpolated between
	// keyframes. All absent for builds without videos.
	Videos       int `json:"videos,omitempty"`
	VideoFrames  int `json:"videoFrames,omitempty"`
	TrackShapes  int `json:"trackShapes,omitempty"`
	Interpolated int `json:"interpolatedShapes,omitempty"`
	// Leakage is the near-duplicate pairs across splits at build time (by
	// perceptual hash at curate.DefaultHamming); nil for builds before it.
	Leakage *Leakage `json:"leakage,omitempty"`
}

// Version status values: the state of a version's latest build.
const (
	StatusReady     = "ready"     // no build pending; the current build is shown
	StatusBuilding  = "building"  // a build is queued or running
	StatusFailed    = "failed"    // the latest build failed; Retry runs it again
	StatusCancelled = "cancelled" // the latest build was cancelled; Retry runs it again
)

// Version is a dataset version as its group lists it. What its build used
// (labels to augmentation) is the current build's, or the pending build's
// before any completed.
type Version struct {
	ID        string   `json:"versionId"`
	DatasetID string   `json:"datasetId"`
	Dataset   string   `json:"datasetName"`
	VersionNo string   `json:"versionNo"`
	Status    string   `json:"status"`
	JobID     string   `json:"jobId"`           // of the latest build
	Error     string   `json:"error,omitempty"` // why the latest build failed
	Built     bool     `json:"built"`           // has a completed build (frames to show)
	Labels    []string `json:"labels"`
	Split     Split    `json:"split"`
	Export    []string `json:"exportTypes"` // advertised formats, canonical names
	// Formats are every export format, the advertised ones first.
	Formats    []string `json:"downloadFormats"`
	Operations []string `json:"operationList"` // nil: every annotation source
	// Augmentation is the configuration the build applied; nil for none.
	Augmentation json.RawMessage `json:"augmentation"`
	Source       *Source         `json:"source,omitempty"`        // the selection the build added; nil for none
	Base         string          `json:"baseVersionId,omitempty"` // the version whose frames it carries
	VideoFrames  *VideoFrames    `json:"videoFrames,omitempty"`   // how its videos were sampled; nil for none
	Stats        Stats           `json:"stats"`
	CreatedBy    string          `json:"createdBy"` // the name of the API key that asked for it
	CreatedAt    time.Time       `json:"createdAt"`
	BuiltAt      time.Time       `json:"builtAt"`
}

// Group is a dataset group with all its versions, built or not, oldest first.
type Group struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	Versions  []Version `json:"versionList"`
}

// Box is a labelled rectangle of a frame, in pixels from the top-left corner,
// and the shape it is the box of when it is more (docs/shapes.md). Frames an
// augmentation made carry the moved shape, and its box (augment.Box).
type Box struct {
	Label string  `json:"label"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	shape.Geometry
	// Attributes are the annotation's (occluded, iscrowd, a color ...), as
	// its JSON object; omitted when it has none, as versions before them.
	Attributes json.RawMessage `json:"attributes,omitempty"`
	// Track is the video track's number (its id in the video) when the
	// shape is a track's on a sampled frame; Interpolated says the shape was
	// computed between two keyframes rather than drawn.
	Track        *int `json:"track,omitempty"`
	Interpolated bool `json:"interpolated,omitempty"`
}

// Frame is one item of a version: a lake image or an augmented one.
type Frame struct {
	UniqueName  string          `json:"uniqueName"`
	Name        string          `json:"name"`
	Ext         string          `json:"ext"`
	Split       string          `json:"split"`
	Augmented   bool            `json:"augmented"`
	DerivedFrom string          `json:"derivedFrom,omitempty"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	Boxes       []Box           `json:"boxes"`
	Params      json.RawMessage `json:"params,omitempty"` // augmentation steps
	URL         string          `json:"url"`              // signed, expiring
	// Video is the uniqueName of the video a sampled frame was extracted
	// from, and VideoFrame its frame there (0 first); "" and nil for images.
	Video      string `json:"video,omitempty"`
	VideoFrame *int   `json:"videoFrame,omitempty"`

	blob      string
	inLake    bool   // false once the lake file was deleted: the frame is served from its blob
	sourceExt string // of the DerivedFrom frame
}

// Page is one page of a version's frames.
type Page struct {
	Version     Version
	PageIndex   int
	PageSize    int
	TotalFrames int
	Frames      []Frame
}

// Options tune a Service; the zero value is the production default.
type Options struct {
	// Workers is how many frames a build augments at once; default GOMAXPROCS.
	Workers int
	// Batch is how many frames a build writes per transaction; default 32.
	Batch  int
	Logger *slog.Logger
	// Skeletons finds a keypoints label's declaration (point order, edges,
	// flip pairs) for the exports and augmentation; nil: none declared.
	Skeletons shape.SkeletonOf
}

// OperationSource says whether an id names one of its operations: the ids
// annotations carry as their operation (annotation projects, analysis runs).
// The packages owning those tables implement it; the appliance passes them to
// New, so that ids with no annotation yet are known too.
type OperationSource interface {
	HasOperation(ctx context.Context, operation string) (bool, error)
}

// Service manages datasets over a lake and a job queue. It is safe for
// concurrent use.
type Service struct {
	db   *sqlitedb.DB
	lake *lake.Lake
	jobs *job.Queue
	ops  []OperationSource // New's, then the lake (ids its annotations carry)
	opt  Options
	log  *slog.Logger
	now  func() time.Time
}

func millis(t time.Time) int64      { return t.UnixMilli() }
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
