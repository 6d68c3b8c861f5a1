// Package labelimport brings a folder of media with labels made elsewhere
// (YOLO, COCO, Pascal VOC, CVAT, Label Studio, or none) into the lake: the
// files in batches, each batch's boxes as human annotations written in the
// transaction that stores its files, the split each file came from as its
// metadata, and, with a project, each split as an upload session and task of
// that annotation project. It is the engine of `framelake import` and of the
// import jobs of POST /api/v1/lake/imports, which take an uploaded archive
// (zip, tar, tar.gz) and unpack it under limits (Limits) first.
//
// A re-run skips the files already stored and sets only the boxes that
// differ, so it finishes what a kill or a refusal left; an import job is
// such a re-run when the job queue resumes it after a restart.
package labelimport

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// Summary is what an import did: the CLI's --json and an import job's
// result. Files counts the images and videos sent; Ignored, the other files
// left out. Format says which labels were read (raw: none) and why; Labels,
// what they gave.
type Summary struct {
	Format    format.Format    `json:"format"`
	FormatWhy string           `json:"formatWhy"`
	Files     int              `json:"files"`
	Stored    int              `json:"stored"`
	Skipped   int              `json:"skipped"`
	Rejected  []lake.Rejection `json:"rejected"`
	Ignored   []Ignored        `json:"ignored"`
	Labels    *Labels          `json:"labels,omitempty"`
	Project   *ProjectImport   `json:"project,omitempty"`
	Seconds   float64          `json:"seconds"`
	PerSec    float64          `json:"filesPerSecond"`
}

// Refused counts what the import refused: rejected files and refused labels.
// The CLI exits non-zero when it is not 0.
func (s Summary) Refused() error {
	refused := 0
	if s.Labels != nil {
		refused = s.Labels.Refused
	}
	switch {
	case len(s.Rejected) > 0 && refused > 0:
		return fmt.Errorf("%d file(s) rejected, %d label(s) refused", len(s.Rejected), refused)
	case len(s.Rejected) > 0:
		return fmt.Errorf("%d file(s) rejected", len(s.Rejected))
	case refused > 0:
		return fmt.Errorf("%d label(s) refused", refused)
	}
	return nil
}

// Ignored counts the files of one extension an import left out, and why.
type Ignored struct {
	Ext    string `json:"ext"` // ".xml"; "" for names without one
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// Labels is what the labels of an import gave: the boxes now on the files,
// the files whose boxes changed (none on a re-run), the files per split, and
// every problem counted by kind (the first of each listed).
type Labels struct {
	Operation      string              `json:"operation"`
	Categories     []string            `json:"categories"`
	Boxes          int                 `json:"boxes"`  // every shape kept, boxes or not
	Shapes         map[string]int      `json:"shapes"` // Boxes by shape type (box, polygon, mask, ...)
	FilesChanged   int                 `json:"filesChanged"`
	FilesUnchanged int                 `json:"filesUnchanged"`
	Splits         map[string]int      `json:"splits"`
	Counts         map[format.Kind]int `json:"counts"`
	Refused        int                 `json:"refused"`
	Problems       []format.Problem    `json:"problems"`
	Notes          []string            `json:"notes,omitempty"`
}

// ProjectImport is where an import into an annotation project went: one
// upload session (and task) per split.
type ProjectImport struct {
	ID       string          `json:"projectId"`
	Name     string          `json:"projectName"`
	Created  bool            `json:"created"`
	Labels   []string        `json:"labelsAdded"`
	Sessions []SessionImport `json:"sessions"`
}

// SessionImport is one split's upload session.
type SessionImport struct {
	Split      string `json:"split"`
	Collection string `json:"collection"`
	UploadID   string `json:"uploadId"`
	TaskID     string `json:"taskId"`
	Frames     int    `json:"frames"`
}

// Options say what to import and where.
type Options struct {
	Collection string        // lake collection; required
	Format     format.Format // labels to read; "" is Auto
	Metadata   string        // JSON object stored on every file; "" none
	// Project names (or gives the id of) an annotation project: each split
	// becomes an upload session of it, named after the collection and the
	// split, and the boxes are the project's. A name no project has creates
	// an image project.
	Project  string
	Batch    int                      // files per batch; default 64
	Parallel int                      // batches in flight; default 4
	Progress func(done, rejected int) // after each batch; may be nil
	Files    func(total int)          // once the files to send are known; may be nil
	// Caps bound the boxes and categories kept (zero fields: CapsFromEnv's).
	Caps format.Caps
	// SpillDir is where the boxes wait for their batch, in a hidden
	// temporary file; "" is the system's temporary folder.
	SpillDir string
}

// Environment variables that set an import's caps (format.Caps) for the
// CLI and the server's import jobs alike; unset or not a positive number,
// package format's defaults hold.
const (
	EnvMaxShapesPerFile = "FRAMELAKE_IMPORT_MAX_SHAPES_PER_FILE"
	EnvMaxShapes        = "FRAMELAKE_IMPORT_MAX_SHAPES"
	EnvMaxCategories    = "FRAMELAKE_IMPORT_MAX_CATEGORIES"
)

// CapsFromEnv fills c's zero fields from the environment.
func CapsFromEnv(c format.Caps) format.Caps {
	for _, f := range []struct {
		v   *int
		env string
	}{{&c.ShapesPerFile, EnvMaxShapesPerFile}, {&c.Shapes, EnvMaxShapes}, {&c.Categories, EnvMaxCategories}} {
		if n, err := strconv.Atoi(os.Getenv(f.env)); *f.v <= 0 && err == nil && n > 0 {
			*f.v = n
		}
	}
	return c
}

func (o *Options) defaults() {
	o.Caps = CapsFromEnv(o.Caps)
	if o.Format == "" {
		o.Format = format.Auto
	}
	if o.Batch < 1 {
		o.Batch = 64
	}
	if o.Parallel < 1 {
		o.Parallel = 4
	}
}

// BoxesFunc gives the boxes of the file named name once the lake has
// measured it; nil for an import without labels.
type BoxesFunc func(name string, width, height int) []lake.Box

// Batch is one batch of files of one split, for a Sink.
type Batch struct {
	Paths          []string
	Metadata       json.RawMessage // of each file
	CollectionMeta json.RawMessage // merged into the collection's; nil none
	Boxes          BoxesFunc
	Operation      string            // of the boxes: import:<collection>
	Session        *annotate.Session // with a project: the split's session, whose collection the files go to
	// ImageIDs are the COCO image ids of the batch's files by file name
	// (lake.SetImageIDsTx); nil when the format has none.
	ImageIDs map[string]int64
}

// FileRef is a file the lake stored or already had.
type FileRef struct {
	Name, UniqueName string
	Width, Height    int
}

// Outcome is what a Sink did with a batch.
type Outcome struct {
	Stored, Skipped []FileRef
	Rejected        []lake.Rejection
	Boxes           lake.SetBoxesResult // files whose boxes changed, or were already these
}

// Sink stores a batch: the lake (LakeSink) or a server (the CLI's --url).
type Sink func(ctx context.Context, b Batch) (Outcome, error)

// Limits bound what unpacking an archive may write: a zip bomb or an
// archive of millions of empty entries is refused before it fills the disk.
// The ratio is uncompressed bytes per compressed byte, of each entry (a
// zip's declared sizes; in a tar.gz the compressed bytes read meanwhile)
// and of the whole archive; entries and archives under RatioFloor bytes
// uncompressed are not held to it (a small text file of repeated lines).
// So an archive of n bytes unpacks to at most
// min(MaxBytes, MaxRatio*n + RatioFloor) bytes, none of its files larger
// than MaxEntryBytes.
type Limits struct {
	MaxBytes      int64   // total uncompressed bytes; default DefaultMaxBytes
	MaxEntries    int     // entries of any kind; default DefaultMaxEntries
	MaxEntryBytes int64   // one entry's uncompressed bytes; default DefaultMaxEntryBytes
	MaxRatio      float64 // uncompressed per compressed byte; default DefaultMaxRatio
}

// Default archive limits: room for a COCO-sized data set, not for a bomb.
// Deflate reaches about 1,000:1 on zeros; images and videos hardly
// compress, and annotation JSON or XML rarely past 20:1.
const (
	DefaultMaxBytes      = 64 << 30
	DefaultMaxEntries    = 1_000_000
	DefaultMaxEntryBytes = 4 << 30 // the lake's largest file by default
	DefaultMaxRatio      = 100
	RatioFloor           = 1 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxEntryBytes <= 0 {
		l.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultMaxRatio
	}
	return l
}

// JobType is the job type of an archive import.
const JobType = "lake.import"

// Service runs archive imports as jobs.
type Service struct {
	lake     *lake.Lake
	annotate *annotate.Service
	jobs     *job.Queue
	dir      string // where uploaded archives wait for their job
	limits   Limits
}
