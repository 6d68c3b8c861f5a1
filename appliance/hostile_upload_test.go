package appliance_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/web"
)

// rawFilePart is a multipart body with one files part whose filename
// parameter is written byte for byte, as a hostile client would (a name
// starting with * is sent RFC 2231-encoded: filename*=UTF-8”...); fields
// come first.
func rawFilePart(fields map[string]string, filename string, data []byte) (string, *bytes.Buffer) {
	const boundary = "hostileboundary42"
	var b bytes.Buffer
	for k, v := range fields {
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", boundary, k, v)
	}
	param := `filename="` + filename + `"`
	if rest, ok := strings.CutPrefix(filename, "*"); ok { // RFC 2231: percent-encoded bytes
		param = "filename*=UTF-8''" + rest
	}
	fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"files\"; %s\r\n"+
		"Content-Type: application/octet-stream\r\n\r\n", boundary, param)
	b.Write(data)
	fmt.Fprintf(&b, "\r\n--%s--\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary, &b
}

// TestHostileUploads: names with path parts, control characters or more
// than 255 bytes, a decompression bomb's header, a video that hangs ffprobe
// and multipart bodies without their end are refused with a 4xx, over both
// upload routes, and nothing is stored.
func TestHostileUploads(t *testing.T) {
	hang := filepath.Join(t.TempDir(), "ffprobe")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := start(t, appliance.Config{FFprobe: hang, ProbeTimeout: 300 * time.Millisecond})
	c := e.creds(t)
	ctx := context.Background()
	up, err := e.write.InitializeUpload(ctx, e.project(t, client.ContentImage), "frames", 100)
	if err != nil {
		t.Fatal(err)
	}
	img := testmedia.JPEG(16, 16, 1)
	var p bytes.Buffer
	png.Encode(&p, image.NewGray(image.Rect(0, 0, 8, 8)))
	mp4 := append([]byte("\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41"), bytes.Repeat([]byte{1}, 4000)...)
	cases := []struct {
		name   string
		data   []byte
		status int
		want   string
	}{
		{"../a.jpg", img, 400, "without path separators"},
		{"sub/a.jpg", img, 400, "without path separators"},
		{`..\..\a.jpg`, img, 400, "without path separators"},
		{"/etc/passwd", img, 400, "without path separators"},
		{"..", img, 400, "without path separators"},
		{"a\x01b.jpg", img, 400, "malformed MIME header"},
		{"a\x7fb.jpg", img, 400, "malformed MIME header"},
		{"a\tb.jpg", img, 400, "control characters"},
		{"*a%01b.jpg", img, 400, "control characters"},
		{"*a%00b.jpg", img, 400, "control characters"},
		{"*a%0d%0ab.jpg", img, 400, "control characters"},
		{"*..%2F..%2Fa.jpg", img, 400, "without path separators"},
		{"*" + strings.Repeat("%41", 256), img, 400, "longer than 255 bytes"},
		{"a\u0085b.jpg", img, 400, "control characters"},
		{"photo\u202Egpj.exe", img, 400, "bidirectional"},
		{strings.Repeat("n", 252) + ".jpg", img, 400, "longer than 255 bytes"},
		{strings.Repeat("é", 200) + ".jpg", img, 400, "longer than 255 bytes"},
		{"bomb.png", testmedia.WithSize(p.Bytes(), 50000, 50000), 413, "over the limit"},
		{"hang.mp4", mp4, 400, "ffprobe took longer than 300ms"},
	}
	for _, tc := range cases {
		ctype, body := rawFilePart(nil, tc.name, tc.data)
		began := time.Now()
		status, b := e.hostile(t, c.write, "POST", "/api/v1/lake/files", ctype, body)
		if status != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("lake upload %q: %d %s; want %d %q", tc.name, status, b, tc.status, tc.want)
		}
		if took := time.Since(began); took > 10*time.Second {
			t.Errorf("lake upload %q took %s", tc.name, took)
		}
		if strings.HasSuffix(tc.name, ".mp4") {
			continue // the image project takes no videos
		}
		ctype, body = rawFilePart(map[string]string{"labels": "[]"}, tc.name, tc.data)
		status, b = e.hostile(t, c.write, "POST", "/api/v1/uploads/"+up.UploadID+"/files", ctype, body)
		if status != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("frame upload %q: %d %s; want %d %q", tc.name, status, b, tc.status, tc.want)
		}
	}

	// Bodies that stop before their closing boundary, or mid-header.
	whole, full := rawFilePart(map[string]string{"labels": "[]"}, "ok.jpg", img)
	cut := full.Bytes()
	for i, body := range [][]byte{cut[:len(cut)-len("--hostileboundary42--\r\n")], cut[:len(cut)-40], cut[:60],
		[]byte("--hostileboundary42\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.jpg\"\r\n")} {
		for _, path := range []string{"/api/v1/lake/files", "/api/v1/uploads/" + up.UploadID + "/files"} {
			if status, b := e.hostile(t, c.write, "POST", path, whole, bytes.NewReader(body)); status != 400 {
				t.Errorf("unfinished body %d to %s: %d %s", i, path, status, b)
			}
		}
	}
	if n := e.rows(t, "file"); n != 0 {
		t.Errorf("%d files stored from hostile uploads", n)
	}
}

// nested is a JSON value depth arrays and objects deep.
func nested(depth int) string {
	return strings.Repeat(`{"a":[`, depth/2) + "1" + strings.Repeat("]}", depth/2)
}

// TestDeepJSONEverywhere sends JSON nested 10,000 and 100,000 deep to every
// route that takes a JSON body (the router's own list): each answers 4xx.
func TestDeepJSONEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 100,000-deep JSON to every route")
	}
	e := start(t, appliance.Config{})
	c := e.creds(t)
	f := e.fixture(t)
	for _, depth := range []int{10_000, 100_000} {
		deep := nested(depth)
		for _, r := range web.Routes() {
			if r.Method == "GET" || r.Method == "DELETE" || r.Path == "/api/v1/lake/files" ||
				strings.HasSuffix(r.Path, "/files") || r.Function == "register_model" {
				continue // no JSON body: multipart or none
			}
			path := f.fill(r.Path)
			for _, body := range []string{deep, `{"query": "x", "filter": ` + deep + `}`, `{"metadata": ` + deep + `}`} {
				status, b := e.hostile(t, c.admin, r.Method, path, "application/json", strings.NewReader(body))
				if status < 400 || status >= 500 {
					t.Errorf("%s %s with JSON %d deep: %d %.200s", r.Method, r.Path, depth, status, b)
				}
			}
		}
	}
}

// hostileFixture holds real ids, so a hostile request reaches the checks
// behind the lookups.
type hostileFixture struct {
	unique, collection, project, upload, frame string
}

func (e *env) fixture(t *testing.T) hostileFixture {
	t.Helper()
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "c"}, memFile("a.jpg", testmedia.JPEG(16, 16, 1)))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	coll, err := e.a.Lake.CollectionByName(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	pid := e.project(t, client.ContentImage)
	up, err := e.write.InitializeUpload(ctx, pid, "frames", 10)
	if err != nil {
		t.Fatal(err)
	}
	fr, err := e.write.UploadFrame(ctx, up.UploadID, client.Frame{File: memFile("f.jpg", testmedia.JPEG(16, 16, 2))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.write.InsertImageEmbeddings(ctx, []client.Embedding{{UniqueName: res.Stored[0].UniqueName,
		Embeddings: []float32{1, 2, 3}}}, "m", 3); err != nil {
		t.Fatal(err)
	}
	return hostileFixture{unique: res.Stored[0].UniqueName, collection: coll.ID, project: pid, upload: up.UploadID,
		frame: fr.UniqueName}
}

// fill puts the fixture's ids into a route's path parameters.
func (f hostileFixture) fill(path string) string {
	return strings.NewReplacer(":uniqueName", f.unique, ":collectionId", f.collection, ":projectId", f.project,
		":uploadId", f.upload).Replace(pathParam.ReplaceAllStringFunc(path, func(p string) string {
		switch p {
		case ":uniqueName", ":collectionId", ":projectId", ":uploadId":
			return p
		}
		return "x_hostile"
	}))
}

// TestNumbersOutOfRange: every number a request carries, in the query, the
// JSON body or a form field, is refused with a 400 when negative, huge,
// fractional where whole, or not a number.
func TestNumbersOutOfRange(t *testing.T) {
	e := start(t, appliance.Config{})
	c := e.creds(t)
	f := e.fixture(t)
	huge := []string{"-1", "99999999999999999999", "9223372036854775808", "1.5", "1e400", "NaN", "0x10"}
	type req struct{ method, path, body string }
	var reqs []req
	for _, path := range []string{"/api/v1/tasks", "/api/v1/projects", "/api/v1/jobs", "/api/v1/runs",
		"/api/v1/projects/" + f.project + "/annotations", "/api/v1/dataset-versions/x_hostile/data"} {
		for _, param := range []string{"pageIndex", "pageSize"} {
			for _, v := range huge {
				reqs = append(reqs, req{"GET", path + "?" + param + "=" + v, ""})
			}
		}
		reqs = append(reqs, req{"GET", path + "?pageSize=0", ""}, req{"GET", path + "?pageSize=100000", ""})
	}
	fn := func(name, body string) { reqs = append(reqs, req{"POST", "/api/v1/client/" + name, body}) }
	for _, v := range append(huge[:5], "-0.5", "1e308", `"1"`, "true") {
		fn("get_item_list_from_datalake", `{"item_type": "image", "page_index": `+v+`}`)
		fn("get_item_list_from_datalake", `{"item_type": "image", "page_size": `+v+`}`)
		fn("get_item_list_from_collection", `{"collection_id": "`+f.collection+`", "page_size": `+v+`}`)
		fn("find_similar", `{"model_name": "m", "unique_name": "`+f.unique+`", "k": `+v+`}`)
		fn("insert_image_embeddings", `{"model_name": "m", "vector_dimension": [`+v+`], "embedding_list": [{"uniqueName": "`+f.unique+`", "embeddings": [1]}]}`)
		fn("auto_annotate_collection", `{"collection_id": "`+f.collection+`", "model_name": "default", "confidence_threshold": `+v+`}`)
		fn("auto_annotate_collection", `{"collection_id": "`+f.collection+`", "model_name": "default", "video_fps": `+v+`}`)
		fn("auto_annotate_collection", `{"collection_id": "`+f.collection+`", "model_name": "default", "input_resolution": [`+v+`, `+v+`]}`)
		fn("create_dataset_from_collection", `{"collection_id": "`+f.collection+`", "split_info": {"train": `+v+`, "test": 0, "validation": 0}}`)
		reqs = append(reqs, req{"POST", "/api/v1/projects", `{"projectName": "p", "contentType": ` + v + `, "labels": [{"name": "a"}]}`},
			req{"POST", "/api/v1/projects/" + f.project + "/uploads", `{"collectionName": "c2", "totalFileCount": ` + v + `}`},
			req{"POST", "/api/v1/datasets/x_hostile/versions", `{"trainingSetPercentage": ` + v + `, "testingSetPercentage": 0, "validationSetPercentage": 0}`},
			req{"PUT", "/api/v1/projects/" + f.project + "/frames/" + f.frame + "/annotations", `[{"label": "car", "x": 0, "y": 0, "width": ` + strings.Replace(v, "1.5", "33", 1) + `, "height": 1}]`})
	}
	// A box may overlap the image's edge; one wholly outside it is refused.
	for _, v := range []string{"-1", "16", "99999999999999999999", "9223372036854775808", "1e308"} {
		reqs = append(reqs, req{"PUT", "/api/v1/projects/" + f.project + "/frames/" + f.frame + "/annotations",
			`[{"label": "car", "x": ` + v + `, "y": 0, "width": 1, "height": 1}]`})
	}
	fn("create_dataset_from_collection", `{"collection_id": "`+f.collection+`", "split_info": {"train": 60, "test": 60, "validation": -20}}`)
	for _, r := range reqs {
		status, b := e.hostile(t, c.admin, r.method, r.path, "application/json", strings.NewReader(r.body))
		if status != 400 && (status != 404 || !strings.Contains(r.path, "x_hostile")) {
			t.Errorf("%s %s %s: %d %.300s", r.method, r.path, r.body, status, b)
		}
	}
	for _, v := range append(huge, "2147483648", "", " 1") {
		ctype, body := rawFilePart(map[string]string{"labels": "[]", "sequenceNo": v}, "s.jpg", testmedia.JPEG(16, 16, 3))
		if status, b := e.hostile(t, c.write, "POST", "/api/v1/uploads/"+f.upload+"/files", ctype, body); status != 400 {
			t.Errorf("sequenceNo %q: %d %s", v, status, b)
		}
	}
}
