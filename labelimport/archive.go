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
	"math"
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
// more entries, bytes or compression than lim allows refuse the whole
// archive: Unpack then removes dest, so nothing is left on disk.
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
	bytes   int64         // uncompressed, of all entries so far
	in      int64         // compressed bytes the entries so far came from: a zip's size, a tar's bytes read
	read    *counter      // a tar(.gz)'s file
	buf     *bufio.Reader // over read
	dryRun  bool          // check names, kinds and limits; write nothing
}

func (u *unpacker) zip(path string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return errArchive("%v", err)
	}
	defer zr.Close()
	if st, err := os.Stat(path); err == nil {
		u.in = st.Size()
	}
	// The central directory says it all before anything is written: refuse
	// a bomb by its declared sizes, and a liar by the bytes that come out
	// (archive/zip fails an entry that inflates past its declared size).
	if len(zr.File) > u.lim.MaxEntries {
		return errArchive("%d entries, more than the %d allowed", len(zr.File), u.lim.MaxEntries)
	}
	var declared int64
	for _, e := range zr.File {
		if _, err := u.target(e.Name, e.Mode()); err != nil {
			return err
		}
		if e.UncompressedSize64 > uint64(u.lim.MaxEntryBytes) {
			return errArchive("entry %q unpacks to %d bytes, more than the %d allowed for one entry",
				e.Name, e.UncompressedSize64, u.lim.MaxEntryBytes)
		}
		if err := u.checkEntry(e.Name, int64(e.UncompressedSize64), int64(e.CompressedSize64)); err != nil {
			return err
		}
		declared = min(declared+int64(e.UncompressedSize64), math.MaxInt64/2) // each is at most MaxEntryBytes
	}
	if declared > u.lim.MaxBytes {
		return errArchive("%d bytes uncompressed, more than the %d allowed", declared, u.lim.MaxBytes)
	}
	if err := u.checkTotal(declared); err != nil {
		return err
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
	return u.entry(e.Name, e.Mode(), r, func() int64 { return int64(e.CompressedSize64) })
}

func (u *unpacker) tar(path string, gz bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	u.read = &counter{r: f}
	u.buf = bufio.NewReaderSize(u.read, 1<<16)
	var r io.Reader = u.buf
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
		if h.Size > u.lim.MaxEntryBytes {
			return errArchive("entry %q unpacks to %d bytes, more than the %d allowed for one entry",
				h.Name, h.Size, u.lim.MaxEntryBytes)
		}
		// The compressed bytes an entry came from are those consumed while
		// it was read (gzip reads its input a byte at a time from the buffer).
		start := u.consumed()
		if err := u.entry(h.Name, h.FileInfo().Mode(), tr, func() int64 { return u.consumed() - start }); err != nil {
			return err
		}
	}
}

// consumed is how many bytes of a tar(.gz) were read and not left in the buffer.
func (u *unpacker) consumed() int64 { return u.read.n - int64(u.buf.Buffered()) }

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// checkEntry refuses an entry of out bytes uncompressed from in compressed
// past the ratio allowed.
func (u *unpacker) checkEntry(name string, out, in int64) error {
	if out > RatioFloor && float64(out) > u.lim.MaxRatio*float64(max(in, 1)) {
		return errArchive("entry %q unpacks to %d bytes or more from %d compressed, more than the %g:1 "+
			"compression allowed (a zip bomb?)", name, out, in, u.lim.MaxRatio)
	}
	return nil
}

// checkTotal refuses an archive of out bytes uncompressed past the total or
// the ratio allowed to the archive's compressed bytes.
func (u *unpacker) checkTotal(out int64) error {
	in := u.in
	if u.read != nil {
		in = u.consumed()
	}
	if out > u.lim.MaxBytes {
		return errArchive("more than the %d bytes uncompressed allowed", u.lim.MaxBytes)
	}
	if out > RatioFloor && float64(out) > u.lim.MaxRatio*float64(max(in, 1)) {
		return errArchive("the archive unpacks to %d bytes or more from %d, more than the %g:1 compression allowed "+
			"(a zip bomb?)", out, in, u.lim.MaxRatio)
	}
	return nil
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

// entry writes one folder or file, counting it against the limits; in
// tells the compressed bytes it came from so far.
func (u *unpacker) entry(name string, mode fs.FileMode, r io.Reader, in func() int64) error {
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
		return u.copy(io.Discard, r, name, in)
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
	err = u.copy(w, r, name, in)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// copy copies an entry's bytes to w, refusing, before it writes them, the
// chunk that passes a limit.
func (u *unpacker) copy(w io.Writer, r io.Reader, name string, in func() int64) error {
	m := &meter{u: u, w: w, name: name, in: in}
	_, err := io.CopyBuffer(m, struct{ io.Reader }{r}, make([]byte, 32<<10))
	switch {
	case m.refused != nil:
		return m.refused
	case err != nil:
		return errArchive("entry %q: %v", name, err)
	}
	return nil
}

// meter is the writer an entry's bytes pass, checking the limits.
type meter struct {
	u       *unpacker
	w       io.Writer
	name    string
	in      func() int64
	n       int64
	refused error
}

func (m *meter) Write(p []byte) (int, error) {
	m.n += int64(len(p))
	m.u.bytes += int64(len(p))
	// The compression first: it names a bomb for what it is.
	if m.refused = m.u.checkEntry(m.name, m.n, m.in()); m.refused != nil {
		return 0, m.refused
	}
	switch {
	case m.n > m.u.lim.MaxEntryBytes:
		m.refused = errArchive("entry %q unpacks to more than the %d bytes allowed for one entry", m.name, m.u.lim.MaxEntryBytes)
	case m.u.bytes > m.u.lim.MaxBytes:
		m.refused = errArchive("more than the %d bytes uncompressed allowed (at entry %q)", m.u.lim.MaxBytes, m.name)
	default:
		m.refused = m.u.checkTotal(m.u.bytes)
	}
	if m.refused != nil {
		return 0, m.refused
	}
	return m.w.Write(p)
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
	return fmt.Sprintf("at most %d entries, %d bytes uncompressed (%d in one entry) and %g:1 compression",
		l.MaxEntries, l.MaxBytes, l.MaxEntryBytes, l.MaxRatio)
}
