package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
)

// TestWebAppQualityHistogram: the web app's histogram offers the quality
// scores, counts the scored images by brightness and writes a brushed range
// into the query (web/ui/test/quality.mjs in Chromium). Like the other
// browser tests it fails, never skips, when Node, Chromium or
// playwright-core is missing.
func TestWebAppQualityHistogram(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	const n = 12
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := range n {
		fw, _ := mw.CreateFormFile("files", fmt.Sprintf("q-%02d.jpg", i))
		fw.Write(testmedia.JPEG(64, 48, i*20))
	}
	mw.Close()
	var up struct {
		Stored   []json.RawMessage `json:"stored"`
		Rejected []json.RawMessage `json:"rejected"`
	}
	s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, &up)
	if len(up.Stored) != n {
		t.Fatalf("upload stored %d files, want %d; rejected: %s", len(up.Stored), n, up.Rejected)
	}
	// The server's answer first, so a failure below is the page's.
	var h struct {
		Total int `json:"total"`
	}
	s.call(t, s.read, "GET", "/api/v1/lake/histogram?field=quality.brightness", "", nil, &h)
	if h.Total != n {
		t.Fatalf("histogram of quality.brightness counts %d files, want %d", h.Total, n)
	}
	out := s.browserCheck(t, "quality.mjs", s.read, map[string]int{"count": n}, shotsDir(t, "ui-quality"))
	if !strings.Contains(out, "quality checks passed") {
		t.Fatal("quality.mjs ended without passing")
	}
}
