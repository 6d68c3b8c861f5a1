package web

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// FuzzReadForm feeds arbitrary multipart bodies to the upload parser with
// the frame upload's fields: it never panics, refuses with a coded error or
// a body-limit error, and what it accepts holds only the fields asked for.
// The corpus lives in testdata/fuzz/FuzzReadForm.
func FuzzReadForm(f *testing.F) {
	f.Add("b", []byte("--b\r\nContent-Disposition: form-data; name=\"labels\"\r\n\r\n[]\r\n"+
		"--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.jpg\"\r\n\r\nxyz\r\n--b--\r\n"))
	f.Add("b", []byte("--b\r\nContent-Disposition: form-data; name=\"files\"; filename*=UTF-8''..%2Fa%00.jpg\r\n\r\nx\r\n--b--\r\n"))
	f.Add("b", []byte("--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.jpg\"\r\n\r\nno end"))
	f.Add("x\"y", []byte("--x\"y\r\n\r\n--x\"y--"))
	f.Fuzz(func(t *testing.T, boundary string, body []byte) {
		s := &server{opt: Options{MaxUploadBytes: 1 << 20}}
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=\""+boundary+"\"")
		c := echo.New().NewContext(req, httptest.NewRecorder())
		form, err := s.readForm(c, map[string]bool{"labels": true, "sequenceNo": true}, map[string]bool{"files": true})
		if err != nil {
			var mb *http.MaxBytesError
			if errs.CodeOf(err) == "" && !errors.As(err, &mb) {
				t.Fatalf("uncoded error %T %v", err, err)
			}
			return
		}
		defer form.close()
		for k := range form.values {
			if k != "labels" && k != "sequenceNo" {
				t.Fatalf("value field %q accepted", k)
			}
		}
		for _, ff := range form.files {
			if ff.field != "files" || ff.path != "" {
				t.Fatalf("file part %+v", ff)
			}
			if lake.ValidateFileName(ff.name) == nil && (bytes.ContainsAny([]byte(ff.name), "/\\\x00") || ff.name == "..") {
				t.Fatalf("file name %q passes the name check", ff.name)
			}
		}
		if raw, ok := form.values["labels"]; ok {
			checkBoxes(t, raw)
		}
	})
}

// FuzzDecodeBoxes feeds arbitrary labels values to the frame labels parser:
// it never panics, every refusal names the labels field, and what it accepts
// is a list of boxes.
func FuzzDecodeBoxes(f *testing.F) {
	for _, s := range []string{`[]`, `[{"label":"car","x":1,"y":2,"width":3,"height":4}]`,
		`[{"label":"car","x":1e400}]`, `[{"label":"a","attributes":{"k":[1,{"z":null}]}}]`, `null`, `{}`,
		`[{"label":"car","x":"1"}]`, `[{"lbl":"car"}]`, `[` + string(bytes.Repeat([]byte("["), 20000))} {
		f.Add(s)
	}
	f.Fuzz(checkBoxes)
}

func checkBoxes(t *testing.T, raw string) {
	boxes, err := decodeBoxes(raw)
	if err != nil {
		var e *errs.Error
		if !errors.As(err, &e) || e.Field != "labels" || e.Code != errs.InvalidArgument {
			t.Fatalf("decodeBoxes(%q): %v, want an invalid_argument on labels", raw, err)
		}
		return
	}
	if boxes == nil {
		t.Fatalf("decodeBoxes(%q): nil boxes without an error", raw)
	}
}
