package web

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
)

// form is a multipart body read part by part. Unlike Request.ParseMultipartForm
// it keeps file names as the client sent them, so a name like "../x.jpg" is
// refused rather than silently shortened to "x.jpg".
type form struct {
	values map[string]string
	files  []formFile
	mem    int64                          // file bytes held in memory, at most formMemory
	temp   func(string) (*os.File, error) // creates a temp file for a part that does not fit
}

// formFile is a file part: in memory while the form's memory lasts, in a
// temp file beyond.
type formFile struct {
	field, name string
	data        []byte
	path        string
}

func (f formFile) open() (io.ReadCloser, error) {
	if f.path != "" {
		return os.Open(f.path)
	}
	return io.NopCloser(bytes.NewReader(f.data)), nil
}

// close removes spilled temp files.
func (f *form) close() {
	for _, ff := range f.files {
		if ff.path != "" {
			os.Remove(ff.path)
		}
	}
}

const (
	// formMemory is how many bytes of its file parts one request keeps in
	// memory, whatever their number: a frame or a small batch stays there,
	// the parts past it go to temp files of the media store.
	formMemory = 4 << 20
	valueLimit = 1 << 20 // largest non-file field
)

// readForm reads a multipart/form-data body within the upload limit,
// refusing fields other than the named ones.
func (s *server) readForm(c *echo.Context, values, files map[string]bool) (*form, error) {
	r := c.Request()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return nil, errs.New(errs.UnsupportedMedia, "", "content type %q: send multipart/form-data", mt)
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.opt.MaxUploadBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, errs.Invalid("", "multipart form: %v", err)
	}
	// The store is looked up only when a part spills, so the parser runs
	// (and is fuzzed) without one.
	f := &form{values: map[string]string{}, temp: func(p string) (*os.File, error) { return s.Lake.Store().CreateTemp(p) }}
	for {
		p, err := mr.NextPart()
		switch {
		case errors.Is(err, io.EOF):
			// Reading the epilogue to the body's end also lifts the body's
			// read deadline (see rateBody) while the upload is stored.
			if _, err = io.Copy(io.Discard, r.Body); err == nil {
				return f, nil
			}
			err = partError(err)
		case err == nil:
			err = f.readPart(p.FormName(), p, values, files)
		default:
			err = partError(err)
		}
		if err != nil {
			f.close()
			return nil, err
		}
	}
}

func (f *form) readPart(field string, p *multipart.Part, values, files map[string]bool) error {
	// The raw parameter: Part.FileName would strip directories from it.
	disp := p.Header.Get("Content-Disposition")
	kind, params, err := mime.ParseMediaType(disp)
	if err != nil || kind != "form-data" || field == "" {
		return errs.Invalid("", "multipart form: a part's Content-Disposition must be form-data with a name, got %q", disp)
	}
	name, isFile := params["filename"]
	switch {
	case isFile && !files[field]:
		return errs.Invalid(field, "unknown file field %q", field)
	case !isFile && !values[field]:
		return errs.Invalid(field, "unknown field %q", field)
	case !isFile:
		b, err := io.ReadAll(io.LimitReader(p, valueLimit+1))
		if err != nil {
			return partError(err)
		}
		if len(b) > valueLimit {
			return errs.Invalid(field, "%s is longer than %d bytes", field, valueLimit)
		}
		f.values[field] = string(b)
		return nil
	}
	ff, err := f.spool(p)
	ff.field, ff.name = field, name
	f.files = append(f.files, ff)
	return err
}

// spool keeps a part in memory while the form's memory lasts, and writes it
// to a temp file when it does not fit.
func (f *form) spool(r io.Reader) (formFile, error) {
	var buf bytes.Buffer
	room := formMemory - f.mem
	n, err := io.CopyN(&buf, r, room+1)
	if err != nil && !errors.Is(err, io.EOF) {
		return formFile{}, partError(err)
	}
	if n <= room {
		f.mem += n
		return formFile{data: buf.Bytes()}, nil
	}
	tmp, err := f.temp("upload-*")
	if err != nil {
		return formFile{}, err
	}
	defer tmp.Close()
	ff := formFile{path: tmp.Name()}
	if _, err := io.Copy(tmp, io.MultiReader(&buf, r)); err != nil {
		return ff, partError(err)
	}
	return ff, nil
}

// partError keeps an over-limit body a 413, a slow one a 408, and makes
// other read errors 400s.
func partError(err error) error {
	var mb *http.MaxBytesError
	var slow *slowBodyError
	if errors.As(err, &mb) || errors.As(err, &slow) {
		return err
	}
	return errs.Invalid("", "multipart form: %v", err)
}
