package format

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestFastAnnotationEqualsUnmarshal: the one-pass read of a COCO annotation
// gives what json.Unmarshal gives wherever it reads one (and the same
// segmentation bytes, trimmed), and leaves to json.Unmarshal what it does not
// read as json.Unmarshal does: keys in another case or twice, escaped keys,
// nulls, numbers that are not int64 where one is wanted.
func TestFastAnnotationEqualsUnmarshal(t *testing.T) {
	cases := []struct {
		raw  string
		fast bool
	}{
		{`{"id": 1, "image_id": 2, "category_id": 3, "bbox": [1.5, 2, 30.25, 4e1], "area": 12.5, "iscrowd": 0, "segmentation": [[1, 2, 3, 4.5, 5, 6]]}`, true},
		{`{"id":-7,"image_id":0,"category_id":18,"bbox":[],"segmentation":[],"area":0,"iscrowd":1}`, true},
		{` { "segmentation" : {"size": [4, 5], "counts": "a\"b]}"} , "id" : 9 } `, true},
		{`{"id": 4, "segmentation": "text, with ] and }", "extra": {"a": [1, {"b": "]"}], "c": "x\\"}, "bbox": [1, 2, 3, 4]}`, true},
		{`{"attributes": {"occluded": true, "n": 2, "s": "é"}, "keypoints": [1, 2, 2, 0, 0, 0], "id": 123456789012345678}`, true},
		{`{"unknown": null, "other": [true, false], "id": 5}`, true},
		{`{"area": 1.7976931348623157e308, "bbox": [0.1, 0.2, 0.30000000000000004, 1e-7]}`, true},
		{`{}`, true},
		{`{"ID": 1}`, false},                    // json's case-insensitive match
		{`{"id": 1, "id": 2}`, false},           // a key twice
		{`{"i\u0064": 1}`, false},               // an escaped key
		{`{"id": 1.5}`, false},                  // not an int64: json's type error
		{`{"id": 1e3}`, false},                  // the same
		{`{"id": 12345678901234567890}`, false}, // past int64
		{`{"id": "1"}`, false},
		{`{"bbox": null}`, false},
		{`{"bbox": [1, "2", 3, 4]}`, false},
		{`{"area": "big"}`, false},
		{`{"area": 1e999}`, false},
		{`{"attributes": [1]}`, false},
		{`{"iscrowd": true}`, false},
		{`{"keypoints": [1, null, 2]}`, false},
		{`{"ſegmentation": []}`, false}, // non-ASCII keys go to json
	}
	for _, c := range cases {
		var fast cocoAnnotation
		seg, _, ok := fastAnnotation([]byte(c.raw), &fast)
		if ok != c.fast {
			t.Errorf("%s: read in one pass %v, want %v", c.raw, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		var want cocoAnnotation
		if err := json.Unmarshal([]byte(c.raw), &want); err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		if !bytes.Equal(bytes.TrimSpace(seg), bytes.TrimSpace(want.Segmentation)) {
			t.Errorf("%s: segmentation %q, json's %q", c.raw, seg, want.Segmentation)
		}
		want.Segmentation = nil
		if !reflect.DeepEqual(fast, want) {
			t.Errorf("%s:\n one pass %+v\n json     %+v", c.raw, fast, want)
		}
	}
}

// FuzzAnnotationDecode: whatever an annotation's bytes, decoding them
// refuses what the guard rewrites (a NaN, a bare word, an over-deep value, a
// number of maxWord bytes) as the guard's record, decoded from its rewrite,
// as when the guard read the whole file; it stops the file with a syntax
// error exactly where json.Valid refuses the rest; and otherwise gives what
// json.Unmarshal and cocoSegment give: the one-pass read checks as it
// reads, in place of json.Valid before it.
func FuzzAnnotationDecode(f *testing.F) {
	for _, seed := range []string{
		`{"id": 1, "image_id": 2, "category_id": 3, "bbox": [1.5, 2, 30.25, 4e1], "area": 12.5, "iscrowd": 0, "segmentation": [[1, 2, 3, 4.5, 5, 6]]}`,
		`{"id": 4, "segmentation": {"size": [4, 5], "counts": "a\"b]}"}, "extra": {"a": [1, {"b": "]"}], "c": "x\\"}}`,
		`{"attributes": {"occluded": true}, "keypoints": [1, 2, 2], "id": 123, "u": "\u00e9\n", "n": null}`,
		`{"id": 01}`, `{"bbox": [1., 2]}`, `{"area": .5}`, `{"x": tru}`, `{"x": "a` + "\x01" + `"}`, `{"x": "\q"}`,
		`{"segmentation": [[1, 2, 3, 4, 5, 6]]] }`, `{"segmentation": }`, `{"segmentation": [[1, 2, +3]]}`,
		`{"segmentation": {"size": [1, 1], "counts": [1,]}}`, `{"segmentation": null, "id": -0}`, `{"id": 1,}`, `{}`, `{} x`,
		`{"id": NaN}`, `{"id": 2, "x": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`, `{"id": 3, "attributes": {"a": ` + strings.Repeat("9", 4096) + `}}`,
		`{"id": 4, "segmentation": [[1, 2, 3, Infinity, 5, 6]]}`, `{"id": 5, "segmentation": [[1, 2, 3, 4, 5, ` + strings.Repeat("6", 5000) + `]]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := cocoRaw{raw: bytes.Clone(data)}
		r.decode(nil)
		var g jsonGuard
		if out, flags := g.record(data, recordDepth); len(flags) > 0 {
			var want cocoAnnotation
			err := recordErr(json.Unmarshal(out, &want), 0)
			want.Segmentation = nil
			if !r.hit || r.flag != flags[0] || (err != nil) != (r.err != nil) || r.seg != nil || !reflect.DeepEqual(r.a, want) {
				t.Fatalf("%q: the guard flags %v: decode hit %v %v, error %v (its rewrite's %v), %+v, want %+v", data, flags, r.hit, r.flag, r.err, err, r.a, want)
			}
			return
		}
		if r.hit {
			t.Fatalf("%q: decode flags %v where the guard does not", data, r.flag)
		}
		_, syntax := errOffset(r.err)
		if valid := json.Valid(data); syntax == valid {
			t.Fatalf("%q: json.Valid %v, decode's error %v", data, valid, r.err)
		}
		if syntax {
			return
		}
		var want cocoAnnotation
		err := json.Unmarshal(data, &want)
		if (err != nil) != (r.err != nil) {
			t.Fatalf("%q: decode's error %v, json's %v", data, r.err, err)
		}
		if err != nil {
			return
		}
		seg, segErr := cocoSegment(want.Segmentation, nil)
		want.Segmentation = nil
		if !reflect.DeepEqual(r.a, want) || !reflect.DeepEqual(r.seg, seg) || (segErr != nil) != (r.segErr != nil) {
			t.Fatalf("%q:\n decode %+v %+v %v\n json   %+v %+v %v", data, r.a, r.seg, r.segErr, want, seg, segErr)
		}
	})
}
