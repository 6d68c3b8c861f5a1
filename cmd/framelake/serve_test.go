package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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
	data := t.TempDir()
	if out, err := run(t, "serve", "--data", data, "--facet-sample", "0"); err == nil ||
		!strings.Contains(out, "--facet-sample must be at least 1, got 0") {
		t.Fatalf("serve --facet-sample 0: %v %s", err, out)
	}
	s := startServer(t, data, "--facet-sample", "2")
	key, secret := writeKey(t, data)
	c := client.New(s.base, key, secret)
	var files []client.UploadFile
	for i := range 5 {
		files = append(files, bytesFile(fmt.Sprintf("f%d.jpg", i), testmedia.JPEG(64, 48, i)))
	}
	if res, err := c.UploadFiles(context.Background(), client.UploadOptions{}, files...); err != nil || len(res.Stored) != 5 {
		t.Fatalf("upload: %+v %v", res, err)
	}
	var got struct {
		Total     int  `json:"total"`
		Estimated bool `json:"estimated"`
		Sampled   int  `json:"sampled"`
	}
	for _, q := range []struct {
		query        string
		total, taken int
	}{{"width = 64", 5, 2}, {`name IN ("f1.jpg", "f2.jpg")`, 2, 0}} {
		req, _ := http.NewRequest("GET", s.base+"/api/v1/lake/histogram?field=width&query="+url.QueryEscape(q.query), nil)
		req.Header.Set("key", key)
		req.Header.Set("secret", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got.Sampled, got.Estimated = 0, false
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || got.Total != q.total || got.Sampled != q.taken || got.Estimated != (q.taken > 0) {
			t.Errorf("histogram of %q: %+v %v, want %d files, %d sampled", q.query, got, err, q.total, q.taken)
		}
	}
}
