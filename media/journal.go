package media

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A blob is placed before the rows naming it are committed, so a crash never
// leaves a row without its blob, but may leave blobs no row names. So the
// blobs a batch may create are listed first in a placing journal, a file of
// the temp folder that is on disk before they are and flock'ed while its
// batch runs, so no other process sweeps it. The next process to open the
// store takes the journals nobody holds (Leftovers) and the lake, which can
// see the rows, removes their blobs that no row names.

// placingName is the temp subfolder of journals, kept when temp is cleared.
const placingName = "placing"

// placingDir is the folder of journals in the temp folder tmp.
func placingDir(tmp string) string { return filepath.Join(tmp, placingName) }

// newJournal lists keys in a new journal in dir, nil when there are none.
// durable syncs it, file and folder, for a store whose Sync would not.
func newJournal(dir string, keys []Key, durable bool) (*Journal, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	f, err := os.CreateTemp(dir, "add-*")
	if err != nil {
		return nil, fmt.Errorf("media store: %w", err)
	}
	j := &Journal{f}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.Name() + "\n")
	}
	if err = unix.Flock(int(f.Fd()), unix.LOCK_EX); err == nil {
		_, err = f.WriteString(b.String())
	}
	if err == nil && durable {
		err = syncFileAndDir(f)
	}
	if err != nil {
		j.Done(true)
		return nil, fmt.Errorf("media store: journal: %w", err)
	}
	return j, nil
}

// Done closes the journal, removing it when its blobs are settled (named by
// committed rows, or removed); one kept is swept by the next process to
// open the store. A nil journal is done already.
func (j *Journal) Done(settled bool) {
	if j == nil {
		return
	}
	if settled {
		os.Remove(j.f.Name())
	}
	j.f.Close()
}

// Name is the journal's path, for logs.
func (j *Journal) Name() string { return j.f.Name() }

// Keys reads the blobs a journal lists.
func (j *Journal) Keys() ([]Key, error) {
	if _, err := j.f.Seek(0, 0); err != nil {
		return nil, err
	}
	var out []Key
	sc := bufio.NewScanner(j.f)
	for sc.Scan() {
		hash, ext, ok := strings.Cut(sc.Text(), ".")
		if ok && len(hash) == 64 && ext != "" && !strings.ContainsAny(ext, `/\.`) {
			out = append(out, Key{hash, ext})
		}
	}
	return out, sc.Err()
}

// openLeftovers locks the journals in dir no live process holds: those of
// processes that died between placing blobs and committing their rows.
func openLeftovers(dir string) ([]*Journal, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*Journal
	for _, e := range ents {
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR, 0)
		if err != nil {
			continue // swept by another process meanwhile
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				continue // its batch is still running in another process
			}
			return out, err
		}
		out = append(out, &Journal{f})
	}
	return out, nil
}

// Journals is what the placing journals of a media folder list, for the
// integrity check.
type Journals struct {
	Live     map[string]bool // blobs ("hash.ext") of journals a live process holds locked
	DeadKeys map[string]bool // blobs of journals no process holds
	Dead     []string        // names of journals no process holds
}

// ReadJournals reads the placing journals of the media folder dir without
// taking them.
func ReadJournals(dir string) (Journals, error) {
	r := Journals{Live: map[string]bool{}, DeadKeys: map[string]bool{}}
	jdir := placingDir(tmpDir(dir))
	ents, err := os.ReadDir(jdir)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return Journals{}, fmt.Errorf("check media: %w", err)
	}
	for _, e := range ents {
		f, err := os.Open(filepath.Join(jdir, e.Name()))
		if err != nil {
			continue // its batch finished meanwhile
		}
		into := r.DeadKeys
		if errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB), unix.EWOULDBLOCK) {
			into = r.Live
		} else {
			r.Dead = append(r.Dead, e.Name())
		}
		keys, _ := (&Journal{f}).Keys()
		for _, k := range keys {
			into[k.Name()] = true
		}
		f.Close()
	}
	return r, nil
}

// RemoveJournal removes the journal name of the media folder dir, one that
// ReadJournals found dead; a missing one is not an error.
func RemoveJournal(dir, name string) error {
	err := os.Remove(filepath.Join(placingDir(tmpDir(dir)), name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// syncFileAndDir makes f's bytes and its name in its folder durable.
func syncFileAndDir(f *os.File) error {
	if err := fsync(f); err != nil {
		return err
	}
	return syncPath(filepath.Dir(f.Name()))
}
