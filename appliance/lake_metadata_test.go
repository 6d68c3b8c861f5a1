package appliance_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// metaFixture uploads two images into collection "depot" with file metadata
// and collection metadata, and returns them with the collection's id.
func metaFixture(t *testing.T, e *env) ([]client.StoredFile, string) {
	t.Helper()
	ctx := context.Background()
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "depot",
		Metadata:           json.RawMessage(`{"camera": "n1", "shift": 1}`),
		CollectionMetadata: json.RawMessage(`{"site": "north", "owner": {"team": "a"}}`)},
		memFile("m0.jpg", testmedia.JPEG(20, 10, 1)), memFile("m1.jpg", testmedia.JPEG(20, 10, 2)))
	if err != nil || len(res.Stored) != 2 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection", Query: "name = depot"})
	if err != nil || len(colls) != 1 {
		t.Fatalf("collection: %+v %v", colls, err)
	}
	return res.Stored, colls[0].ID
}

func lakeCount(t *testing.T, e *env, itemType, query string) int {
	t.Helper()
	n, err := e.read.GetItemCountFromLake(context.Background(), itemType, query, nil)
	if err != nil || len(n) != 1 {
		t.Fatalf("count %s %q: %+v %v", itemType, query, n, err)
	}
	return n[0].Count
}

// TestFileMetadataMergePatch sets, merges and removes keys of a file's
// metadata over HTTP and reads them back through details and queries.
func TestFileMetadataMergePatch(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	files, _ := metaFixture(t, e)
	name := files[0].UniqueName
	steps := []struct {
		patch string
		want  map[string]any
	}{
		{`{"camera": "n2", "shift": 3}`, map[string]any{"camera": "n2", "shift": float64(3)}},
		{`{"lens": {"kind": "wide", "mm": 24}}`, map[string]any{"camera": "n2", "shift": float64(3),
			"lens": map[string]any{"kind": "wide", "mm": float64(24)}}},
		{`{"shift": null, "lens": {"mm": null}}`, map[string]any{"camera": "n2", "lens": map[string]any{"kind": "wide"}}},
		{`{}`, map[string]any{"camera": "n2", "lens": map[string]any{"kind": "wide"}}},
	}
	for _, s := range steps {
		got, err := e.write.PatchFileMetadata(ctx, name, json.RawMessage(s.patch))
		if err != nil || got.UniqueName != name || !reflect.DeepEqual(got.Metadata, s.want) {
			t.Fatalf("patch %s: %+v %v; want metadata %v", s.patch, got, err, s.want)
		}
	}
	d, err := e.read.GetFileDetails(ctx, name, map[string]bool{"camera": true, "shift": true, "lens": true})
	if err != nil || d["camera"] != "n2" || d["shift"] != nil || toJSON(d["lens"]) != `{"kind":"wide"}` {
		t.Errorf("details after patches: %v %v", d, err)
	}
	items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{Query: "metadata.camera = n2"})
	if err != nil || len(items) != 1 || items[0].UniqueName != name {
		t.Errorf("list metadata.camera = n2: %+v %v", items, err)
	}
	for q, want := range map[string]int{
		"metadata.camera = n1":   1, // the other file keeps its upload metadata
		"metadata.shift = 3":     0, // removed
		"metadata.shift = 1":     1,
		`metadata.camera = "n2"`: 1,
	} {
		if n := lakeCount(t, e, "image", q); n != want {
			t.Errorf("count %q = %d, want %d", q, n, want)
		}
	}
}

// TestCollectionMetadataMergePatch covers collectionMetadata on upload (on
// create, then merged by a second upload) and PATCH on the collection.
func TestCollectionMetadataMergePatch(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	_, colID := metaFixture(t, e)
	if n := lakeCount(t, e, "image_collection", "metadata.site = north"); n != 1 {
		t.Errorf("collection by metadata after upload: %d", n)
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "depot",
		CollectionMetadata: json.RawMessage(`{"batch": 2, "owner": {"lead": "b"}}`)}, memFile("m2.jpg", testmedia.JPEG(20, 10, 3)))
	if err != nil || len(res.Stored) != 1 {
		t.Fatalf("second upload: %+v %v", res, err)
	}
	got, err := e.write.PatchCollectionMetadata(ctx, colID, map[string]any{"site": nil, "zone": "z9"})
	want := map[string]any{"batch": float64(2), "zone": "z9", "owner": map[string]any{"team": "a", "lead": "b"}}
	if err != nil || got.ID != colID || got.Name != "depot" || got.ContentType != "image_collection" ||
		!reflect.DeepEqual(got.Metadata, want) {
		t.Fatalf("patch collection: %+v %v; want metadata %v", got, err, want)
	}
	d, err := e.read.GetCollectionDetails(ctx, colID, map[string]bool{"zone": true, "site": true, "owner": true})
	if err != nil || d["zone"] != "z9" || d["site"] != nil || toJSON(d["owner"]) != `{"lead":"b","team":"a"}` {
		t.Errorf("collection details: %v %v", d, err)
	}
	for q, want := range map[string]int{"metadata.site = north": 0, "metadata.zone = z9": 1, "metadata.batch = 2": 1} {
		if n := lakeCount(t, e, "image_collection", q); n != want {
			t.Errorf("count image_collection %q = %d, want %d", q, n, want)
		}
	}
	items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection", Query: "metadata.zone = z9"})
	if err != nil || len(items) != 1 || items[0].ID != colID {
		t.Errorf("list collections by metadata: %+v %v", items, err)
	}
}

// TestMetadataBadInput: each bad request is refused with the status and
// field it names, and the stored metadata is unchanged afterwards.
func TestMetadataBadInput(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	files, colID := metaFixture(t, e)
	filePath := "/api/v1/lake/files/" + files[0].UniqueName + "/metadata"
	colPath := "/api/v1/lake/collections/" + colID + "/metadata"
	const mp = "application/merge-patch+json"
	cases := []struct {
		path, ctype, body string
		status            int
		field, want       string
	}{
		{filePath, mp, `{"camera": `, 400, "metadata", "not valid JSON"},
		{filePath, mp, `["camera"]`, 400, "metadata", "JSON object, got an array"},
		{filePath, "application/json", `null`, 400, "metadata", "JSON object, got null"},
		{filePath, mp, `"n3"`, 400, "metadata", "got a string"},
		{filePath, mp, ``, 400, "metadata", "empty"},
		{filePath, mp, `{"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": {"j": {"k": {"l": {"m": {"n": {"o": {"p": {"q": {"r": {"s": {"t": {"u": {"v": {"w": {"x": {"y": {"z": {"A": {"B": {"C": {"D": {"E": {"F": {"G": 1}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}`, 400, "metadata", "deeper than 32"},
		{filePath, "text/plain", `{"camera": "n3"}`, 415, "", "merge-patch+json"},
		{"/api/v1/lake/files/no-such-file/metadata", mp, `{"camera": "n3"}`, 404, "", "not found"},
		{colPath, mp, `[1]`, 400, "metadata", "JSON object"},
		{"/api/v1/lake/collections/col_missing/metadata", mp, `{"site": "x"}`, 404, "", "not found"},
	}
	for _, c := range cases {
		status, eb := e.raw(t, "PATCH", c.path, c.ctype, strings.NewReader(c.body))
		if status != c.status || eb["field"] != c.field || !strings.Contains(eb["message"], c.want) {
			t.Errorf("PATCH %s %.40s: %d %v; want %d field %q containing %q", c.path, c.body, status, eb, c.status, c.field, c.want)
		}
	}
	// A read-only key may not change metadata.
	if _, err := e.read.PatchFileMetadata(ctx, files[0].UniqueName, map[string]any{"camera": "n3"}); client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key patch file: %v", err)
	}
	if _, err := e.read.PatchCollectionMetadata(ctx, colID, map[string]any{"site": "x"}); client.CodeOf(err) != "permission_denied" {
		t.Errorf("read key patch collection: %v", err)
	}
	// Bad collectionMetadata on upload: a 400 naming it, and nothing stored.
	before := lakeCount(t, e, "image", "")
	for _, c := range []struct {
		opt  client.UploadOptions
		want string
	}{
		{client.UploadOptions{Collection: "depot", CollectionMetadata: json.RawMessage(`[1, 2]`)}, "JSON object"},
		{client.UploadOptions{Collection: "depot", CollectionMetadata: json.RawMessage(`{"site": `)}, "not valid JSON"},
		{client.UploadOptions{CollectionMetadata: json.RawMessage(`{"site": "x"}`)}, "needs collectionName"},
	} {
		_, err := e.write.UploadFiles(ctx, c.opt, memFile("bad.jpg", testmedia.JPEG(20, 10, 9)))
		var ce *client.Error
		if !errorsAs(err, &ce) || ce.Status != 400 || ce.Field != "collectionMetadata" || !strings.Contains(ce.Message, c.want) {
			t.Errorf("upload with collectionMetadata %s: %v; want 400 field collectionMetadata containing %q", c.opt.CollectionMetadata, err, c.want)
		}
	}
	if after := lakeCount(t, e, "image", ""); after != before {
		t.Errorf("refused uploads stored files: %d then %d", before, after)
	}
	d, err := e.read.GetFileDetails(ctx, files[0].UniqueName, map[string]bool{"camera": true, "shift": true})
	if err != nil || d["camera"] != "n1" || d["shift"] != float64(1) {
		t.Errorf("file metadata changed by refused requests: %v %v", d, err)
	}
	cd, err := e.read.GetCollectionDetails(ctx, colID, map[string]bool{"site": true})
	if err != nil || cd["site"] != "north" {
		t.Errorf("collection metadata changed by refused requests: %v %v", cd, err)
	}
}
