package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/internal/testmedia"
)

// importSummary is the --json summary as a script reads it.
type importSummary struct {
	Files, Stored, Skipped int
	Rejected               []struct{ Name, Code, Reason string }
	Ignored                []struct {
		Ext    string
		Count  int
		Reason string
	}
}

func importJSON(t *testing.T, args ...string) importSummary {
	t.Helper()
	out, err := run(t, append([]string{"import", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("import %v: %v %s", args, err, out)
	}
	var sum importSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	return sum
}

// collectionTypes reads each collection's type from a data folder.
func collectionTypes(t *testing.T, data string) map[string]string {
	db, err := sqlitedb.Open(context.Background(), filepath.Join(data, "framelake.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.R.Query("SELECT name, type FROM collection")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, typ string
		rows.Scan(&n, &typ)
		out[n] = typ
	}
	return out
}

// TestImportMixedFolder: a Pascal VOC tree (images and their XML) with
// --format raw and a folder with a video and images import their media only, into a
// collection typed by the majority of them; the other files are counted by
// extension in the summary, which does not fail the import.
func TestImportMixedFolder(t *testing.T) {
	voc, mixed, data := t.TempDir(), t.TempDir(), t.TempDir()
	files := map[string][]byte{
		"JPEGImages/000001.jpg":  testmedia.JPEG(64, 48, 1),
		"JPEGImages/000002.jpg":  testmedia.JPEG(64, 48, 2),
		"Annotations/000001.xml": []byte("<annotation><object><name>car</name></object></annotation>"),
		"Annotations/000002.xml": []byte("<annotation/>"),
		"ImageSets/Main/train":   []byte("000001\n000002\n"), // no extension: judged by its bytes
		"JPEGImages/000003":      testmedia.JPEG(32, 32, 3),  // no extension, but a JPEG's bytes
	}
	for name, b := range files {
		p := filepath.Join(voc, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := importJSON(t, voc, "--data", data, "--collection", "voc", "--format", "raw")
	wantIgnored := []struct {
		Ext    string
		Count  int
		Reason string
	}{{"", 1, "not an image or video"}, {".xml", 2, "not an image or video"}}
	if sum.Files != 3 || sum.Stored != 3 || len(sum.Rejected) != 0 || !reflect.DeepEqual(sum.Ignored, wantIgnored) {
		t.Errorf("voc: %+v", sum)
	}

	if err := testmedia.Video(filepath.Join(mixed, "a-clip.mp4"), 64, 48, 5, 1); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"b.jpg", "c.jpg"} {
		os.WriteFile(filepath.Join(mixed, name), testmedia.JPEG(32, 32, i), 0o644)
	}
	if sum := importJSON(t, mixed, "--data", data, "--collection", "mixed"); sum.Stored != 3 || len(sum.Ignored) != 0 {
		t.Errorf("mixed: %+v", sum)
	}
	if got := collectionTypes(t, data); got["voc"] != "image_collection" || got["mixed"] != "image_collection" {
		t.Errorf("collection types %v, want image_collection for both", got)
	}
}
