package appliance_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake"
)

// lakeFixture uploads a small lake: 6 images in "north" (camera n1), 3 in
// "south" (camera s1), a video in "clips"; dog boxes on two north files (one
// human, one machine), a cat box on a south file, a user tag on another.
func lakeFixture(t *testing.T, e *env) map[string]client.StoredFile {
	t.Helper()
	ctx := context.Background()
	files := map[string]client.StoredFile{}
	up := func(coll, camera string, names ...string) {
		var ups []client.UploadFile
		for i, n := range names {
			ups = append(ups, memFile(n, testmedia.JPEG(40+i, 30, len(files)+i)))
		}
		res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: coll,
			Metadata: json.RawMessage(fmt.Sprintf(`{"camera": %q, "shift": %d}`, camera, len(names)))}, ups...)
		if err != nil || len(res.Stored) != len(names) {
			t.Fatalf("upload %s: %+v %v", coll, res, err)
		}
		for _, f := range res.Stored {
			files[f.Name] = f
		}
	}
	up("north", "n1", "n0.jpg", "n1.jpg", "n2.jpg", "n3.jpg", "n4.jpg", "n5.jpg")
	up("south", "s1", "s0.jpg", "s1.jpg", "s2.jpg")
	clip := filepath.Join(t.TempDir(), "clip.mp4")
	if err := testmedia.Video(clip, 64, 48, 5, 1); err != nil {
		t.Fatal(err)
	}
	if res, err := e.write.UploadFiles(ctx, client.UploadOptions{Collection: "clips"}, client.FileFromPath(clip)); err != nil {
		t.Fatal(err)
	} else {
		files["clip.mp4"] = res.Stored[0]
	}
	conf := 0.9
	l := e.a.Lake
	err := l.DB().Tx(ctx, func(tx *sql.Tx) error {
		for name, b := range map[string]lake.Box{
			"n0.jpg": {Label: "dog", X: 1, Y: 1, W: 5, H: 5, Source: lake.Human},
			"n1.jpg": {Label: "dog", X: 1, Y: 1, W: 5, H: 5, Source: lake.Machine, Confidence: &conf},
			"s0.jpg": {Label: "cat", X: 1, Y: 1, W: 5, H: 5, Source: lake.Human},
		} {
			f, _ := l.File(ctx, files[name].UniqueName)
			if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), b.Source, "op-test", 0, []lake.Box{b}); err != nil {
				return err
			}
		}
		f, _ := l.File(ctx, files["n2.jpg"].UniqueName)
		return lake.AddFileTags(ctx, tx, f.Seq(), []lake.Tag{{Name: "sunny"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func names(items []client.Item) string {
	var out []string
	for _, it := range items {
		out = append(out, it.Name)
	}
	return strings.Join(out, ",")
}

func TestLakeCountsAndQueries(t *testing.T) {
	e := start(t, appliance.Config{})
	lakeFixture(t, e)
	ctx := context.Background()
	today := time.Now().UTC().Format(time.DateOnly)
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	cases := []struct {
		itemType, query string
		filter          *client.Filter
		want            int
	}{
		{"", "", nil, 9},
		{"video", "", nil, 1},
		{"image_collection", "", nil, 2},
		{"video_collection", "", nil, 1},
		{"", "annotation.label=dog", nil, 2},
		{"", "metadata.Tags=sunny", nil, 1},
		{"", `collection = north AND metadata.camera = "n1" AND NOT annotation.label = dog`, nil, 4},
		{"", "annotation.source = machine OR annotation.label = cat", nil, 2},
		{"", "", &client.Filter{AnnotationTypes: []string{"raw"}}, 6},
		{"", "", &client.Filter{AnnotationTypes: []string{"human"}}, 2},
		{"", "", &client.Filter{AnnotationTypes: []string{"human", "machine"}}, 3},
		{"", "", &client.Filter{FromDate: today, ToDate: today}, 9},
		{"", "", &client.Filter{ToDate: yesterday}, 0},
		{"image_collection", "annotation.label = cat", nil, 1},
	}
	for _, c := range cases {
		n, err := e.read.GetItemCountFromLake(ctx, c.itemType, c.query, c.filter)
		if err != nil || len(n) != 1 || n[0].Count != c.want {
			t.Errorf("count %q %q %+v = %+v, %v; want [{%d}]", c.itemType, c.query, c.filter, n, err, c.want)
		}
	}
}

func TestLakeListingPagingAndDetails(t *testing.T) {
	e := start(t, appliance.Config{})
	files := lakeFixture(t, e)
	ctx := context.Background()
	// Stable paging by name, ascending.
	var got []string
	for page := 0; page < 3; page++ {
		items, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{PageIndex: page, PageSize: 4,
			SortOrder: &client.SortOrder{SortByField: "name", SortOrder: "ASC"}})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names(items))
		for _, it := range items {
			if it.UniqueName == "" || !strings.Contains(it.URL, "/media/") {
				t.Errorf("file item without uniqueName or url: %+v", it)
			}
		}
	}
	if want := []string{"n0.jpg,n1.jpg,n2.jpg,n3.jpg", "n4.jpg,n5.jpg,s0.jpg,s1.jpg", "s2.jpg"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pages %v, want %v", got, want)
	}
	colls, err := e.read.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection",
		SortOrder: &client.SortOrder{SortByField: "name", SortOrder: "DESC"}})
	if err != nil || names(colls) != "south,north" || colls[0].UniqueName != "" {
		t.Fatalf("collections: %+v %v", colls, err)
	}
	south := colls[0].ID
	members, err := e.read.GetItemListFromCollection(ctx, south, client.ItemQuery{Query: "annotation.label = cat"})
	if err != nil || names(members) != "s0.jpg" {
		t.Errorf("collection members: %+v %v", members, err)
	}
	if n, err := e.read.GetItemCountFromCollection(ctx, south, "", nil); err != nil || len(n) != 1 || n[0].Count != 3 {
		t.Errorf("collection count %+v %v", n, err)
	}

	d, err := e.read.GetFileDetails(ctx, files["n2.jpg"].UniqueName, map[string]bool{"id": false, "fileSize": true,
		"resolution": true, "Tags": true, "camera": true, "storagePath": true, "bucketName": true, "absent": true})
	if err != nil {
		t.Fatal(err)
	}
	if _, has := d["id"]; has || d["camera"] != "n1" || d["Tags"].([]any)[0] != "sunny" || d["bucketName"] != "local" ||
		d["resolution"].(map[string]any)["width"] != float64(42) || d["absent"] != nil || d["url"] == nil {
		t.Errorf("file details %v", d)
	}
	cd, err := e.read.GetCollectionDetails(ctx, south, map[string]bool{"fileSize": true, "frameCount": true, "createdAt": true})
	if err != nil || cd["contentType"] != "image_collection" || cd["frameCount"] != float64(3) || cd["fileSize"].(float64) <= 0 {
		t.Errorf("collection details %v %v", cd, err)
	}
}

func TestLakeFunctionsBadInput(t *testing.T) {
	e := start(t, appliance.Config{})
	cases := []struct {
		fn, body    string
		status      int
		field, want string
	}{
		{"get_item_list_from_datalake", `{"item_type": "pictures"}`, 400, "item_type", "not one of image, video"},
		{"get_item_list_from_datalake", `{"page_size": 1001}`, 400, "page_size", "1..1000"},
		{"get_item_list_from_datalake", `{"page_size": 0}`, 400, "page_size", "1..1000, got 0"},
		{"get_item_list_from_datalake", `{"page_size": -5}`, 400, "page_size", "1..1000, got -5"},
		{"get_item_list_from_datalake", `{"page_size": 2.5}`, 400, "page_size", "whole number"},
		{"get_item_list_from_datalake", `{"page_size": "20"}`, 400, "page_size", "number"},
		{"get_item_list_from_datalake", `{"page_index": -1}`, 400, "page_index", "0..2147483647, got -1"},
		{"get_item_list_from_datalake", `{"page_index": 1e12}`, 400, "page_index", "0..2147483647, got 1e+12"},
		{"get_item_list_from_collection", `{"collection_id": "x", "page_size": 0}`, 400, "page_size", "1..1000"},
		{"get_item_list_from_datalake", `{"item_type": "image_collection", "sort_order": {"sort_by_field": "video_index"}}`, 400, "sort_order.sort_by_field", "files only"},
		{"get_item_list_from_datalake", `{"query": "colour = red"}`, 400, "query", "query 1:1: unknown field"},
		{"get_item_list_from_datalake", `{"query": "(name = a"}`, 400, "query", "query 1:"},
		{"get_item_list_from_datalake", `{"query": "name = a; DROP TABLE file"}`, 400, "query", "query 1:"},
		{"get_item_list_from_datalake", `{"filter": {"from_date": "2026-13-01"}}`, 400, "filter.from_date", "YYYY-MM-DD"},
		{"get_item_list_from_datalake", `{"filter": {"annotation_types": ["robot"]}}`, 400, "filter.annotation_types", "raw, human, machine"},
		{"get_item_list_from_datalake", `{"filter": {"colour": 1}}`, 400, "colour", "unknown field"},
		{"get_item_list_from_datalake", `{"sort_order": {"sort_by_field": "colour"}}`, 400, "sort_order.sort_by_field", "date_modified"},
		{"get_item_list_from_datalake", `{"sort_order": {"sort_order": "UP"}}`, 400, "sort_order.sort_order", "ASC or DESC"},
		{"get_item_list_from_datalake", `{"page": 2}`, 400, "page", "unknown field"},
		{"get_item_count_from_collection", `{"collection_id": "col_missing"}`, 404, "", "not found"},
		{"get_item_count_from_collection", `{}`, 400, "collection_id", "required"},
		{"get_file_details", `{"unique_name": "nope"}`, 404, "", "not found"},
		{"get_file_details", `{"unique_name": "x", "fields_filter": {"fileSize": "yes"}}`, 400, "fields_filter", "boolean"},
		{"get_the_moon", `{}`, 404, "", "unknown client function"},
	}
	for _, c := range cases {
		status, eb := e.raw(t, "POST", "/api/v1/client/"+c.fn, "application/json", strings.NewReader(c.body))
		if status != c.status || eb["field"] != c.field || !strings.Contains(eb["message"], c.want) {
			t.Errorf("%s %s: %d %v; want %d field %q containing %q", c.fn, c.body, status, eb, c.status, c.field, c.want)
		}
	}
}
