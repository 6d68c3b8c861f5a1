package appliance

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// LockFile is the data folder's lock. Every process that opens the folder
// as an Appliance holds it shared while open, so `framelake check` and
// `framelake restore` can tell whether one is live: they try it exclusive.
// The media store's cross-process guard is its placing journals, which
// cover only blobs an upload creates; an upload that finds its bytes
// already stored relies on an in-process hold instead, so removing a blob
// no row names is safe only with no other process on the folder.
const LockFile = "framelake.lock"

// DataLock is a held lock on a data folder.
type DataLock struct{ f *os.File }

// lockShared blocks until no exclusive holder (a check --repair) is left.
func lockShared(dataDir string) (*DataLock, error) {
	f, err := openLock(dataDir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock data folder: %w", err)
	}
	return &DataLock{f}, nil
}

// TryExclusive takes the data folder's lock exclusively if no process has
// the folder open; ok is false, with a nil lock, when one does. While held,
// servers and imports starting on the folder wait.
func TryExclusive(dataDir string) (l *DataLock, ok bool, err error) {
	f, err := openLock(dataDir)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock data folder: %w", err)
	}
	return &DataLock{f}, true, nil
}

func openLock(dataDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dataDir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data folder: %w", err)
	}
	return f, nil
}

// Release lets go of the lock; nil-safe.
func (l *DataLock) Release() {
	if l != nil {
		l.f.Close()
	}
}
