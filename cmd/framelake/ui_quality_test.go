package main_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"os"
	"os/exec"
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
	node, ui := needBrowser(t)
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
	shots := t.TempDir()
	if d := os.Getenv("FRAMELAKE_UI_SHOTS"); d != "" {
		shots = d
	}
	cmd := exec.Command(node, "test/quality.mjs")
	cmd.Dir = ui
	cmd.Env = append(os.Environ(), "BASE="+s.base, "KEY="+s.read["key"], "SECRET="+s.read["secret"],
		"EXPECT="+fmt.Sprintf(`{"count":%d}`, n), "OUT="+shots)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil || !strings.Contains(string(out), "quality checks passed") {
		t.Fatalf("browser checks: %v", err)
	}
}
