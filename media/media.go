// Package media is framelake's media store: the bytes of every stored file,
// content-addressed as <sha256>.<ext>, behind one interface (Blobs) with
// two homes, chosen once when the store is opened (OpenStore): a local
// folder (Disk) or an S3-compatible bucket (S3).
//
// Both keep the same local working folder, root/tmp: temp files for bytes
// on their way in (staging, Write), the placing journals that let a crash
// between placing blobs and committing the rows that name them be swept
// (journal.go), and, for a bucket, a bounded cache of copies for the tools
// that read a file by path (stage.go).
//
// The store knows bytes by their hash and nothing else: which rows name a
// blob, and so when one may go, is the database's side (package lake), as
// are probing a file's type and making its thumbnails. media imports no
// package of framelake but errs.
package media

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Key names a blob: the SHA-256 of its bytes in hex and the extension it is
// stored under.
type Key struct{ Hash, Ext string }

// Name is the blob's file name, "<hash>.<ext>".
func (k Key) Name() string { return k.Hash + "." + k.Ext }

// Blobs is a media store. Its methods are safe for concurrent use.
type Blobs interface {
	// URL is the store's media location as the lake records it: "" for
	// the local folder, else the bucket's canonical s3:// URL.
	URL() string

	// CreateTemp creates a file in the store's temp folder for bytes on
	// their way in, such as an upload's parts; the caller removes it, and
	// the next OpenStore removes it if a crash did not.
	CreateTemp(pattern string) (*os.File, error)
	// Write copies r to a temp file while hashing it, accepting at most
	// limit bytes (ErrTooLarge past them): a blob staged, not yet placed.
	Write(r io.Reader, limit int64) (*Pending, error)
	// Place puts a batch of staged blobs in place, durable when it returns
	// without error. The blobs it may create are listed first in a placing
	// journal, durable before any of them is; it returns them, also after
	// a failure part-way, and the journal, which the caller closes (Done)
	// once the rows naming them are committed or the blobs are removed.
	// run runs fn(0..n-1), in parallel where the store gains by it.
	Place(ctx context.Context, batch []Placing, run Runner) (created map[Key]bool, j *Journal, err error)
	// Put stores the bytes of r as the blob hash.ext through a temp file,
	// refusing bytes that do not hash to its name. The bytes are durable
	// when it returns, their name in a local folder after the next Sync.
	Put(ctx context.Context, hash, ext string, r io.Reader) error
	// Sync makes every write and rename in the local folder durable: one
	// syncfs(2) for a batch rather than two fsyncs per file. A bucket has
	// nothing to sync: its objects are durable once it answers.
	Sync() error
	// Leftovers hands over, once, the placing journals a crashed process
	// left, locked by this one until the caller, which can see the rows,
	// has swept their blobs; later calls return nil.
	Leftovers() []*Journal

	// Open opens a blob for reading and seeking (ranged requests for a
	// bucket); a missing blob is errs.NotFound.
	Open(ctx context.Context, hash, ext string) (io.ReadSeekCloser, error)
	// ReadAll returns the blob's bytes.
	ReadAll(ctx context.Context, hash, ext string) ([]byte, error)
	// Local returns a path to read the blob from, for tools that read by
	// path (libvips, ffmpeg, model runs): the blob itself in a local
	// folder, a copy in the stage cache for a bucket. Call release once
	// done with it.
	Local(ctx context.Context, hash, ext string) (path string, release func(), err error)
	// Stat returns the blob's size, ok false when it is absent.
	Stat(ctx context.Context, hash, ext string) (size int64, ok bool, err error)
	// Presign returns a URL that reads the blob without credentials until
	// ttl passes, with name as its download name; "" where the store has
	// no such URL (the local folder).
	Presign(ctx context.Context, hash, ext, name string, ttl time.Duration) (string, error)
	// Walk calls fn for everything the store holds outside its temp
	// folder: blobs by "hash.ext", anything else with blob false and its
	// path relative to the store. For the integrity check.
	Walk(ctx context.Context, fn func(name string, size int64, blob bool)) error

	// Remove deletes a blob; a missing blob is not an error.
	Remove(ctx context.Context, hash, ext string) error
}

// Placing is a staged blob and the extension it is to be placed under.
type Placing struct {
	Pending *Pending
	Ext     string
}

// Key is the blob the placing names.
func (p Placing) Key() Key { return Key{p.Pending.Hash, p.Ext} }

// Pending is a blob written to a temp file, not yet in place.
type Pending struct {
	tmp  string
	Hash string // sha256 hex
	Size int64
	Data []byte // the bytes, kept when at most MemLimit; nil for larger blobs

	pooled bool // Data is a buffer of the pool (getBuf), to give back on Release
}

// MemLimit is the largest blob Write keeps in memory (Pending.Data) for
// probing, so images are not read back from disk; videos and huge images are.
const MemLimit = 64 << 20

// TempPath is the temp file's path, for probes that read it before Place.
func (p *Pending) TempPath() string { return p.tmp }

// Discard removes the temp file.
func (p *Pending) Discard() { os.Remove(p.tmp) }

// Journal is a placing journal: a file of the temp folder listing the blobs
// one batch may create, on disk before they are (journal.go).
type Journal struct{ f *os.File }

// DefaultStageBytes is the default bound of the stage cache: 1 GiB.
const DefaultStageBytes = 1 << 30

// tmpDir is the working folder of the store in the folder root.
func tmpDir(root string) string { return filepath.Join(root, "tmp") }

// Runner runs fn(0..n-1), possibly in parallel, and returns when all have.
type Runner func(n int, fn func(i int))

// ErrTooLarge is wrapped when a blob exceeds the size limit.
var ErrTooLarge = errors.New("file too large")

// ErrWrongHash is returned by Put when the bytes do not hash to the name.
var ErrWrongHash = errors.New("the bytes do not hash to the blob's name")
