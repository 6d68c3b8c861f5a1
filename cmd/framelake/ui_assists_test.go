package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
)

// TestWebAppAssists drives the workspace's assists in Chromium
// (web/ui/test/assists.mjs) on three synthetic 640x480 frames: an orange
// ellipse and a green square on a noisy blue ground, moved by (24, 12) a
// frame. The Segment tool's box gives a mask (the shipped default,
// GrabCut) which a negative click refines and Enter stores, at IoU >= 0.8
// against the ellipse; the magic wand grows the ellipse and (Shift-click)
// the square; the wand's mask becomes a polygon whose vertex count the panel
// shows and the store holds; the polygon is tracked to the next frame and
// found moved by the objects' motion, then made a mask again, which is
// tracked to the third frame and found over its objects. A second
// segmentation model registered is offered in the Segment tool's picker
// and answers when picked. Screenshots
// go to /tmp/framelake-assist-shots-*.
func TestWebAppAssists(t *testing.T) {
	needBrowser(t)
	t.Setenv("FRAMELAKE_MODELS_DIR", builtModelsDir(t))
	s := startUIServer(t)
	task := s.assistTask(t, 640, 480)
	s.boxSegmenter(t)
	s.browserCheck(t, "assists.mjs", s.admin, task, shotsDir(t, "assist"))
}

// boxSegmenter is a segmentation package of our own: the box's rectangle as
// the mask of a 640x480 frame, score 0.5.
const boxSegmenter = `
import json

def model_fn(model_dir):
    return None

def input_fn(body, content_type):
    return json.loads(body)

def predict_fn(req, model):
    x0, y0, x1, y1 = [int(round(v)) for v in req["box"]]
    H, W = 480, 640
    counts, run, cur = [], 0, 0
    for x in range(W):
        col = [(0, H)] if not x0 <= x < x1 else [(0, y0), (1, y1 - y0), (0, H - y1)]
        for v, n in col:
            if n == 0:
                continue
            if v != cur:
                counts.append(run)
                run, cur = 0, v
            run += n
    counts.append(run)
    return {"masks": [{"size": [H, W], "counts": counts}], "scores": [0.5]}

def output_fn(pred, accept):
    return pred
`

// boxSegmenter registers boxSegmenter as the segmentation model "box-seg",
// for the Segment tool's model picker.
func (s *uiServer) boxSegmenter(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "code"), 0o755)
	os.WriteFile(filepath.Join(dir, "code", "requirements.txt"), nil, 0o644)
	if err := os.WriteFile(filepath.Join(dir, "code", "inference.py"), []byte(boxSegmenter), 0o644); err != nil {
		t.Fatal(err)
	}
	admin := client.New(s.base, s.admin["key"], s.admin["secret"])
	if _, err := admin.RegisterModel(context.Background(), dir, "box-seg", "segmentation"); err != nil {
		t.Fatal(err)
	}
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
		strings.NewReader(fmt.Sprintf(`{"collectionName":"assists-%dx%d","totalFileCount":3}`, w, h)), &up)
	var names []string
	var scene []map[string]any
	for i := range 3 {
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
