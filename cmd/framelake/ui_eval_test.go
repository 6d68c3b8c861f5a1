package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
)

// TestWebAppEval drives the evaluation pages and Label next of the real
// binary's web app in Chromium (web/ui/test/eval.mjs): five 300 x 300
// images, four with human boxes imported beside fixedDetector's run (a sure
// truck and a doubtful bike on every image), so the evaluation has hits, a
// miss, spurious boxes and a label mismatch. The page runs the evaluation,
// shows mAP and the confusion matrix, a false-positive cell opens the grid
// on the files that have one, a second evaluation is compared, and a
// selection opens its tagged files in the grid.
func TestWebAppEval(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	dir := t.TempDir()
	names := make([]string, 5)
	for i := range names {
		p := filepath.Join(dir, fmt.Sprintf("ev-%d.jpg", i))
		if err := os.WriteFile(p, testmedia.JPEG(300, 300, i+1), 0o644); err != nil {
			t.Fatal(err)
		}
		s.upload(t, filepath.Base(p), p)
	}
	var items struct {
		Items []struct{ UniqueName, Name string }
	}
	s.call(t, s.read, "GET", "/api/v1/lake/items?pageSize=10&sortBy=name&sortOrder=ASC", "", nil, &items)
	for _, it := range items.Items {
		var i int
		fmt.Sscanf(it.Name, "ev-%d.jpg", &i)
		names[i] = it.UniqueName
	}
	s.machineBoxes(t, "")
	var runs struct{ RunList []struct{ RunID string } }
	s.call(t, s.read, "GET", "/api/v1/runs", "", nil, &runs)
	if len(runs.RunList) != 1 {
		t.Fatalf("runs: %+v", runs)
	}
	// The detector's boxes: truck (30, 30, 120 x 90), bike (200, 150, 80 x 130).
	truck := `{"label":"truck","x":30,"y":30,"width":120,"height":90}`
	bike := `{"label":"bike","x":200,"y":150,"width":80,"height":130}`
	truth := [][]string{
		{truck, bike}, // both found
		{truck},       // the bike is spurious
		{strings.Replace(truck, "truck", "car", 1)},                // a car taken for a truck; the bike spurious
		{`{"label":"truck","x":0,"y":200,"width":50,"height":50}`}, // missed; both boxes spurious
	} // ev-4 has no human box: not judged
	var files []string
	for i, boxes := range truth {
		files = append(files, fmt.Sprintf(`{"uniqueName":%q,"annotations":[%s]}`, names[i], strings.Join(boxes, ",")))
	}
	s.call(t, s.admin, "PUT", "/api/v1/lake/annotations", "application/json",
		strings.NewReader(`{"operation":"import:truth","files":[`+strings.Join(files, ",")+`]}`), nil)

	shots := shotsDir(t, "ui-eval")
	expect := map[string]any{"run": runs.RunList[0].RunID, "images": len(names),
		// files with a spurious bike: ev-1, ev-2, ev-3.
		"bikeFP": 3}
	s.browserCheck(t, "eval.mjs", s.admin, expect, shots)
}
