package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
)

// getJSON GETs path of the server with a key and decodes the answer,
// returning its size.
func getJSON(t *testing.T, base, key, secret, path string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("key", key)
	req.Header.Set("secret", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return len(b)
}

// TestImportForcedWrongFormat: a VOC tree imported with --format yolo is
// refused, locally and as a server's job, with the reason (what YOLO looks
// for, that the folder holds VOC labels) and no server path; nothing is
// stored.
func TestImportForcedWrongFormat(t *testing.T) {
	data := t.TempDir()
	out, err := run(t, "import", labelmeVOC, "--format", "yolo", "--data", data, "--collection", "v")
	if err == nil || !strings.Contains(out, "format yolo found no labels") || !strings.Contains(out, "holds voc labels") {
		t.Fatalf("import --format yolo --data: %v\n%s", err, out)
	}
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	out, err = run(t, "import", labelmeVOC, "--format", "yolo", "--url", srv.base, "--key", key, "--secret", secret, "--collection", "v")
	if err == nil || !strings.Contains(out, "format yolo found no labels") {
		t.Fatalf("import --format yolo --url: %v\n%s", err, out)
	}
	c := client.New(srv.base, key, secret)
	files := map[string][]byte{}
	for _, name := range []string{"JPEGImages/2011_000003.jpg", "AnnotationsVisualization/2011_000003.jpg", "Annotations/2011_000003.xml"} {
		b, err := os.ReadFile(filepath.Join(labelmeVOC, name))
		if err != nil {
			t.Fatal(err)
		}
		files["voc/"+name] = b
	}
	jobID, err := c.ImportArchive(context.Background(), bytes.NewReader(zipOf(t, files)), client.ImportArchiveOptions{Name: "voc.zip", Format: "yolo"})
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.WaitJob(context.Background(), jobID)
	if err != nil || j.Status != "failed" || !strings.Contains(j.Error, "format yolo found no labels") ||
		!strings.Contains(j.Error, "voc/Annotations/2011_000003.xml") || strings.Contains(j.Error, data) || strings.Contains(j.Error, "imports/") {
		t.Fatalf("job %+v %v", j, err)
	}
	if cols, err := c.GetItemListFromDatalake(context.Background(), client.ItemQuery{ItemType: "image_collection"}); err != nil || len(cols) != 0 {
		t.Errorf("collections after the refused imports: %+v %v", cols, err)
	}
}

// hostileCOCO is a COCO file of 25,000 categories and 10,050 boxes on
// a.jpg, with a NaN, an out-of-range number and over-deep attributes each
// in an annotation of b.jpg, beside one good box there.
func hostileCOCO() []byte {
	var b bytes.Buffer
	b.WriteString(`{"images": [{"id": 1, "file_name": "a.jpg"}, {"id": 2, "file_name": "b.jpg"}], "categories": [`)
	for i := range 25000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "category-%05d"}`, i+1, i+1)
	}
	b.WriteString("],\n\"annotations\": [\n")
	for i := range 10050 {
		fmt.Fprintf(&b, `{"id": %d, "image_id": 1, "category_id": %d, "bbox": [%d, %d, 4, 4]},`+"\n", i+1, 1+i%3, i%50, i%40)
	}
	deep := strings.Repeat(`{"a":`, 3000) + "1" + strings.Repeat("}", 3000)
	b.WriteString(`{"id": 20001, "image_id": 2, "category_id": 1, "bbox": [NaN, 1, 4, 4]},
{"id": 20002, "image_id": 2, "category_id": 1, "bbox": [1, 1, 1e400, 4]},
{"id": 20003, "image_id": 2, "category_id": 1, "bbox": [1, 1, 4, 4], "attributes": ` + deep + `},
{"id": 20004, "image_id": 2, "category_id": 2, "bbox": [2, 2, 8, 8]}]}`)
	return b.Bytes()
}

// TestImportHostileCOCOJob sends the hostile COCO file as an archive job:
// the job completes; the bad records are malformed, named by id and line;
// a.jpg keeps 10,000 boxes and the rest are over_limit, as are the
// categories past 20,000; the job list carries a summary of bounded size
// where the job's route has the whole result; the grid's list inlines 100
// of a.jpg's boxes with the count and the route that pages them.
func TestImportHostileCOCOJob(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	c := client.New(srv.base, key, secret)
	ctx := context.Background()
	arc := zipOf(t, map[string][]byte{"set/annotations.json": hostileCOCO(),
		"set/a.jpg": testmedia.JPEG(64, 48, 1), "set/b.jpg": testmedia.JPEG(64, 48, 2)})
	jobID, err := c.ImportArchive(ctx, bytes.NewReader(arc), client.ImportArchiveOptions{Name: "hostile.zip", Format: "coco"})
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.WaitJob(ctx, jobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("job %+v %v", j, err)
	}
	if strings.Contains(string(j.Result), data) || strings.Contains(string(j.Result), "imports/") {
		t.Errorf("the result names a server path: %.2000s", j.Result)
	}
	var sum labelledSummary
	json.Unmarshal(j.Result, &sum)
	l := sum.Labels
	if sum.Stored != 2 || l.Boxes != 10001 || l.Counts["malformed"] != 3 || l.Counts["over_limit"] != 50+5000 ||
		len(l.Categories) != 20000 {
		t.Fatalf("stored %d, boxes %d, counts %v, %d categories", sum.Stored, l.Boxes, l.Counts, len(l.Categories))
	}
	var malformed []string
	for _, p := range l.Problems {
		if p.Kind == "malformed" {
			malformed = append(malformed, fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message))
		}
	}
	for i, id := range []int{20001, 20002, 20003} {
		if want := fmt.Sprintf("set/annotations.json:%d: annotation %d", 10053+i, id); i >= len(malformed) || !strings.HasPrefix(malformed[i], want) {
			t.Errorf("malformed %q, want %q", malformed, want)
		}
	}
	var list struct {
		JobList []client.Job `json:"jobList"`
	}
	size := getJSON(t, srv.base, key, secret, "/api/v1/jobs", &list)
	if len(list.JobList) != 1 || !list.JobList[0].ResultSummarized || size > 8<<10 {
		t.Errorf("job list of %d bytes: %+v", size, list.JobList)
	}
	var brief struct {
		Stored int
		Labels struct {
			CategoriesCount int
			Counts          map[string]int
		}
	}
	json.Unmarshal(list.JobList[0].Result, &brief)
	if brief.Stored != 2 || brief.Labels.CategoriesCount != 20000 || brief.Labels.Counts["over_limit"] != 5050 {
		t.Errorf("summary %s", list.JobList[0].Result)
	}
	var page struct {
		Items []struct {
			Name, UniqueName string
			Boxes            []json.RawMessage
			BoxCount         int
			BoxesURL         string
		}
	}
	size = getJSON(t, srv.base, key, secret, "/api/v1/lake/items?pageSize=100", &page)
	byName := map[string]int{}
	for i, it := range page.Items {
		byName[it.Name] = i
	}
	a, b := page.Items[byName["a.jpg"]], page.Items[byName["b.jpg"]]
	if len(page.Items) != 2 || len(a.Boxes) != 100 || a.BoxCount != 10000 || a.BoxesURL != "/api/v1/lake/files/"+a.UniqueName+"/annotations" ||
		len(b.Boxes) != 1 || b.BoxCount != 1 || b.BoxesURL != "" || size > 64<<10 {
		t.Fatalf("list of %d bytes: a %d boxes of %d (%s), b %d of %d (%q)", size, len(a.Boxes), a.BoxCount, a.BoxesURL,
			len(b.Boxes), b.BoxCount, b.BoxesURL)
	}
	var anns struct {
		Annotations     []json.RawMessage
		AnnotationCount int
	}
	getJSON(t, srv.base, key, secret, a.BoxesURL+"?pageIndex=1&pageSize=4000", &anns)
	if len(anns.Annotations) != 4000 || anns.AnnotationCount != 10000 {
		t.Errorf("page 1 of a.jpg's boxes: %d of %d", len(anns.Annotations), anns.AnnotationCount)
	}
}

// TestImportCVATOutOfRangeJob: xbr="1e400" spoils one box of a CVAT file
// imported as a job, not the job.
func TestImportCVATOutOfRangeJob(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	c := client.New(srv.base, key, secret)
	xml := `<?xml version="1.0" encoding="utf-8"?>
<annotations><version>1.1</version>
<image id="0" name="a.jpg" width="64" height="48">
<box label="car" xtl="1" ytl="2" xbr="1e400" ybr="20"></box>
<box label="car" xtl="1" ytl="2" xbr="30" ybr="20"></box>
</image></annotations>`
	arc := zipOf(t, map[string][]byte{"annotations.xml": []byte(xml), "images/a.jpg": testmedia.JPEG(64, 48, 1)})
	jobID, err := c.ImportArchive(context.Background(), bytes.NewReader(arc), client.ImportArchiveOptions{Name: "cvat.zip"})
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.WaitJob(context.Background(), jobID)
	if err != nil || j.Status != "completed" {
		t.Fatalf("job %+v %v", j, err)
	}
	var sum labelledSummary
	json.Unmarshal(j.Result, &sum)
	if sum.Labels.Boxes != 1 || sum.Labels.Counts["malformed"] != 1 || len(sum.Labels.Problems) != 1 ||
		!strings.Contains(sum.Labels.Problems[0].Message, `xbr "1e400" is not a finite number`) || sum.Labels.Problems[0].Line != 4 {
		t.Errorf("result %s", j.Result)
	}
}

// TestImportJobListAndGridBounded: a well-formed COCO import of 30,000
// categories and 150 boxes on one image, under the caps but for the
// categories: the job list carries its result as a summary of a few KB (it
// named every category, 9.9 MB at a million), and the grid's list inlines
// 100 boxes with the count and where the rest page.
func TestImportJobListAndGridBounded(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data)
	key, secret := writeKey(t, data)
	c := client.New(srv.base, key, secret)
	var b bytes.Buffer
	b.WriteString(`{"images": [{"id": 1, "file_name": "a.jpg"}], "categories": [`)
	for i := range 30000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %d, "name": "category-%05d"}`, i+1, i+1)
	}
	b.WriteString(`], "annotations": [`)
	for i := range 150 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %d, "image_id": 1, "category_id": 1, "bbox": [%d, 1, 4, 4]}`, i+1, i%60)
	}
	b.WriteString("]}")
	arc := zipOf(t, map[string][]byte{"annotations.json": b.Bytes(), "a.jpg": testmedia.JPEG(64, 48, 1)})
	jobID, err := c.ImportArchive(context.Background(), bytes.NewReader(arc), client.ImportArchiveOptions{Name: "many.zip"})
	if err != nil {
		t.Fatal(err)
	}
	if j, err := c.WaitJob(context.Background(), jobID); err != nil || j.Status != "completed" {
		t.Fatalf("job %+v %v", j, err)
	}
	var list struct {
		JobList []client.Job `json:"jobList"`
	}
	if size := getJSON(t, srv.base, key, secret, "/api/v1/jobs", &list); size > 8<<10 || len(list.JobList) != 1 {
		t.Errorf("job list of %d bytes", size)
	}
	var one struct {
		Result struct{ Labels struct{ Categories []string } }
	}
	getJSON(t, srv.base, key, secret, "/api/v1/jobs/"+jobID, &one)
	if n := len(one.Result.Labels.Categories); n == 0 || n > 20000 {
		t.Errorf("the job's own route lists %d categories, want the 20,000 kept", n)
	}
	var page struct {
		Items []struct {
			Boxes    []json.RawMessage
			BoxCount int
			BoxesURL string
		}
	}
	getJSON(t, srv.base, key, secret, "/api/v1/lake/items?pageSize=100", &page)
	if len(page.Items) != 1 || len(page.Items[0].Boxes) != 100 || page.Items[0].BoxCount != 150 || page.Items[0].BoxesURL == "" {
		t.Errorf("grid item: %d boxes inlined, count %d, url %q", len(page.Items[0].Boxes), page.Items[0].BoxCount, page.Items[0].BoxesURL)
	}
}

// TestImportCapsFromEnvironment: FRAMELAKE_IMPORT_MAX_SHAPES_PER_FILE sets
// import's per-file cap: labelme's VOC image with 4 people keeps 2, and the
// rest are over_limit (refused: exit status 1).
func TestImportCapsFromEnvironment(t *testing.T) {
	cmd := exec.Command(bin, "import", "--json", labelmeVOC, "--data", t.TempDir(), "--collection", "voc")
	cmd.Env = append(os.Environ(), "FRAMELAKE_IMPORT_MAX_SHAPES_PER_FILE=2")
	out, err := cmd.Output()
	var sum labelledSummary
	if json.Unmarshal(out, &sum) != nil || err == nil {
		t.Fatalf("import: %v %s", err, out)
	}
	// labelme's VOC tree: 2011_000003 has 3 boxes, 2011_000006 has 4, 2011_000025 has 2; 9 in all.
	if sum.Labels.Boxes != 6 || sum.Labels.Counts["over_limit"] != 3 {
		t.Errorf("boxes %d, counts %v", sum.Labels.Boxes, sum.Labels.Counts)
	}
}
