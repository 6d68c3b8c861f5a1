package main_test

import (
	"bytes"
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
	s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, nil)
	out := s.browserCheck(t, "quality.mjs", s.read, map[string]int{"count": n}, shotsDir(t, "ui-quality"))
	if !strings.Contains(out, "quality checks passed") {
		t.Fatal("quality.mjs ended without passing")
	}
}
