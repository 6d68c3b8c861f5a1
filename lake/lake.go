// Package lake is framelake's media lake: files (images, videos, other) in a
// content-addressed store, collections of files, custom metadata, tags and
// annotations. Every file gets a uniqueName at ingest that identifies it
// everywhere else (annotation projects, embeddings, datasets).
//
// The lake owns the tables file, collection, collection_file, file_tag,
// collection_tag and annotation. Other packages write tags and annotations
// through it and read them through the query language (lake/query).
//
// Deleting is safe (delete.go): a deleted file takes its memberships, tags,
// annotations and, through delete hooks, its embeddings and upload frames
// with it, but dataset versions that hold it stay whole; a blob leaves the
// disk only once no file, version or upload in progress names it. Every
// delete answers a Deleted: what it removed and what it kept.
package lake

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/media"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the lake's numbered schema files, applied by the appliance
// with db.Migrate(ctx, "lake", lake.Migrations).
var Migrations, _ = fs.Sub(migrations, "migrations")

// FileType is the kind of a lake file.
type FileType string

const (
	Image FileType = "image"
	Video FileType = "video"
	Other FileType = "other"
)

// CollectionType is the kind of a collection, named after what it holds.
type CollectionType string

const (
	ImageCollection CollectionType = "image_collection"
	VideoCollection CollectionType = "video_collection"
	OtherCollection CollectionType = "other_collection"
)

// File is a stored media file.
type File struct {
	ID         string          `json:"id"`
	UniqueName string          `json:"uniqueName"`
	Name       string          `json:"name"`
	Type       FileType        `json:"type"`
	Blob       string          `json:"blob"` // sha256 hex of the bytes
	Ext        string          `json:"ext"`
	MIME       string          `json:"mime"`
	Size       int64           `json:"fileSize"`
	Format     string          `json:"format"`
	Width      int             `json:"width,omitempty"`
	Height     int             `json:"height,omitempty"`
	FrameCount int             `json:"frameCount,omitempty"`
	FrameRate  float64         `json:"frameRate,omitempty"`
	Duration   float64         `json:"duration,omitempty"`
	VideoIndex *int            `json:"videoIndex,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`

	seq int64
}

// Seq is the file's internal integer key, for packages that join on it.
func (f File) Seq() int64 { return f.seq }

// Collection is a named set of files.
type Collection struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Type      CollectionType  `json:"contentType"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	UpdatedAt time.Time       `json:"updatedAt"`

	seq int64
}

// Seq is the collection's internal integer key.
func (c Collection) Seq() int64 { return c.seq }

// DefaultMaxPixels is the default of Options.MaxPixels: augment's limit
// (augment.MaxPixels), so every image the lake takes can be augmented, and
// a 7 MB PNG claiming 50000x50000 pixels does not cost half a minute of CPU.
const DefaultMaxPixels = 100_000_000

// DefaultFacetSample is Options.FacetSample when not set. An estimate
// from the newest n selected files of a value that k% of them have is off
// by about sqrt(k(100-k)/n) points, 0.9 at k = 50 for n = 3,000 (0.7 for
// 5,000, the default until 2026-11-28); every count the sidebar derives
// from the sample costs in proportion to n, and 3,000 keeps a label click
// at a million files under 300 ms on two cores (docs/benchmarks.md).
const DefaultFacetSample = 3000

// Options configure a Lake. MediaDir and SigningKey are required.
type Options struct {
	MediaDir    string        // root of the content-addressed store
	SigningKey  []byte        // HMAC key for media URLs
	BaseURL     string        // prefix of media URLs, e.g. "http://127.0.0.1:8080"
	URLTTL      time.Duration // lifetime of a signed URL; default 24h
	MaxFileSize int64         // largest accepted file; default 4 GiB
	Workers     int           // files processed at once during ingest; default 2*GOMAXPROCS
	FFprobe     string        // ffprobe binary; default looked up on PATH
	// ProbeTimeout bounds one ffprobe run, so a file that makes it hang
	// fails its upload instead of holding it; default 60s.
	ProbeTimeout time.Duration
	// MaxPixels is the largest image accepted, width times height, read
	// from the header before anything is decoded; default DefaultMaxPixels.
	MaxPixels int
	// PageBudget is how long a listing may walk the sort index (the plan that
	// wins when matches are common) before the set-driven plan (the one that
	// wins when they are rare, or when a typo matches nothing) takes over;
	// default 30ms.
	PageBudget time.Duration
	// FacetSample is how many selected files (the newest) the sidebar's
	// counts (SetCounts, Histogram, ClauseCounts) read of a selection of
	// more files, scaling their counts to all of them; default
	// DefaultFacetSample.
	FacetSample int
	// DeepPage is how many rows deep a page of every file of a type starts
	// at least before it may be read from the listing's far end (see
	// tailPageSQL); default 10,000.
	DeepPage int
	// ThumbDir caches display thumbnails; "": made on every request.
	ThumbDir string
	// Media is where media lives: "" for what the database records (the
	// local folder MediaDir for a new lake), or an s3:// URL
	// (media.CanonicalURL), recorded when the lake has no file yet; MediaDir
	// then holds only temp files and staged copies.
	Media string
	// MediaRedirect makes media links of a bucket lake redirect to a
	// presigned object URL instead of the server sending the bytes.
	MediaRedirect bool
	// StageBytes bounds the local copies of bucket media kept for libvips,
	// ffmpeg and model runs; default DefaultStageBytes.
	StageBytes int64
	Logger     *slog.Logger
}

// Lake is the media lake. It is safe for concurrent use.
type Lake struct {
	db      *sqlitedb.DB
	store   media.Blobs
	opt     Options
	ffprobe string // "" when ffprobe is missing: videos are then refused
	log     *slog.Logger
	now     func() time.Time

	// fileByName is File's statement, prepared once: parsing its column
	// list cost a quarter of a details call.
	fileByName *sql.Stmt

	// thumbSlots bounds thumbnails made at once: a grid asks for hundreds,
	// and each decode holds memory and a core.
	thumbSlots chan struct{}
	frames     *frameCache // decoded video frames for the workspace (VideoFrame)

	kept    kept        // samples and counts of selections that estimates are made from
	anchors anchorCache // deep pages' anchors (anchors.go)
	// fallbacks counts listings whose page budget ran out (see walk).
	fallbacks atomic.Int64

	deleteHooks []DeleteHook
	scorer      *Scorer // quality at ingest; nil: none (ScoreAtIngest)
	blobUsers   []BlobUser
	refs        blobRefs  // blobs Adds in flight may yet name (blobs.go)
	sweepOnce   sync.Once // sweeps the placing journals a crash left, before the first write
}

// Open opens the lake on a migrated database.
func Open(ctx context.Context, db *sqlitedb.DB, opt Options) (*Lake, error) {
	if len(opt.SigningKey) < 16 {
		return nil, fmt.Errorf("lake: signing key of at least 16 bytes required")
	}
	if opt.URLTTL <= 0 {
		opt.URLTTL = 24 * time.Hour
	}
	if opt.MaxFileSize <= 0 {
		opt.MaxFileSize = 4 << 30
	}
	if opt.PageBudget <= 0 {
		opt.PageBudget = 30 * time.Millisecond
	}
	if opt.FacetSample <= 0 {
		opt.FacetSample = DefaultFacetSample
	}
	if opt.DeepPage <= 0 {
		opt.DeepPage = 10_000
	}
	if opt.Workers <= 0 {
		opt.Workers = 2 * runtime.GOMAXPROCS(0)
	}
	if opt.ProbeTimeout <= 0 {
		opt.ProbeTimeout = 60 * time.Second
	}
	if opt.MaxPixels <= 0 {
		opt.MaxPixels = DefaultMaxPixels
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := vips.Start(); err != nil {
		return nil, err
	}
	where, err := resolveMedia(ctx, db, opt.Media)
	if err != nil {
		return nil, err
	}
	store, err := media.OpenStore(ctx, opt.MediaDir, where, opt.StageBytes)
	if err != nil {
		return nil, err
	}
	l := &Lake{db: db, store: store, opt: opt, log: opt.Logger, now: time.Now,
		thumbSlots: make(chan struct{}, max(1, runtime.NumCPU())), frames: newFrameCache(DefaultFrameCacheBytes)}
	if l.fileByName, err = db.Point.PrepareContext(ctx, `SELECT `+fileColumns+` FROM file f WHERE f.unique_name = ?`); err != nil {
		return nil, fmt.Errorf("lake: prepare: %w", err)
	}
	l.ffprobe = opt.FFprobe
	if l.ffprobe == "" {
		l.ffprobe, _ = exec.LookPath("ffprobe")
	}
	if l.ffprobe == "" {
		l.log.Warn("ffprobe not found: video uploads will be refused; install ffmpeg")
	}
	return l, nil
}

// DB is the database the lake lives in, for packages that join on its tables.
func (l *Lake) DB() *sqlitedb.DB { return l.db }

// OpenMedia returns the bytes of a stored file.
func (l *Lake) OpenMedia(ctx context.Context, f File) (io.ReadSeekCloser, error) {
	return l.store.Open(ctx, f.Blob, f.Ext)
}

// MediaRedirect returns the presigned bucket URL a media link of f
// redirects to, or "" when the server sends the bytes itself.
func (l *Lake) MediaRedirect(ctx context.Context, f File) (string, error) {
	if !l.opt.MediaRedirect {
		return "", nil
	}
	return l.store.Presign(ctx, f.Blob, f.Ext, f.Name, min(l.opt.URLTTL, 7*24*time.Hour))
}

func millis(t time.Time) int64      { return t.UnixMilli() }
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
