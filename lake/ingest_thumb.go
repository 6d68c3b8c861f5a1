package lake

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// linkThumb puts the cache entry b at path as an unnamed file (O_TMPFILE)
// of its folder, written and then linked into place: a reader sees the
// whole entry or none, as with a temp file renamed, with no temp name made
// and removed and no *os.File around it (open, write, link and close: an
// import's grid thumbnail cost 4 system calls where it cost 11). A crash
// before the link leaves nothing to clean up: the kernel frees an unnamed
// file with its last descriptor. An entry there already is kept (entries
// are named by content, so it holds the same bytes). done is false, with
// nothing written, where the kernel or file system has no O_TMPFILE or
// /proc/self/fd does not resolve; the caller writes the entry another way.
func linkThumb(path string, b []byte) (done bool, err error) {
	dir := filepath.Dir(path)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.ENOENT) { // the first entry of its folder
		if err = os.MkdirAll(dir, 0o755); err == nil {
			fd, err = unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		}
	}
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL):
		return false, nil // no O_TMPFILE here
	case err != nil:
		return true, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	for rest := b; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return true, &os.PathError{Op: "write", Path: path, Err: err}
		}
		rest = rest[n:]
	}
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	switch {
	case err == nil || errors.Is(err, unix.EEXIST):
		return true, nil
	case errors.Is(err, unix.ENOENT): // no /proc: the folder is there, the open above made a file in it
		return false, nil
	}
	return true, &os.PathError{Op: "link", Path: path, Err: err}
}
