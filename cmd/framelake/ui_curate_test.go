package main_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
)

// TestWebAppCurate curates in the real binary's web app in Chromium
// (web/ui/test/curate.mjs): completes a query from the keyboard, clicks label
// facets, brushes the width histogram, shift-selects three items and tags
// them, selects all matching and adds them to a collection, and starts an
// auto tagging job from the selection. Like TestWebAppInBrowser it fails,
// never skips, when Node, Chromium or playwright-core is missing.
func TestWebAppCurate(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	// car on 0, 2, 3; person on 1, 2; none on 4, 5.
	s.uploadLabelled(t, 640, 480, []string{
		`[{"label":"car","x":100,"y":60,"width":200,"height":120}]`,
		`[{"label":"person","x":400,"y":200,"width":80,"height":200}]`,
		`[{"label":"car","x":10,"y":10,"width":50,"height":50},{"label":"person","x":300,"y":100,"width":60,"height":150}]`,
		`[{"label":"car","x":200,"y":200,"width":100,"height":80}]`,
		`[]`, `[]`,
	})
	s.machineBoxes(t, `annotation.label = person`) // registers the model the page will run
	const small = 40
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := range small {
		fw, _ := mw.CreateFormFile("files", fmt.Sprintf("small-%02d.jpg", i))
		fw.Write(testmedia.JPEG(32, 24, i+100))
	}
	mw.Close()
	s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, nil)

	// The routes the page uses answer scripts too.
	var labels struct {
		Values []struct {
			Value  string
			Count  int
			Clause string
		}
		More bool
	}
	s.call(t, s.read, "GET", "/api/v1/lake/facets/annotation.label?limit=2&query="+url.QueryEscape("width > 100"), "", nil, &labels)
	if got := fmt.Sprint(labels.Values); got != "[{car 3 annotation.label = car} {bike 2 annotation.label = bike}]" || !labels.More {
		t.Errorf("label facet: %s more=%v", got, labels.More)
	}
	var done struct{ Values []string }
	s.call(t, s.read, "GET", "/api/v1/lake/complete?field=annotation.label&prefix=p", "", nil, &done)
	if fmt.Sprint(done.Values) != "[person]" {
		t.Errorf("completion of labels from p: %v", done.Values)
	}

	shots := shotsDir(t, "ui")
	key, secret := namedWriteKey(t, s.data, "curator")
	expect := map[string]any{"count": 6 + small, "small": small, "model": "fixed",
		"labels": map[string]int{"car": 3, "person": 2, "both": 1}}
	out := s.browserCheck(t, "curate.mjs", s.read, expect, shots, "WRITE_KEY="+key, "WRITE_SECRET="+secret)
	if !strings.Contains(out, "curate checks passed") {
		t.Fatal("curate.mjs ended without passing")
	}
}
