package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"mime/multipart"
	"strings"
	"testing"
)

// TestWebAppAssists drives the workspace's assists in Chromium
// (web/ui/test/assists.mjs) on two synthetic 640x480 frames: an orange
// ellipse and a green square on a noisy blue ground, moved by (24, 12) on
// the second. The Segment tool's box gives a mask (the shipped default,
// GrabCut) which a negative click refines and Enter stores, at IoU >= 0.8
// against the ellipse; the magic wand grows the ellipse and (Shift-click)
// the square; the wand's mask becomes a polygon whose vertex count the panel
// shows and the store holds; the polygon is tracked to the next frame and
// found moved by the objects' motion, then made a mask again. Screenshots
// go to /tmp/framelake-assist-shots-*.
func TestWebAppAssists(t *testing.T) {
	needBrowser(t)
	t.Setenv("FRAMELAKE_MODELS_DIR", builtModelsDir(t))
	s := startUIServer(t)
	task := s.assistTask(t, 640, 480)
	s.browserCheck(t, "assists.mjs", s.admin, task, shotsDir(t, "assist"))
}

// assistScene is where assistFrame draws its objects on frame i.
func assistScene(w, h, i int) (cx, cy, rx, ry float64, sq image.Rectangle) {
	k := float64(w) / 640
	dx, dy := int(24*k)*i, int(12*k)*i
	cx, cy = 300*k+float64(dx), 220*k+float64(dy)
	rx, ry = 110*k, 80*k
	sq = image.Rect(int(500*k)+dx, int(360*k)+dy, int(580*k)+dx, int(430*k)+dy)
	return
}

// assistFrame is frame i of the scene as a JPEG (quality 95).
func assistFrame(w, h, i int) []byte {
	cx, cy, rx, ry, sq := assistScene(w, h, i)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(7, 9)) // the same ground on every frame
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(40))
			c := color.RGBA{30 + n, 50 + n, 120 + uint8((x+y)%40), 255}
			u, v := (float64(x)+0.5-cx)/rx, (float64(y)+0.5-cy)/ry
			if u*u+v*v <= 1 {
				c = color.RGBA{235, 130, 30, 255}
			} else if image.Pt(x, y).In(sq) {
				c = color.RGBA{40, 200, 70, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	return b.Bytes()
}

// assistTask uploads the scene's two frames (w x h) as a project's task and
// returns what assists.mjs expects: the task, project, frames and scene.
func (s *uiServer) assistTask(t testing.TB, w, h int) map[string]any {
	t.Helper()
	var p struct{ ProjectID string }
	s.call(t, s.admin, "POST", "/api/v1/projects", "application/json", strings.NewReader(fmt.Sprintf(
		`{"projectName":"assists %dx%d","contentType":2,"labels":[{"labelName":"ball"},{"labelName":"tile"}]}`, w, h)), &p)
	var up struct{ UploadID string }
	s.call(t, s.admin, "POST", "/api/v1/projects/"+p.ProjectID+"/uploads", "application/json",
		strings.NewReader(fmt.Sprintf(`{"collectionName":"assists-%dx%d","totalFileCount":2}`, w, h)), &up)
	var names []string
	var scene []map[string]any
	for i := range 2 {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("files", fmt.Sprintf("assist-%dx%d-%d.jpg", w, h, i))
		fw.Write(assistFrame(w, h, i))
		mw.WriteField("labels", "[]")
		mw.Close()
		var r struct{ UniqueName string }
		s.call(t, s.admin, "POST", "/api/v1/uploads/"+up.UploadID+"/files", mw.FormDataContentType(), &body, &r)
		names = append(names, r.UniqueName)
		cx, cy, rx, ry, sq := assistScene(w, h, i)
		scene = append(scene, map[string]any{"cx": cx, "cy": cy, "rx": rx, "ry": ry,
			"square": []int{sq.Min.X, sq.Min.Y, sq.Max.X, sq.Max.Y}})
	}
	var tasks struct{ TaskList []struct{ ID string } }
	s.call(t, s.admin, "GET", "/api/v1/tasks?projectId="+p.ProjectID, "", nil, &tasks)
	out := map[string]any{"taskId": tasks.TaskList[0].ID, "projectId": p.ProjectID, "names": names, "scene": scene,
		"width": w, "height": h}
	if _, err := json.Marshal(out); err != nil {
		t.Fatal(err)
	}
	return out
}
