package format

import (
	"bufio"
	"bytes"
	"io"
	"os"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

// archive is the state one Write shares with its format writer: the zip, the
// temp folder for spools, and buffers reused from frame to frame.
type archive struct {
	z      *zipWriter
	root   string
	tmp    string
	ds     Dataset
	skel   map[string]*shape.Skeleton // declared keypoints labels
	media  bool
	spools []*spool
	copy   []byte       // media copy buffer
	text   bytes.Buffer // per-frame annotation file
	whole  bytes.Buffer // media read whole (TFRecord)
}

func newArchive(w io.Writer, tmp, root string, ds Dataset, media bool) (*archive, error) {
	a := &archive{root: root, tmp: tmp, ds: ds, media: media}
	cd, err := a.spool()
	if err != nil {
		return nil, err
	}
	a.z = newZipWriter(w, cd)
	return a, nil
}

// close releases the temp files; the folder itself goes with Write's defer.
func (a *archive) close() {
	for _, s := range a.spools {
		s.f.Close()
	}
}

// path puts a name under the archive's root folder.
func (a *archive) path(name string) string { return a.root + name }

// textEntry writes the per-frame text buffer as an entry.
func (a *archive) textEntry(name string) error { return a.z.bytesEntry(a.path(name), a.text.Bytes()) }

// copyMedia stores the frame's media bytes as they are under name.
func (a *archive) copyMedia(name string, fr *Frame) error {
	rc, err := fr.Open()
	if err != nil {
		return errs.Prefix(err, "open media")
	}
	defer rc.Close()
	if a.copy == nil {
		a.copy = make([]byte, 256<<10)
	}
	return a.z.entry(a.path(name), false, false, func(w io.Writer) error {
		_, err := io.CopyBuffer(w, onlyReader{rc}, a.copy)
		return err
	})
}

// readMedia reads the frame's media whole into a reused buffer; the slice is
// valid until the next call.
func (a *archive) readMedia(fr *Frame) ([]byte, error) {
	rc, err := fr.Open()
	if err != nil {
		return nil, errs.Prefix(err, "open media")
	}
	defer rc.Close()
	a.whole.Reset()
	if _, err := a.whole.ReadFrom(rc); err != nil {
		return nil, errs.Prefix(err, "read media")
	}
	return a.whole.Bytes(), nil
}

// spoolEntry appends a spool's content as one entry.
func (a *archive) spoolEntry(name string, s *spool, compress bool) error {
	return a.z.entry(a.path(name), compress, false, s.copyTo)
}

// splitSpools makes one spool per split, in the order of splits.
func (a *archive) splitSpools() ([3]*spool, error) {
	var l [3]*spool
	for i := range l {
		s, err := a.spool()
		if err != nil {
			return l, err
		}
		l[i] = s
	}
	return l, nil
}

// splitEntries appends each split's spool as the entry prefix+names[i]+".txt".
func (a *archive) splitEntries(prefix string, names [3]string, l [3]*spool) error {
	for i, s := range l {
		if err := a.spoolEntry(prefix+names[i]+".txt", s, true); err != nil {
			return err
		}
	}
	return nil
}

// spoolEntryOf appends several spools' content as one entry.
func (a *archive) spoolEntryOf(name string, spools ...*spool) error {
	return a.z.entry(a.path(name), true, false, func(w io.Writer) error {
		for _, s := range spools {
			if err := s.copyTo(w); err != nil {
				return err
			}
		}
		return nil
	})
}

// onlyReader hides WriterTo so io.CopyBuffer uses our buffer instead of
// whatever the source would allocate.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// spool is an append-only temp file for an aggregate whose entry has to wait
// until the frames are through.
type spool struct {
	f *os.File
	w *bufio.Writer
	n int64
}

func (a *archive) spool() (*spool, error) {
	f, err := os.CreateTemp(a.tmp, "spool-")
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "export: temp file")
	}
	s := &spool{f: f, w: bufio.NewWriterSize(f, 32<<10)}
	a.spools = append(a.spools, s)
	return s, nil
}

func (s *spool) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.n += int64(n)
	return n, err
}

func (s *spool) WriteString(p string) (int, error) {
	n, err := s.w.WriteString(p)
	s.n += int64(n)
	return n, err
}

// copyTo writes everything spooled so far to w.
func (s *spool) copyTo(w io.Writer) error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, io.LimitReader(s.f, s.n))
	if err != nil {
		return err
	}
	_, err = s.f.Seek(0, io.SeekEnd)
	return err
}

// reset empties the spool for reuse (TFRecord shards).
func (s *spool) reset() error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	_, err := s.f.Seek(0, io.SeekStart)
	s.n = 0
	return err
}

// writeAll writes parts in order: byte slices, strings and spools.
func writeAll(w io.Writer, parts ...any) error {
	for _, p := range parts {
		var err error
		switch v := p.(type) {
		case []byte:
			_, err = w.Write(v)
		case string:
			_, err = io.WriteString(w, v)
		case *spool:
			err = v.copyTo(w)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
