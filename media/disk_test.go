package media

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// syncLog records the fsyncs (by path relative to the store) and syncfs(2)
// calls a placing makes, still making them.
type syncLog struct {
	mu      sync.Mutex
	root    string
	fsynced []string
	syncfs  int
}

func watchSyncs(t *testing.T, root string) *syncLog {
	l := &syncLog{root: root}
	oldFsync, oldSyncfs := fsync, syncfs
	t.Cleanup(func() { fsync, syncfs = oldFsync, oldSyncfs })
	fsync = func(f *os.File) error {
		rel, _ := filepath.Rel(root, f.Name())
		l.mu.Lock()
		l.fsynced = append(l.fsynced, rel)
		l.mu.Unlock()
		return f.Sync()
	}
	syncfs = func(fd int) error {
		l.mu.Lock()
		l.syncfs++
		l.mu.Unlock()
		return oldSyncfs(fd)
	}
	return l
}

func (l *syncLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fsynced, l.syncfs = nil, 0
}

func serial(n int, fn func(int)) {
	for i := range n {
		fn(i)
	}
}

func parallel(n int, fn func(int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}

// TestPlaceUploadFsyncsItsOwnFiles: placing one upload makes durable what
// it wrote, and only that: the journal and its folder, the blob's bytes, its
// folder and the folders made for it, by fsync, and never flushes the whole
// file system with syncfs(2), which also waits for every other write on it
// (issue 31 item 17: an upload's two syncfs were its p99). A large batch, an
// import's, still costs two syncfs in all rather than two fsyncs a file.
func TestPlaceUploadFsyncsItsOwnFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openStaging(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &Disk{staging: st}
	log := watchSyncs(t, dir)
	put := func(body []byte) *Pending {
		p, err := s.Write(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	body := []byte("one upload's bytes")
	p := put(body)
	tmp, _ := filepath.Rel(dir, p.TempPath())
	created, j, err := s.Place(ctx, []Placing{{Pending: p, Ext: "jpg"}}, parallel)
	if err != nil {
		t.Fatal(err)
	}
	if !created[Key{p.Hash, "jpg"}] || j == nil {
		t.Fatalf("created %v, journal %v: want the blob created and journalled", created, j)
	}
	jname, _ := filepath.Rel(dir, j.Name())
	j.Done(true)
	if got, _ := os.ReadFile(s.Path(p.Hash, "jpg")); !bytes.Equal(got, body) {
		t.Fatalf("placed blob reads %q", got)
	}
	ab, cd := p.Hash[:2], filepath.Join(p.Hash[:2], p.Hash[2:4])
	want := []string{jname, filepath.Join("tmp", placingName), tmp, cd, ab, "."}
	slices.Sort(want)
	slices.Sort(log.fsynced)
	if log.syncfs != 0 || !slices.Equal(log.fsynced, want) {
		t.Fatalf("one upload: %d syncfs, fsyncs %q; want no syncfs and fsyncs %q", log.syncfs, log.fsynced, want)
	}

	// The same bytes again: nothing new to journal, and the blob's folder is
	// synced (the blob may be another batch's, not yet durable).
	log.reset()
	p = put(body)
	tmp, _ = filepath.Rel(dir, p.TempPath())
	created, j, err = s.Place(ctx, []Placing{{Pending: p, Ext: "jpg"}}, serial)
	if err != nil || len(created) != 0 || j != nil {
		t.Fatalf("the same bytes again: created %v, journal %v, %v", created, j, err)
	}
	want = []string{tmp, cd}
	slices.Sort(want)
	slices.Sort(log.fsynced)
	if log.syncfs != 0 || !slices.Equal(log.fsynced, want) {
		t.Fatalf("a blob already there: %d syncfs, fsyncs %q; want fsyncs %q", log.syncfs, log.fsynced, want)
	}

	log.reset()
	var batch []Placing
	for i := range smallBatch + 1 {
		batch = append(batch, Placing{Pending: put(fmt.Appendf(nil, "import file %d", i)), Ext: "png"})
	}
	created, j, err = s.Place(ctx, batch, parallel)
	if err != nil || len(created) != smallBatch+1 {
		t.Fatalf("a large batch: created %d of %d, %v", len(created), smallBatch+1, err)
	}
	j.Done(true)
	if log.syncfs != 2 || len(log.fsynced) != 0 {
		t.Fatalf("a batch of %d: %d syncfs and fsyncs %q; want 2 syncfs and no fsync", len(batch), log.syncfs, log.fsynced)
	}
	for _, pl := range batch {
		if _, err := os.Stat(s.Path(pl.Pending.Hash, "png")); err != nil {
			t.Fatal(err)
		}
	}
}
