package analysis

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/framelake/framelake/errs"
)

// unpackLimits bound what an archive may hold once unpacked.
type unpackLimits struct {
	bytes int64
	files int
}

// unpack extracts a .tar.gz into dest (which must exist and be empty),
// refusing absolute paths, "..", entries written through links, links that
// resolve outside dest, device files, and archives over the limits. It
// returns the bytes written.
func unpack(r io.Reader, dest string, lim unpackLimits) (int64, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return 0, errs.Invalid("package", "the package is not a .tar.gz archive: %v", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var written int64
	var links []string
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return written, errs.Invalid("package", "the package archive is damaged: %v", err)
		}
		if n >= lim.files {
			return written, errs.New(errs.TooLarge, "package", "the package has more than %d files", lim.files)
		}
		name, err := entryName(h.Name)
		if err != nil || name == "." {
			if err != nil {
				return written, err
			}
			continue
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		if err := noLinkParents(dest, name); err != nil {
			return written, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if fi, serr := os.Lstat(target); serr == nil && !fi.IsDir() {
				err = errs.Invalid("package", "archive entry %s appears twice, as a file and a folder", name)
			} else {
				err = os.MkdirAll(target, 0o755)
			}
		case tar.TypeReg:
			var nb int64
			nb, err = writeEntry(tr, target, h.FileInfo().Mode(), lim.bytes-written)
			written += nb
		case tar.TypeSymlink:
			err = symlinkEntry(name, h.Linkname, target)
			links = append(links, target)
		case tar.TypeLink:
			err = hardlinkEntry(dest, h.Linkname, target)
		case tar.TypeXGlobalHeader:
		default:
			err = errs.Invalid("package", "archive entry %q is a special file (type %q); only files, folders and links are allowed", h.Name, string(h.Typeflag))
		}
		if err != nil {
			return written, err
		}
	}
	return written, checkLinks(dest, links)
}

// entryName cleans an archive path, refusing absolute ones and "..".
func entryName(raw string) (string, error) {
	if strings.HasPrefix(raw, "/") || strings.Contains(raw, "\\") || filepath.IsAbs(raw) {
		return "", errs.Invalid("package", "archive entry %q has an absolute path", raw)
	}
	for _, part := range strings.Split(raw, "/") {
		if part == ".." {
			return "", errs.Invalid("package", "archive entry %q leaves the package folder (..)", raw)
		}
	}
	return path.Clean(raw), nil
}

// noLinkParents refuses an entry whose parent folders include a link, so no
// write ever goes through one.
func noLinkParents(dest, name string) error {
	dir := dest
	parts := strings.Split(name, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return errs.Invalid("package", "archive entry %q is written through a link", name)
		}
		if !fi.IsDir() {
			return errs.Invalid("package", "archive entry %q is inside %q, which the archive made a file", name, p)
		}
	}
	return nil
}

func writeEntry(r io.Reader, target string, mode os.FileMode, room int64) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return 0, err
	}
	perm := os.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return 0, errs.Invalid("package", "archive entry %s appears twice", filepath.Base(target))
		}
		return 0, err
	}
	src := &readErr{r: io.LimitReader(r, room+1)}
	n, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case src.err != nil:
		return n, errs.Invalid("package", "the package archive is damaged: %v", src.err)
	case err != nil:
		return n, err // the disk's: internal, its path only in the log
	}
	if n > room {
		return n, errs.New(errs.TooLarge, "package", "the unpacked package is larger than the limit")
	}
	return n, nil
}

// readErr remembers a read error, so a damaged archive is told from a
// failing disk, whose error text names server paths.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

func symlinkEntry(name, link, target string) error {
	if link == "" || path.IsAbs(link) {
		return errs.Invalid("package", "link %q points to %q; links must be relative and stay in the package", name, link)
	}
	if resolved := path.Join(path.Dir(name), link); resolved == ".." || strings.HasPrefix(resolved, "../") {
		return errs.Invalid("package", "link %q points to %q, outside the package", name, link)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.Symlink(link, target)
}

func hardlinkEntry(dest, link, target string) error {
	name, err := entryName(link)
	if err != nil {
		return err
	}
	// Through a link the source could be a file outside (a chain of links
	// that each look inside is only found out by checkLinks at the end).
	if err := noLinkParents(dest, name); err != nil {
		return errs.Invalid("package", "hard link to %q goes through a link; link to the file itself", link)
	}
	src := filepath.Join(dest, filepath.FromSlash(name))
	fi, err := os.Lstat(src)
	if err != nil || !fi.Mode().IsRegular() {
		return errs.Invalid("package", "hard link to %q: only links to files earlier in the archive are allowed", link)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.Link(src, target)
}

// checkLinks resolves every symlink for real (a chain of links can leave a
// folder that no single link leaves) and refuses any that ends outside dest.
func checkLinks(dest string, links []string) error {
	root, err := filepath.EvalSymlinks(dest)
	if err != nil {
		return err
	}
	for _, l := range links {
		real, err := filepath.EvalSymlinks(l)
		if err != nil {
			// The error's text holds the server's path: name the link only.
			rel, _ := filepath.Rel(dest, l)
			return errs.Invalid("package", "link %q does not resolve to a file or folder of the package (missing target or a loop)", filepath.ToSlash(rel))
		}
		if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
			rel, _ := filepath.Rel(dest, l)
			return errs.Invalid("package", "link %q resolves outside the package", rel)
		}
	}
	return nil
}

// packageRoot is dir, or its only sub-folder when the archive wrapped the
// package in one (tar czf m.tar.gz mymodel/).
func packageRoot(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "code")); err == nil {
		return dir, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var only string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "._") {
			continue
		}
		if only != "" || !e.IsDir() || e.Type()&os.ModeSymlink != 0 {
			return dir, nil
		}
		only = e.Name()
	}
	if only == "" {
		return dir, nil
	}
	return filepath.Join(dir, only), nil
}
