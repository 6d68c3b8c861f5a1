package media

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// staging is the local working folder both stores keep, root/tmp: temp
// files of bytes on their way in, spread over tmpShards folders, and the
// placing journals (journal.go). Bytes are written here, hashed, made
// durable and only then placed, so a crash leaves either a whole blob or
// none of it (only stray temp files, removed at the next open, and blobs
// whose rows were never committed, which the journals let the lake sweep).
type staging struct {
	root string
	tmp  string

	mu       sync.Mutex
	leftover []*Journal // taken by Leftovers
}

// openStaging opens or creates the working folder of root, clears temp files
// a crash left behind and picks up its placing journals.
func openStaging(root string) (*staging, error) {
	s := &staging{root: root, tmp: tmpDir(root)}
	if err := s.clearTemp(); err != nil {
		return nil, fmt.Errorf("media store: clear temp: %w", err)
	}
	if err := os.MkdirAll(placingDir(s.tmp), 0o755); err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	var err error
	if s.leftover, err = openLeftovers(placingDir(s.tmp)); err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	for i := range tmpShards {
		if err := os.MkdirAll(s.tmpShard(i), 0o755); err != nil {
			return nil, fmt.Errorf("media store: %w", err)
		}
	}
	return s, nil
}

// clearTemp removes the temp folder but for its placing journals.
func (s *staging) clearTemp() error {
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

func (s *staging) tmpShard(i int) string { return filepath.Join(s.tmp, fmt.Sprintf("%02x", i)) }

func (s *staging) CreateTemp(pattern string) (*os.File, error) {
	return os.CreateTemp(s.tmpShard(rand.N(tmpShards)), pattern)
}

// journal lists keys in a new placing journal (journal.go), nil when there
// are none; durable syncs it, for a store whose Sync would not.
func (s *staging) journal(keys []Key, durable bool) (*Journal, error) {
	return newJournal(placingDir(s.tmp), keys, durable)
}

func (s *staging) Leftovers() []*Journal {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.leftover
	s.leftover = nil
	return out
}

func (s *staging) Write(r io.Reader, limit int64) (*Pending, error) {
	b, rest, err := readSmall(r, limit)
	if err != nil {
		return nil, err
	}
	if rest == nil {
		p, err := s.writeSmall(b)
		if err != nil {
			putBuf(b)
		}
		return p, err
	}
	f, err := s.CreateTemp("in-*")
	if err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	p := &Pending{tmp: f.Name()}
	written := false
	defer func() { // also when r panics: the caller may recover and carry on
		if !written {
			f.Close()
			os.Remove(p.tmp)
		}
	}()
	if err := p.copyFrom(f, rest, limit); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	written = true
	return p, nil
}

// writeSmall hashes bytes read whole and writes them to a new temp file
// with three system calls, open, write and close: an os.File added four
// fcntl and an epoll_ctl to them, a third of an import's system calls.
func (s *staging) writeSmall(b []byte) (*Pending, error) {
	sum := sha256.Sum256(b)
	var fd int
	var tmp string
	var err error
	for try := 0; ; try++ { // as os.CreateTemp names them, without its *os.File
		tmp = filepath.Join(s.tmpShard(rand.N(tmpShards)), "in-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		fd, err = unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err != unix.EEXIST || try == 100 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("media store: open %s: %w", tmp, err)
	}
	for rest := b; len(rest) > 0 && err == nil; {
		var n int
		if n, err = unix.Write(fd, rest); err == nil {
			rest = rest[n:]
		} else if err == unix.EINTR {
			err = nil
		}
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("media store: write %s: %w", tmp, err)
	}
	return &Pending{tmp: tmp, Hash: hex.EncodeToString(sum[:]), Size: int64(len(b)), Data: b, pooled: true}, nil
}

// bufPool holds the buffers readSmall reads files into once their Pending
// is done with them (Release), each of at most maxPooled bytes: an import
// reads a photo a file, and each read into a new buffer grew the heap by its
// size between collections, the kernel faulting in every page of it; the
// read alone took 7 to 10 times the CPU it takes into a buffer in use.
var bufPool sync.Pool // of *[]byte

const (
	maxPooled = 4 << 20
	poolRound = 64 << 10 // a pooled buffer's capacity is a multiple of this
)

// getBuf is a buffer of n bytes, from the pool when one there is large enough.
func getBuf(n int) []byte {
	if n <= maxPooled {
		if v, ok := bufPool.Get().(*[]byte); ok && cap(*v) >= n {
			return (*v)[:n]
		}
		return make([]byte, n, (n+poolRound-1)/poolRound*poolRound)
	}
	return make([]byte, n)
}

// putBuf gives a buffer of getBuf back to the pool.
func putBuf(b []byte) {
	if c := cap(b); c > 0 && c <= maxPooled && c%poolRound == 0 {
		b = b[:0]
		bufPool.Put(&b)
	}
}

// Release drops Data, handing it back for a later Write to read into when
// Write made it: call it only when nothing holds Data or a slice of it any
// more (the lake does once its checks and scores have read the bytes).
func (p *Pending) Release() {
	if p.pooled {
		putBuf(p.Data)
	}
	p.Data, p.pooled = nil, false
}

// readSmall reads r whole when it says its size (a file does) and that is
// at most MemLimit and limit: one read into a buffer of that size, where a
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
	if err != nil || !info.Mode().IsRegular() || info.Size() > min(MemLimit, limit) {
		return nil, r, nil
	}
	buf := getBuf(int(info.Size()) + 1) // one byte more, to see the end
	n, err := io.ReadFull(r, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return buf[:n], nil, nil
	case err != nil:
		putBuf(buf)
		return nil, nil, err
	}
	return nil, io.MultiReader(bytes.NewReader(buf), r), nil // it grew meanwhile
}

// copyFrom copies r to f while hashing it and keeping it when it fits MemLimit.
func (p *Pending) copyFrom(f *os.File, r io.Reader, limit int64) error {
	h := sha256.New()
	keep := &capped{max: MemLimit}
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

// checkExt refuses an extension that is empty or could leave the blob's
// folder or read as two.
func checkExt(ext string) error {
	if strings.ContainsAny(ext, `/\.`) || ext == "" {
		return fmt.Errorf("media store: bad extension %q", ext)
	}
	return nil
}

// newKeys lists the batch's distinct blobs that are not in place already,
// as inPlace says (nil: every blob counts as new).
func newKeys(batch []Placing, inPlace func(Key) bool) (created map[Key]bool, news []Key) {
	created = map[Key]bool{}
	seen := map[Key]bool{}
	for _, p := range batch {
		k := p.Key()
		if seen[k] {
			continue
		}
		seen[k] = true
		if inPlace == nil || !inPlace(k) {
			created[k] = true
			news = append(news, k)
		}
	}
	return created, news
}

func discardAll(batch []Placing) {
	for _, p := range batch {
		p.Pending.Discard()
	}
}

// putThrough copies r to a new temp file in the temp folder while hashing
// it, checks the hash against the blob's name, and hands the closed file to
// place; sync makes its bytes durable first. The temp file is removed after.
func (s *staging) putThrough(hash, ext string, r io.Reader, sync bool, place func(tmp string) error) error {
	if err := os.MkdirAll(s.tmp, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.tmp, "migrate-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), r)
	if err == nil && hex.EncodeToString(h.Sum(nil)) != hash {
		err = ErrWrongHash
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(f.Name())
	}
	return err
}
