package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake/shape"
)

// TestWebAppShapes drives the workspace's shape tools in Chromium
// (web/ui/test/shapes.mjs): frame 0 holds one shape of every type, drawn in
// the workspace and the item view; on frame 1 a polygon (clicks, Enter), its
// vertex dragged, an edge's vertex inserted and Alt-deleted, a hole, undo, a
// polyline (double-click), keypoints of a declared skeleton (one not
// visible, one skipped), a class by its key and a mask painted by the brush
// and cut by the eraser are each found stored as drawn (image pixels, mask
// pixels decoded by src/rle.js); a number attribute out of its declared
// range is refused in the panel; a stale tab's shape is a conflict. Frames
// 2 and 3 time a vertex drag on a 2,000-vertex polygon of a 4000x3000 frame
// and opening a frame of 200 polygons and 20 masks.
func TestWebAppShapes(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	task := s.shapesTask(t)
	s.browserCheck(t, "shapes.mjs", s.admin, task, shotsDir(t, "shapes"))
}

// shapesTask makes a project whose labels declare a skeleton (person) and
// typed attributes (car), and a task of four frames: every shape type on
// frame 0, nothing on 1, the 2,000-vertex polygon on 2, the crowded frame 3.
func (s *uiServer) shapesTask(t testing.TB) map[string]any {
	t.Helper()
	pj := `{"projectName":"shapes","contentType":2,"labels":[
	 {"labelName":"car","attributes":[{"name":"speed","type":"number","min":0,"max":300},
	   {"name":"parked","type":"boolean"},{"name":"color","type":"select","values":["red","blue"]}]},
	 {"labelName":"person","keypoints":["head","left_hand","right_hand"],"skeleton":[["head","left_hand"],["head","right_hand"]]},
	 {"labelName":"road"},{"labelName":"night"}]}`
	var p struct{ ProjectID string }
	s.call(t, s.admin, "POST", "/api/v1/projects", "application/json", strings.NewReader(pj), &p)
	var up struct{ UploadID string }
	s.call(t, s.admin, "POST", "/api/v1/projects/"+p.ProjectID+"/uploads", "application/json",
		strings.NewReader(`{"collectionName":"shapes","totalFileCount":4}`), &up)

	every := []map[string]any{
		{"label": "car", "type": "polygon", "polygon": [][]float64{{40, 40, 280, 40, 280, 220, 40, 220}, {100, 90, 200, 90, 150, 170}}},
		{"label": "road", "type": "mask", "mask": rectMask(640, 480, 330, 260, 600, 440)},
		{"label": "person", "type": "keypoints", "keypoints": []map[string]any{
			{"name": "head", "x": 450, "y": 60, "v": 2}, {"name": "left_hand", "x": 400, "y": 150, "v": 2}, {"name": "right_hand", "x": 520, "y": 150, "v": 1}}},
		{"label": "road", "type": "polyline", "points": []float64{40, 300, 150, 420, 300, 330}},
		{"label": "night", "type": "class"},
	}
	big := make([]float64, 0, 4000)
	for i := range 2000 { // a 2,000-vertex circle of radius 1000 in the 4000x3000 frame
		a := 2 * math.Pi * float64(i) / 2000
		big = append(big, 2000+1000*math.Cos(a), 1500+1000*math.Sin(a))
	}
	var crowd []map[string]any
	for i := range 200 { // 200 polygons of 30 vertices on 1920x1080
		cx, cy := 60+float64(i%20)*90, 60+float64(i/20)*100
		ring := make([]float64, 0, 60)
		for j := range 30 {
			a := 2 * math.Pi * float64(j) / 30
			r := 30 + 10*float64(j%2)
			ring = append(ring, cx+r*math.Cos(a), cy+r*math.Sin(a))
		}
		crowd = append(crowd, map[string]any{"label": "car", "type": "polygon", "polygon": [][]float64{ring}})
	}
	for i := range 20 {
		x0 := 20 + (i%10)*190
		y0 := 20 + (i/10)*530
		crowd = append(crowd, map[string]any{"label": "road", "type": "mask", "mask": rectMask(1920, 1080, x0, y0, x0+150, y0+480)})
	}
	frames := []struct {
		w, h   int
		labels any
	}{
		{640, 480, every},
		{640, 480, []any{}},
		{4000, 3000, []map[string]any{{"label": "car", "type": "polygon", "polygon": [][]float64{big}}}},
		{1920, 1080, crowd},
	}
	var names []string
	for i, f := range frames {
		js, _ := json.Marshal(f.labels)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("files", fmt.Sprintf("shapes-%d.jpg", i))
		fw.Write(testmedia.JPEG(f.w, f.h, 700+i))
		mw.WriteField("labels", string(js))
		mw.Close()
		var r struct{ UniqueName string }
		s.call(t, s.admin, "POST", "/api/v1/uploads/"+up.UploadID+"/files", mw.FormDataContentType(), &body, &r)
		names = append(names, r.UniqueName)
	}
	var tasks struct{ TaskList []struct{ ID string } }
	s.call(t, s.admin, "GET", "/api/v1/tasks?projectId="+p.ProjectID, "", nil, &tasks)
	return map[string]any{"taskId": tasks.TaskList[0].ID, "projectId": p.ProjectID, "names": names}
}

// rectMask is COCO's RLE of a w x h frame with the pixels x0 <= x < x1,
// y0 <= y < y1 set.
func rectMask(w, h, x0, y0, x1, y1 int) map[string]any {
	bits := make([]bool, w*h)
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			bits[y*w+x] = true
		}
	}
	// Runs in column-major order, 0s first.
	var counts []uint32
	cur, run := false, uint32(0)
	for x := range w {
		for y := range h {
			if bits[y*w+x] != cur {
				counts = append(counts, run)
				cur, run = !cur, 0
			}
			run++
		}
	}
	counts = append(counts, run)
	return map[string]any{"size": []int{h, w}, "counts": shape.RLE{Height: h, Width: w, Counts: counts}.String()}
}
