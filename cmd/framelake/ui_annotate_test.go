package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/internal/testmedia"
)

// TestWebAppAnnotate drives the annotation workspace of the real binary in
// Chromium (web/ui/test/annotate.mjs): a project made on the projects page
// and a task of three lake photos made from a selection in the lake grid
// (its frames in grid order; "Select all matching" makes them a task of a
// second project too), a box drawn by mouse and found stored
// where the drag went, moved, relabelled by hotkey, the change undone, a
// frame marked empty, a suggestion of the default detector accepted and
// stored as human, the task completed (status 2 in Get Task List, the boxes
// in Download Annotations), and a stale tab's edit shown as a conflict
// instead of written. It also times opening a 1080p frame with 200 boxes.
// It fails, never skips, when Node, Chromium, the photos or the models are
// missing.
func TestWebAppAnnotate(t *testing.T) {
	needBrowser(t)
	t.Setenv("FRAMELAKE_MODELS_DIR", builtModelsDir(t))
	s := startUIServer(t)
	var names []string
	var sizes [][2]int
	for _, photo := range []string{"dog.jpg", "person.jpg", "horses.jpg"} {
		b, err := os.ReadFile(filepath.Join("/usr/share/darknet/data", photo))
		if err != nil {
			t.Fatalf("%v: install Debian's darknet package (make test does)", err)
		}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("files", photo)
		fw.Write(b)
		mw.WriteField("collectionName", "photos")
		mw.Close()
		var res struct {
			Stored []struct {
				UniqueName    string
				Width, Height int
			}
		}
		s.call(t, s.admin, "POST", "/api/v1/lake/files", mw.FormDataContentType(), &body, &res)
		names = append(names, res.Stored[0].UniqueName)
		sizes = append(sizes, [2]int{res.Stored[0].Width, res.Stored[0].Height})
	}
	bench := s.benchTask(t)
	expect := map[string]any{"names": names, "sizes": sizes, "bench": bench}
	s.browserCheck(t, "annotate.mjs", s.admin, expect, shotsDir(t, "annotate"))
}

// benchTask uploads two 1920x1080 frames with 200 boxes each through an
// annotation project and returns its task's id and the frames' names.
func (s *uiServer) benchTask(t testing.TB) map[string]any {
	return s.boxedTask(t, "bench", 2, 1920, 1080, 200, []string{"car", "person"})
}

// boxedTask makes a project named name with labels and uploads frames
// JPEGs of w x h with n boxes each (labels in turn, at random places) as its
// one task; it returns the task's and project's ids and the frames' names.
func (s *uiServer) boxedTask(t testing.TB, name string, frames, w, h, n int, labels []string) map[string]any {
	t.Helper()
	ls := make([]map[string]string, len(labels))
	for i, l := range labels {
		ls[i] = map[string]string{"labelName": l}
	}
	pj, _ := json.Marshal(map[string]any{"projectName": name, "contentType": 2, "labels": ls})
	var p struct{ ProjectID string }
	s.call(t, s.admin, "POST", "/api/v1/projects", "application/json", bytes.NewReader(pj), &p)
	var up struct{ UploadID string }
	s.call(t, s.admin, "POST", "/api/v1/projects/"+p.ProjectID+"/uploads", "application/json",
		strings.NewReader(fmt.Sprintf(`{"collectionName":"%s-%dx%d","totalFileCount":%d}`, name, w, h, frames)), &up)
	rng := rand.New(rand.NewPCG(1, 2))
	var names []string
	for i := range frames {
		boxes := make([]map[string]any, n)
		for j := range boxes {
			boxes[j] = map[string]any{"label": labels[j%len(labels)], "x": rng.IntN(w - 120), "y": rng.IntN(h - 80),
				"width": 20 + rng.IntN(100), "height": 20 + rng.IntN(80)}
		}
		js, _ := json.Marshal(boxes)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("files", fmt.Sprintf("%s-%d.jpg", name, i))
		fw.Write(testmedia.JPEG(w, h, 500+i))
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
