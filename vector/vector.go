// Package vector stores embedding vectors of lake files in sqlite-vec and
// answers exact nearest-neighbour queries over them.
//
// Storage. Each model (embedding_model: name, dim, metric) gets its own vec0
// table vec_<modelseq> holding float32 vectors; its rowid is the lake file's
// seq, so a file has at most one vector per model and re-inserting replaces
// it. Table names are made from the integer model seq, never from user text.
// sqlite-vec is the durable store: everything can be rebuilt from it.
//
// Dependency on the lake: uniqueNames become file seqs and back through lake
// functions (lake/vector_support.go, as the lake alone writes SQL on its
// tables), and each model has one AFTER DELETE trigger on the lake's file
// table (lake.FileDeleteTriggerSQL), so deleting a lake file deletes its
// vectors in the same transaction whatever code path deletes it.
// Store.DeleteFiles does the same explicitly for callers that want it; both are
// idempotent, so using both is harmless. A lake migration that rebuilds the
// file table drops the triggers; Open re-creates missing ones and then removes
// vectors whose file is gone.
//
// Search. sqlite-vec's vec0 KNN is an exact brute-force scan, slow in the
// transpiled driver (about 1 µs per 512-d vector). So each model can have an
// in-memory copy: float32 rows (unit length for cosine) with their file seqs,
// and the same rows quantized to 7 bits a component. A search scans the
// quantized rows on all cores for bounds on every score, then scores exactly
// the few rows that can be in the top k (quant.go): the answer is the one a
// scan of the float32 rows gives, ties included. The copy costs dim*5 bytes
// plus about 50 bytes per vector (512-d: 2.6 KB; 100k vectors 260 MB, 1M
// vectors 2.6 GB) and is bounded by Options.CacheBytes; a model that does not
// fit, or whose copy is still loading, is searched by sqlite-vec itself. Both
// paths are exact.
// The copy is kept current through the embedding_change log, which every write
// (inserts here, deletes by trigger, other processes) appends to; a search
// first applies log entries it has not seen.
//
// A batch given a session_id (InsertSession) is recorded as a completed lake
// job in the transaction that writes its vectors. The HTTP layer owns the
// other client-function rules (a batch below 100 records) and maps errs
// codes to statuses; error fields
// here use the client functions' parameter names (embedding_list,
// model_name, vector_dimension, unique_name, k).
package vector

import (
	"embed"
	"io/fs"
	"sync"
	"time"

	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are this package's numbered schema files; the appliance applies
// them with sqlitedb.DB.Migrate(ctx, "vector", vector.Migrations) after the
// lake's (the triggers reference the lake's file table).
var Migrations fs.FS = mustSub(migrationFiles, "migrations")

func mustSub(f embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return sub
}

// Limits.
const (
	MaxBatch = 99   // records per insert_image_embeddings_batch call (the interface says below 100)
	MaxK     = 1000 // neighbours per search
	MaxDim   = 8192 // sqlite-vec's vec0 limit on float dimensions
	// MaxModelName bounds model names, which appear in errors and listings.
	MaxModelName = 200
)

// Metrics a model can use; the default is Cosine.
const (
	Cosine = "cosine" // distance 1 - cos(a, b), in [0, 2]
	L2     = "l2"     // Euclidean distance
)

// Defaults for Options.
const (
	DefaultCacheBytes  = 2 << 30
	DefaultInsertBatch = 1000
)

// Options tune a Store; the zero value is the production default.
type Options struct {
	// CacheBytes bounds the in-memory copies of all models together. 0 means
	// DefaultCacheBytes; negative disables them (every search uses sqlite-vec).
	CacheBytes int64
	// Workers is the number of goroutines one search scans with; 0 = GOMAXPROCS.
	Workers int
	// InsertBatch is the number of records InsertMany commits per transaction.
	InsertBatch int
	// NoBackgroundLoad stops a search from starting to load a model's copy;
	// copies are then loaded only by Warm.
	NoBackgroundLoad bool
}

// Store reads and writes vectors. It is safe for concurrent use.
type Store struct {
	db  *sqlitedb.DB
	opt Options

	mu     sync.Mutex
	caches map[int64]*modelCache // by model seq
	used   int64                 // bytes held by loaded copies
	loads  sync.WaitGroup
	closed chan struct{}
	jobs   *job.Queue // runs projection jobs; nil until HandleProjections
	// projMu makes RefreshProjection's look-then-enqueue one step, so two
	// requests for a stale map start one job.
	projMu sync.Mutex
}

// SessionJob is the job type InsertSession records a batch under.
const SessionJob = "embedding_insert"

// SessionResult is the result of a SessionJob, as the job listing shows it.
type SessionResult struct {
	SessionID   string `json:"sessionId"`
	ModelName   string `json:"modelName"`
	UpsertCount int    `json:"upsertCount"`
}

// Record is one vector for one lake file.
type Record struct {
	UniqueName string
	Vector     []float32
}

// Model is a registered embedding model.
type Model struct {
	Name      string
	Dim       int
	Metric    string
	CreatedAt time.Time
	Cached    bool // whether an in-memory copy is loaded
	CacheRows int  // vectors in the copy, when Cached
}

// SearchQuery asks for the K nearest neighbours of a lake file's vector
// (UniqueName) or of Vector; exactly one of the two is set.
type SearchQuery struct {
	Model      string
	UniqueName string
	Vector     []float32
	K          int
	Filter     *Filter // nil: all files with a vector for Model
	// IncludeSelf keeps the file named by UniqueName in the results; by
	// default it is left out, as it is always its own nearest neighbour.
	IncludeSelf bool
}

// Filter restricts a search to some lake files before ranking (a pre-filter:
// results are the exact top K of the allowed set). Both parts, when set, must
// hold.
type Filter struct {
	// Where is a boolean SQL expression over `file AS f` with ? placeholders
	// bound to Args, as the lake query compiler produces. It is spliced into
	// SQL, so it must come from code, never from user text.
	Where string
	Args  []any
	// Seqs, when non-nil, lists the allowed file seqs (empty allows none).
	Seqs []int64
}

// Hit is one neighbour.
type Hit struct {
	UniqueName string
	Distance   float64
}

// ProjectionJob is the job type that fits or updates a model's embedding map.
const ProjectionJob = "embedding_projection"

// Projection statuses.
const (
	ProjectionNone      = "none"      // never computed and no job asked for
	ProjectionCurrent   = "current"   // every vector is on the map
	ProjectionComputing = "computing" // a job is queued or running (JobID)
	ProjectionStale     = "stale"     // vectors arrived since; no job runs
	ProjectionFailed    = "failed"    // the latest job failed (Error) and nothing changed since
)

// Projection is the state of a model's embedding map (see projection.go).
type Projection struct {
	Model       string    `json:"modelName"`
	Method      string    `json:"method"`
	Status      string    `json:"status"`
	JobID       string    `json:"jobId,omitempty"`
	Error       string    `json:"error,omitempty"`
	VectorCount int       `json:"vectorCount"`
	PointCount  int       `json:"pointCount"`
	FittedCount int       `json:"fittedCount"` // vectors at the last full fit
	ComputedAt  time.Time `json:"computedAt,omitzero"`
}

// Point is one file's place on an embedding map.
type Point struct {
	Seq        int64
	UniqueName string
	X, Y       float32
}

// model is a registry row.
type model struct {
	seq       int64
	name      string
	dim       int
	metric    string
	table     string
	createdAt int64
}
