package format

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// walkObject reads a top-level object with s as readCOCO does: arrays'
// elements one by one, other values skipped; it returns each value's bytes
// as read, checked as the COCO reader checks them.
func walkObject(s *jsonStream) ([]string, error) {
	var got []string
	if c, ok := s.peek(); !ok || c != '{' {
		return nil, io.ErrUnexpectedEOF
	}
	err := s.members(func(key string) error {
		if c, ok := s.peek(); ok && c == '[' {
			return s.elements(func(raw []byte, off int64) error {
				if err := checkJSON(raw, off); err != nil {
					return err
				}
				got = append(got, key+"="+string(raw))
				return nil
			})
		}
		raw, off, err := s.value()
		if err != nil {
			return err
		}
		return checkJSON(raw, off)
	})
	return got, err
}

// decoderWalk is walkObject by json.Decoder, the reference.
func decoderWalk(doc string) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(doc))
	var got []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, io.ErrUnexpectedEOF
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		var elems []json.RawMessage
		if raw[0] == '[' && json.Unmarshal(raw, &elems) == nil {
			for _, e := range elems {
				got = append(got, t.(string)+"="+string(e))
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return got, nil
}

var streamDocs = []string{
	`{}`,
	`{"images": [], "annotations": [ ], "categories":[]}`,
	`{"info": {"a": [1, {"b": "}]"}]}, "images": [{"id": 1, "file_name": "a \"q\" \\ [x].jpg"}]}`,
	` {"annotations": [{"id": 1, "segmentation": [[1.5, 2, 3e2, -4]]}, {"id": 2, "s": "\\\\"}, 7, "x", null, true, [[]]]} `,
	"{\n\t\"images\" :\r\n [ {\"id\":1} , {\"id\":2} ] , \"x\": -0.5e-3 }",
	`{"k\u0069": [1, 2], "licenses": []}`,
	// broken ones: json.Decoder refuses each
	`{"images": [{"id": 1},]}`,
	`{"images": [{"id": 1} {"id": 2}]}`,
	`{"images": [{"id": 1}], }`,
	`{"images" [1]}`,
	`{images: [1]}`,
	`{"annotations": [{"id": 1, "bbox": [1, 2,, 3]}]}`,
	`{"annotations": [{"id": 1, "bbox": [1, 2, 3]]}`,
	`{"annotations": [{"id": 1 "x": 2}]}`,
	`{"annotations": [{"id": 1}]`,
	`{"annotations": [{"id": "unterminated}]}`,
	`{"info": {"a": nope}, "images": []}`,
	`{"info": 1.2.3}`,
	`{"annotations": [{"id": 01}]}`,
	`{"images": [{"id": 1}]}}`,
}

// TestJSONStreamEqualsDecoder: for documents valid and broken, read in
// one piece and a byte at a time, the stream accepts what json.Decoder
// accepts and hands over the same elements.
func TestJSONStreamEqualsDecoder(t *testing.T) {
	for _, doc := range streamDocs {
		want, wantErr := decoderWalk(doc)
		for name, r := range map[string]io.Reader{"whole": strings.NewReader(doc), "bytes": iotest.OneByteReader(strings.NewReader(doc))} {
			got, err := walkObject(newJSONStream(r))
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%s %q: error %v, json.Decoder's %v", name, doc, err, wantErr)
				continue
			}
			if err == nil && strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %q: elements\n%q\nwant\n%q", name, doc, got, want)
			}
		}
	}
}

// TestJSONStreamErrorOffsets: an error names the byte where the document
// breaks, as json.Decoder's SyntaxError does, so the COCO reader reports
// the line it is on.
func TestJSONStreamErrorOffsets(t *testing.T) {
	for _, tc := range []struct {
		doc string
		off int64
	}{
		{`{"images": [{"id": 1},]}`, 22},
		{`{"annotations": [{"id": 1, "bbox": [1, 2,, 3]}]}`, 41},
		{`{"info": {"a": nope}}`, 16},
		{`{"images" [1]}`, 10},
	} {
		_, err := walkObject(newJSONStream(strings.NewReader(tc.doc)))
		off, ok := errOffset(err)
		if !ok || off != tc.off {
			t.Errorf("%q: error %v at %d (%v), want at %d", tc.doc, err, off, ok, tc.off)
		}
	}
}

// FuzzJSONStream: whatever the bytes, the stream accepts a document only
// where json.Decoder does, and then hands over its elements.
func FuzzJSONStream(f *testing.F) {
	for _, doc := range streamDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, wantErr := decoderWalk(string(doc))
		got, err := walkObject(newJSONStream(bytes.NewReader(doc)))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, json.Decoder's %v", doc, err, wantErr)
		}
		if err == nil && strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q: elements %q, want %q", doc, got, want)
		}
	})
}
