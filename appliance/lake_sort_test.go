package appliance_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestLakeSortOrders lists files under every sort field and direction over
// HTTP. b, a and c are uploaded in that order with different sizes; b's
// metadata is changed afterwards, so date_modified and date_created differ.
func TestLakeSortOrders(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	stored := map[string]client.StoredFile{}
	for i, f := range []struct {
		name string
		w, h int
	}{{"b.jpg", 120, 90}, {"a.jpg", 10, 8}, {"c.jpg", 50, 40}} {
		res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "sorts"}, memFile(f.name, testmedia.JPEG(f.w, f.h, i)))
		if err != nil {
			t.Fatal(err)
		}
		stored[f.name] = res.Stored[0]
		time.Sleep(5 * time.Millisecond) // distinct creation times (milliseconds)
	}
	if _, err := e.write.PatchFileMetadata(ctx, stored["b.jpg"].UniqueName, map[string]any{"checked": true}); err != nil {
		t.Fatal(err)
	}
	bySize := []string{"a.jpg", "b.jpg", "c.jpg"}
	sort.Slice(bySize, func(i, j int) bool { return stored[bySize[i]].FileSize < stored[bySize[j]].FileSize })
	frames := frameCollection(t, e, client.ContentVideo, "frames")
	stills := frameCollection(t, e, client.ContentImage, "stills") // upload sequence of an image project

	cases := []struct {
		name       string
		collection string
		sort       *client.SortOrder
		want       []string
	}{
		{"default is date_modified DESC", "", nil, []string{"b.jpg", "c.jpg", "a.jpg"}},
		{"date_modified DESC", "", &client.SortOrder{SortByField: "date_modified", SortOrder: "DESC"}, []string{"b.jpg", "c.jpg", "a.jpg"}},
		{"date_modified ASC", "", &client.SortOrder{SortByField: "date_modified", SortOrder: "ASC"}, []string{"a.jpg", "c.jpg", "b.jpg"}},
		{"order alone defaults the field", "", &client.SortOrder{SortOrder: "ASC"}, []string{"a.jpg", "c.jpg", "b.jpg"}},
		{"date_created DESC", "", &client.SortOrder{SortByField: "date_created", SortOrder: "DESC"}, []string{"c.jpg", "a.jpg", "b.jpg"}},
		{"date_created ASC", "", &client.SortOrder{SortByField: "date_created", SortOrder: "ASC"}, []string{"b.jpg", "a.jpg", "c.jpg"}},
		{"field alone defaults to DESC", "", &client.SortOrder{SortByField: "date_created"}, []string{"c.jpg", "a.jpg", "b.jpg"}},
		{"size ASC", "", &client.SortOrder{SortByField: "size", SortOrder: "ASC"}, bySize},
		{"size DESC", "", &client.SortOrder{SortByField: "size", SortOrder: "desc"}, reversed(bySize)},
		{"name DESC", "", &client.SortOrder{SortByField: "name", SortOrder: "DESC"}, []string{"c.jpg", "b.jpg", "a.jpg"}},
		{"video_index ASC", frames, &client.SortOrder{SortByField: "video_index", SortOrder: "ASC"}, []string{"f0.jpg", "f1.jpg", "f2.jpg"}},
		{"video_index DESC", frames, &client.SortOrder{SortByField: "video_index", SortOrder: "DESC"}, []string{"f2.jpg", "f1.jpg", "f0.jpg"}},
		{"video_index ASC, image project", stills, &client.SortOrder{SortByField: "video_index", SortOrder: "ASC"}, []string{"f0.jpg", "f1.jpg", "f2.jpg"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var items []client.Item
			var err error
			if c.collection == "" {
				items, err = e.read.GetItemListFromDatalake(ctx, client.ItemQuery{Query: "collection = sorts", SortOrder: c.sort})
			} else {
				items, err = e.read.GetItemListFromCollection(ctx, c.collection, client.ItemQuery{SortOrder: c.sort})
			}
			if err != nil || names(items) != strings.Join(c.want, ",") {
				t.Errorf("got %s %v; want %s", names(items), err, strings.Join(c.want, ","))
			}
		})
	}

	status, eb := e.raw(t, "POST", "/api/v1/client/get_item_list_from_datalake", "application/json",
		strings.NewReader(`{"sort_order": {"sort_by_field": "colour"}}`))
	if status != 400 || eb["field"] != "sort_order.sort_by_field" {
		t.Fatalf("unknown sort field: %d %v", status, eb)
	}
	for _, f := range []string{"date_modified", "date_created", "name", "size", "video_index"} {
		if !strings.Contains(eb["message"], f) {
			t.Errorf("unknown sort field message %q does not list %s", eb["message"], f)
		}
	}
}

// frameCollection uploads three frames through a video project's upload session
// in the order 2, 0, 1 and returns the id of their collection.
func frameCollection(t *testing.T, e *env, ct int, name string) string {
	t.Helper()
	ctx := context.Background()
	pid, err := e.write.CreateProject(ctx, client.Project{Name: name, ContentType: ct,
		Labels: []client.Label{{Name: "dog"}}})
	if err != nil {
		t.Fatal(err)
	}
	up, err := e.write.InitializeUpload(ctx, pid, name, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []int{2, 0, 1} {
		f := client.Frame{File: memFile(fmt.Sprintf("f%d.jpg", seq), testmedia.JPEG(16, 12, 10+seq)), SequenceNo: &seq}
		if _, err := e.write.UploadFrame(ctx, up.UploadID, f); err != nil {
			t.Fatal(err)
		}
	}
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection", Query: "name = " + name})
	if err != nil || len(colls) != 1 {
		t.Fatalf("frames collection: %+v %v", colls, err)
	}
	return colls[0].ID
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// TestLakeOtherFiles: bytes that are neither image nor video are stored as
// type other, listed and counted with item_type other, and their collection
// is an other_collection. 22 files also show the default page size of 20.
func TestLakeOtherFiles(t *testing.T) {
	e := start(t, appliance.Config{})
	ctx := context.Background()
	ups := []client.UploadFile{memFile("notes.txt", []byte("shift log\n")), memFile("blob.bin", []byte{0, 1, 2, 250, 251})}
	for i := range 20 {
		ups = append(ups, memFile(fmt.Sprintf("log-%02d.txt", i), []byte(fmt.Sprintf("line %d\n", i))))
	}
	res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "misc"}, ups...)
	if err != nil || len(res.Stored) != 22 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	for _, f := range res.Stored {
		if f.Type != "other" {
			t.Errorf("%s stored as %q, want other", f.Name, f.Type)
		}
	}
	for _, c := range []struct {
		itemType, query string
		want            int
	}{
		{"other", "", 22}, {"other", "name ~ log", 20}, {"image", "", 0},
		{"other_collection", "", 1}, {"image_collection", "", 0},
	} {
		if n := lakeCount(t, e, c.itemType, c.query); n != c.want {
			t.Errorf("count %s %q = %d, want %d", c.itemType, c.query, n, c.want)
		}
	}
	page, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "other"})
	if err != nil || len(page) != 20 || page[0].UniqueName == "" || page[0].URL == "" {
		t.Errorf("default page of other files: %d items %v", len(page), err)
	}
	// page_index and page_size may come as doubles (the interface's samples are).
	var second []client.Item
	err = e.read.Call(ctx, "get_item_list_from_datalake", map[string]any{"item_type": "other", "page_index": 1.0,
		"sort_order": map[string]string{"sort_by_field": "name", "sort_order": "ASC"}}, &second)
	if err != nil || names(second) != "log-19.txt,notes.txt" {
		t.Errorf("second default page by name: %s %v", names(second), err)
	}
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "other_collection"})
	if err != nil || names(colls) != "misc" {
		t.Fatalf("other collections: %+v %v", colls, err)
	}
	d, err := e.read.GetCollectionDetails(ctx, colls[0].ID, map[string]bool{"fileSize": true})
	if err != nil || d["contentType"] != "other_collection" || d["fileSize"].(float64) <= 0 {
		t.Errorf("other collection details: %v %v", d, err)
	}
	members, err := e.read.GetItemListFromCollection(ctx, colls[0].ID, client.ItemQuery{Query: "name = notes.txt"})
	if err != nil || len(members) != 1 {
		t.Fatalf("notes.txt in misc: %+v %v", members, err)
	}
	resp, err := http.Get(members[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "shift log\n" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("notes.txt media: %d %q %s", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
}
