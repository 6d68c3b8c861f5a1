package labelimport

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/framelake/framelake/errs"
)

// ArchiveKind is an archive format Unpack reads.
type ArchiveKind string

const (
	Zip   ArchiveKind = "zip"
	Tar   ArchiveKind = "tar"
	TarGz ArchiveKind = "tar.gz"
)

// ArchiveKindOf names the archive at path by its first bytes (a gzip
// stream is taken for a tar.gz), or "" when it is none Unpack reads.
func ArchiveKindOf(path string) (ArchiveKind, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return Zip, nil
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return TarGz, nil
	case n >= 262 && bytes.HasPrefix(head[257:], []byte("ustar")):
		return Tar, nil
	}
	return "", nil
}

// errArchive is an archive refused: its name and why, with nothing written.
func errArchive(format string, args ...any) error {
	return errs.Invalid("archive", "archive refused: "+format, args...)
}

// Unpack extracts the archive at path into dest, a folder it creates, under
// lim. An entry whose path has a ".." part or is absolute, a link, a device,
// more entries or more bytes than lim allows refuse the whole archive:
// Unpack then removes dest, so nothing is left on disk.
func Unpack(ctx context.Context, path, dest string, lim Limits) (err error) {
	kind, err := ArchiveKindOf(path)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dest)
		}
	}()
	u := &unpacker{ctx: ctx, dest: dest, lim: lim.withDefaults()}
	switch kind {
	case Zip:
		return u.zip(path)
	case Tar, TarGz:
		return u.tar(path, kind == TarGz)
	}
	return errArchive("not a zip, tar or tar.gz archive")
}

// unpacker counts what an Unpack wrote against its limits.
type unpacker struct {
	ctx     context.Context
	dest    string
	lim     Limits
	entries int
	bytes   int64
	dryRun  bool // check names, kinds and limits; write nothing
}

func (u *unpacker) zip(path string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return errArchive("%v", err)
	}
	defer zr.Close()
	// The central directory says it all before anything is written: refuse
	// a bomb by its declared sizes, and a liar by the bytes that come out.
	if len(zr.File) > u.lim.MaxEntries {
		return errArchive("%d entries, more than the %d allowed", len(zr.File), u.lim.MaxEntries)
	}
	var declared uint64
	for _, e := range zr.File {
		declared += e.UncompressedSize64
		if _, err := u.target(e.Name, e.Mode()); err != nil {
			return err
		}
	}
	if declared > uint64(u.lim.MaxBytes) {
		return errArchive("%d bytes uncompressed, more than the %d allowed", declared, u.lim.MaxBytes)
	}
	for _, e := range zr.File {
		if err := u.zipEntry(e); err != nil {
			return err
		}
	}
	return nil
}

func (u *unpacker) zipEntry(e *zip.File) error {
	r, err := e.Open()
	if err != nil {
		return errArchive("entry %q: %v", e.Name, err)
	}
	defer r.Close()
	return u.entry(e.Name, e.Mode(), r)
}

func (u *unpacker) tar(path string, gz bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<16)
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return errArchive("%v", err)
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errArchive("%v", err)
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeLink:
			return errArchive("entry %q is a hard link; an import archive holds only folders and regular files", h.Name)
		}
		if err := u.entry(h.Name, h.FileInfo().Mode(), tr); err != nil {
			return err
		}
	}
}

// target checks an entry's name and kind and returns where it lands.
func (u *unpacker) target(name string, mode fs.FileMode) (string, error) {
	slashed := strings.ReplaceAll(name, `\`, "/")
	for _, part := range strings.Split(slashed, "/") {
		if part == ".." {
			return "", errArchive("entry %q has a \"..\" in its path", name)
		}
	}
	local := filepath.FromSlash(strings.TrimSuffix(slashed, "/"))
	if strings.HasPrefix(slashed, "/") || filepath.IsAbs(local) || filepath.VolumeName(local) != "" ||
		(local != "" && local != "." && !filepath.IsLocal(local)) {
		return "", errArchive("entry %q has an absolute path", name)
	}
	switch {
	case mode&fs.ModeSymlink != 0:
		return "", errArchive("entry %q is a symbolic link; an import archive holds only folders and regular files", name)
	case !mode.IsDir() && !mode.IsRegular():
		return "", errArchive("entry %q is a %s, not a folder or regular file", name, mode.Type())
	}
	return filepath.Join(u.dest, local), nil
}

// entry writes one folder or file, counting it against the limits.
func (u *unpacker) entry(name string, mode fs.FileMode, r io.Reader) error {
	if err := u.ctx.Err(); err != nil {
		return err
	}
	p, err := u.target(name, mode)
	if err != nil {
		return err
	}
	if u.entries++; u.entries > u.lim.MaxEntries {
		return errArchive("more than the %d entries allowed", u.lim.MaxEntries)
	}
	if u.dryRun {
		n, err := io.Copy(io.Discard, io.LimitReader(r, u.lim.MaxBytes-u.bytes+1))
		if u.bytes += n; u.bytes > u.lim.MaxBytes {
			return errArchive("more than the %d bytes uncompressed allowed (at entry %q)", u.lim.MaxBytes, name)
		}
		return err
	}
	if mode.IsDir() {
		return os.MkdirAll(p, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return errArchive("entry %q is in the archive twice", name)
	} else if err != nil {
		return err
	}
	left := u.lim.MaxBytes - u.bytes
	n, err := io.Copy(w, io.LimitReader(r, left+1))
	u.bytes += n
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if u.bytes > u.lim.MaxBytes {
		return errArchive("more than the %d bytes uncompressed allowed (at entry %q)", u.lim.MaxBytes, name)
	}
	if err != nil {
		return errArchive("entry %q: %v", name, err)
	}
	return nil
}

// ArchiveName reports whether a file name is one of an archive Unpack reads.
func ArchiveName(name string) bool {
	n := strings.ToLower(name)
	for _, ext := range []string{".zip", ".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(n, ext) {
			return true
		}
	}
	return false
}

// TrimArchiveExt is name without its archive extension: an archive's
// default collection name.
func TrimArchiveExt(name string) string {
	n := strings.ToLower(name)
	for _, ext := range []string{".tar.gz", ".tgz", ".zip", ".tar"} {
		if strings.HasSuffix(n, ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

// String names the limits for a message.
func (l Limits) String() string {
	l = l.withDefaults()
	return fmt.Sprintf("at most %d entries and %d bytes uncompressed", l.MaxEntries, l.MaxBytes)
}
