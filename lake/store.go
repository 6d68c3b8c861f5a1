package lake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/framelake/framelake/errs"
)

// DiskStore keeps media content-addressed on local disk:
// root/ab/cd/<sha256>.<ext>. Bytes are written to root/tmp, made durable and
// renamed into place, so a crash leaves either the whole blob or none of it
// (only stray temp files, removed at the next open, and blobs whose rows
// were never committed, removed by the lake: see blobs.go). Identical bytes
// are stored once.
//
// Durability is batched: Sync flushes the whole file system with syncfs(2),
// once for a batch's temp files and once for its renames, instead of two
// fsyncs per file (what made a 640x480 import run at a quarter of its speed).
//
// With a bucket (UseBucket), placed blobs live there instead: temp files and
// journals stay in root/tmp, Commit uploads, and tools that need a path read
// a copy from a bounded stage cache (stage.go).
type DiskStore struct {
	root string
	tmp  string

	bucket *Bucket // nil: blobs live under root
	stage  *stageCache

	refs blobRefs
	// leftover are the placing journals a crashed process left, locked by
	// this one until the lake, which can see the rows, has swept them.
	leftover  []*journal
	sweepOnce sync.Once
}

// OpenDiskStore opens or creates a store at root, clears temp files a crash
// left behind and picks up its placing journals (see blobs.go).
func OpenDiskStore(root string) (*DiskStore, error) {
	s := &DiskStore{root: root, tmp: filepath.Join(root, "tmp"), refs: blobRefs{m: map[blobKey]*blobRef{}}}
	if err := s.clearTemp(); err != nil {
		return nil, fmt.Errorf("media store: clear temp: %w", err)
	}
	if err := os.MkdirAll(s.placingDir(), 0o755); err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	var err error
	if s.leftover, err = s.openLeftovers(); err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	for i := range tmpShards {
		if err := os.MkdirAll(s.tmpDir(i), 0o755); err != nil {
			return nil, fmt.Errorf("media store: %w", err)
		}
	}
	return s, nil
}

// clearTemp removes the temp folder but for its placing journals.
func (s *DiskStore) clearTemp() error {
	ents, err := os.ReadDir(s.tmp)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, e := range ents {
		if err == nil && e.Name() != placingName {
			err = os.RemoveAll(filepath.Join(s.tmp, e.Name()))
		}
	}
	return err
}

// tmpShards is how many folders temp files are spread over: file creation
// holds its folder's lock, and parallel ingest into one folder queued on it.
const tmpShards = 256

func (s *DiskStore) tmpDir(i int) string { return filepath.Join(s.tmp, fmt.Sprintf("%02x", i)) }

// CreateTemp creates a file in the store's temp folder for bytes on their
// way in, such as an upload's parts; the caller removes it, and the next
// open removes it if a crash did not.
func (s *DiskStore) CreateTemp(pattern string) (*os.File, error) {
	return os.CreateTemp(s.tmpDir(rand.N(tmpShards)), pattern)
}

// UseBucket makes b the home of placed blobs; local copies for tools that
// read by path are kept under stageBytes (default DefaultStageBytes).
func (s *DiskStore) UseBucket(b *Bucket, stageBytes int64) error {
	if stageBytes <= 0 {
		stageBytes = DefaultStageBytes
	}
	dir := filepath.Join(s.tmp, "stage")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("media store: %w", err)
	}
	s.bucket, s.stage = b, &stageCache{dir: dir, limit: stageBytes, bucket: b, m: map[blobKey]*staging{}}
	return nil
}

// Bucket is the bucket blobs live in, nil for the local folder.
func (s *DiskStore) Bucket() *Bucket { return s.bucket }

// URL is the store's media location as the lake records it: "" for the
// local folder.
func (s *DiskStore) URL() string {
	if s.bucket == nil {
		return ""
	}
	return s.bucket.URL()
}

// Path is where the blob with hash and ext lives in the local folder; with
// a bucket, use Local.
func (s *DiskStore) Path(hash, ext string) string {
	return filepath.Join(s.root, hash[0:2], hash[2:4], hash+"."+ext)
}

// Local returns a path to read the blob from, a copy in the stage cache
// with a bucket; call release once done with it.
func (s *DiskStore) Local(ctx context.Context, hash, ext string) (path string, release func(), err error) {
	if s.bucket != nil {
		return s.stage.get(ctx, blobKey{hash, ext})
	}
	path = s.Path(hash, ext)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "", nil, errs.NotFoundf("media %s.%s not in store", hash, ext)
	}
	return path, func() {}, nil
}

// ReadAll returns the blob's bytes.
func (s *DiskStore) ReadAll(ctx context.Context, hash, ext string) ([]byte, error) {
	if s.bucket == nil {
		b, err := os.ReadFile(s.Path(hash, ext))
		if errors.Is(err, os.ErrNotExist) {
			return nil, errs.NotFoundf("media %s.%s not in store", hash, ext)
		}
		return b, err
	}
	rc, err := s.bucket.get(ctx, hash, ext)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// has reports whether the blob is in place.
func (s *DiskStore) has(ctx context.Context, k blobKey) (bool, error) {
	if s.bucket != nil {
		_, ok, err := s.bucket.stat(ctx, k.hash, k.ext)
		return ok, err
	}
	_, err := os.Lstat(s.Path(k.hash, k.ext))
	return err == nil, nil
}

// Open opens a stored blob for reading and seeking.
func (s *DiskStore) Open(ctx context.Context, hash, ext string) (io.ReadSeekCloser, error) {
	if s.bucket != nil {
		return s.bucket.open(ctx, hash, ext)
	}
	f, err := os.Open(s.Path(hash, ext))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errs.NotFoundf("media %s.%s not in store", hash, ext)
	}
	return f, err
}

// Presign returns a URL of the bucket that reads the blob until ttl
// passes, or "" for the local folder.
func (s *DiskStore) Presign(ctx context.Context, hash, ext, name string, ttl time.Duration) (string, error) {
	if s.bucket == nil {
		return "", nil
	}
	return s.bucket.presign(ctx, hash, ext, name, ttl)
}

// Remove deletes a blob; a missing blob is not an error.
func (s *DiskStore) Remove(ctx context.Context, hash, ext string) error {
	if s.bucket != nil {
		return s.bucket.remove(ctx, hash, ext)
	}
	err := os.Remove(s.Path(hash, ext))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Pending is a blob written to a temp file, not yet in place.
type Pending struct {
	store *DiskStore
	tmp   string
	Hash  string // sha256 hex
	Size  int64
	Data  []byte // the bytes, kept when at most memLimit; nil for larger blobs
}

// memLimit is the largest blob Write keeps in memory for probing, so images
// are not read back from disk; videos and huge images are.
const memLimit = 64 << 20

// ErrTooLarge is wrapped when a blob exceeds the size limit.
var ErrTooLarge = errors.New("file too large")

// Write copies r to a temp file while hashing it. At most limit bytes are
// accepted. The bytes are durable only after the next Sync.
func (s *DiskStore) Write(r io.Reader, limit int64) (*Pending, error) {
	b, rest, err := readSmall(r, limit)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.tmpDir(rand.N(tmpShards)), "in-*")
	if err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	p := &Pending{store: s, tmp: f.Name()}
	written := false
	defer func() { // also when r panics: the caller may recover and carry on
		if !written {
			f.Close()
			os.Remove(p.tmp)
		}
	}()
	if rest == nil {
		sum := sha256.Sum256(b)
		if _, err := f.Write(b); err != nil {
			return nil, err
		}
		p.Hash, p.Size, p.Data = hex.EncodeToString(sum[:]), int64(len(b)), b
	} else if err := p.copyFrom(f, rest, limit); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	written = true
	return p, nil
}

// readSmall reads r whole when it says its size (a file does) and that is
// at most memLimit and limit: one read into a buffer of that size, where a
// copy through io.Copy's 32 KiB buffer into a growing one made a dozen
// system calls and three copies of a 160 KB photo. Otherwise, or when r
// turns out longer than it said, rest reads all of r's bytes, those read
// here first.
func readSmall(r io.Reader, limit int64) (b []byte, rest io.Reader, err error) {
	st, ok := r.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return nil, r, nil
	}
	info, err := st.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > min(memLimit, limit) {
		return nil, r, nil
	}
	buf := make([]byte, info.Size()+1) // one byte more, to see the end
	n, err := io.ReadFull(r, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return buf[:n:n], nil, nil
	case err != nil:
		return nil, nil, err
	}
	return nil, io.MultiReader(bytes.NewReader(buf), r), nil // it grew meanwhile
}

// copyFrom copies r to f while hashing it and keeping it when it fits memLimit.
func (p *Pending) copyFrom(f *os.File, r io.Reader, limit int64) error {
	h := sha256.New()
	keep := &capped{max: memLimit}
	n, err := io.Copy(io.MultiWriter(f, h, keep), io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
	}
	if err != nil {
		return err
	}
	p.Hash, p.Size = hex.EncodeToString(h.Sum(nil)), n
	if !keep.over {
		p.Data = keep.buf.Bytes()
	}
	return nil
}

// capped keeps what is written to it until it passes max bytes, then drops it.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(b []byte) (int, error) {
	if !c.over && c.buf.Len()+len(b) > c.max {
		c.over = true
		c.buf = bytes.Buffer{}
	}
	if !c.over {
		c.buf.Write(b)
	}
	return len(b), nil
}

// TempPath is the temp file's path, for probes that read it before Commit.
func (p *Pending) TempPath() string { return p.tmp }

// Commit moves the blob into place under ext; call Sync before (so the
// bytes are durable) and after (so the rename is). Renaming over a blob that
// is already there is harmless: its name is the hash of the same bytes.
// With a bucket, the bytes are uploaded, durable once it answers.
func (p *Pending) Commit(ctx context.Context, ext string) error {
	if strings.ContainsAny(ext, `/\.`) || ext == "" {
		return fmt.Errorf("media store: bad extension %q", ext)
	}
	if b := p.store.bucket; b != nil {
		defer os.Remove(p.tmp)
		if p.Data != nil && int64(len(p.Data)) == p.Size { // no second read of the bytes
			return b.putBytes(ctx, p.Hash, ext, p.Data)
		}
		return b.put(ctx, p.Hash, ext, p.tmp)
	}
	dst := p.store.Path(p.Hash, ext)
	err := os.Rename(p.tmp, dst)
	if errors.Is(err, os.ErrNotExist) { // first blob of its folder
		if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
			err = os.Rename(p.tmp, dst)
		}
	}
	if err != nil {
		return fmt.Errorf("media store: %w", err)
	}
	return nil
}

// Discard removes the temp file.
func (p *Pending) Discard() { os.Remove(p.tmp) }

// Sync makes every write and rename in the store durable. With a bucket,
// nothing in the local folder has to outlive a crash but the placing
// journals, which writeJournal syncs itself: a temp file is uploaded from,
// and the bucket makes the object durable. syncfs(2) would write every
// temp file to disk before its upload, and wait for whatever else the
// file system has to flush.
func (s *DiskStore) Sync() error {
	if s.bucket != nil {
		return nil
	}
	d, err := os.Open(s.root)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("media store: syncfs: %w", err)
	}
	return nil
}
