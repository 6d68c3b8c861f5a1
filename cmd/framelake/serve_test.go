package main_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// TestServeFacetSample: serve --facet-sample N estimates the sidebar's
// counts of a larger selection from its newest N files, and a sample
// under 1 is refused before anything starts.
func TestServeFacetSample(t *testing.T) {
	if out, err := run(t, "serve", "--data", t.TempDir(), "--facet-sample", "0"); err == nil ||
		!strings.Contains(out, "--facet-sample must be at least 1, got 0") {
		t.Fatalf("serve --facet-sample 0: %v %s", err, out)
	}
	s := startUIServer(t, "--facet-sample", "2")
	c := client.New(s.base, s.admin["key"], s.admin["secret"])
	var files []client.UploadFile
	for i := range 5 {
		files = append(files, bytesFile(fmt.Sprintf("f%d.jpg", i), testmedia.JPEG(64, 48, i)))
	}
	if res, err := c.UploadFiles(context.Background(), client.UploadOptions{}, files...); err != nil || len(res.Stored) != 5 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	for _, q := range []struct {
		query        string
		total, taken int
	}{{"width = 64", 5, 2}, {`name IN ("f1.jpg", "f2.jpg")`, 2, 0}} {
		var got struct {
			Total     int  `json:"total"`
			Estimated bool `json:"estimated"`
			Sampled   int  `json:"sampled"`
		}
		s.call(t, s.read, "GET", "/api/v1/lake/histogram?field=width&query="+url.QueryEscape(q.query), "", nil, &got)
		if got.Total != q.total || got.Sampled != q.taken || got.Estimated != (q.taken > 0) {
			t.Errorf("histogram of %q: %+v, want %d files, %d sampled", q.query, got, q.total, q.taken)
		}
	}
}
