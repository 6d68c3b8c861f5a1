package main_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testphotos"
)

// TestQualityAndDuplicatesCommands runs framelake quality and framelake
// duplicates against the real server: uploads already have scores, and a
// re-encoded copy of a real photo is grouped with it and tagged.
func TestQualityAndDuplicatesCommands(t *testing.T) {
	c, creds, stop := serveData(t, t.TempDir())
	defer stop()
	dog := testphotos.Read(t, testphotos.Darknet+"dog.jpg")
	files := map[string][]byte{"dog.jpg": dog, "dog-copy.jpg": testphotos.Edit(t, dog, 40, nil),
		"eagle.jpg": testphotos.Read(t, testphotos.Darknet+"eagle.jpg")}
	var ups []client.UploadFile
	for name, b := range files {
		ups = append(ups, client.UploadFile{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }})
	}
	res, err := c.UploadFiles(context.Background(), client.UploadOptions{Collection: "cli"}, ups...)
	if err != nil || len(res.Stored) != 3 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	un := map[string]string{}
	for _, f := range res.Stored {
		un[f.Name] = f.UniqueName
	}
	out, err := run(t, append([]string{"quality", "--query", "collection = cli"}, creds...)...)
	if err != nil || !strings.HasPrefix(out, "scored 0 images (0 did not decode)") {
		t.Fatalf("framelake quality: %v\n%s", err, out)
	}
	out, err = run(t, append([]string{"duplicates", "--tag", "--threshold", "10"}, creds...)...)
	want := "3 files compared by phash (threshold 10): 1 pairs, 1 groups, 1 duplicates, 1 tagged\nkeep " + un["dog.jpg"] +
		"\n  dup " + un["dog-copy.jpg"] + "\n"
	if err != nil || out != want {
		t.Fatalf("framelake duplicates: %v\n%s\nwant\n%s", err, out, want)
	}
	if n, err := c.GetItemCountFromLake(context.Background(), "", "Tags = near-duplicate", nil); err != nil || n[0].Count != 1 {
		t.Fatalf("tagged: %v %v", n, err)
	}
	if out, err := run(t, append([]string{"duplicates", "--method", "sift"}, creds...)...); err == nil || !strings.Contains(out, "method") {
		t.Fatalf("an unknown method: %v %s", err, out)
	}
}
