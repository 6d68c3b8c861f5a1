package client_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/internal/testmedia"
	"github.com/framelake/framelake/lake/shape"
)

func jpegFile(seed int) client.UploadFile {
	b := testmedia.JPEG(64, 48, seed)
	return client.UploadFile{Name: "f.jpg", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

// TestDeclaredLabelsOverHTTP: through the real server, a project whose
// labels declare typed attributes and keypoints refuses a frame with a
// wrong attribute (400 naming labels[i] and the attribute, nothing stored)
// and stores a right one; Get Project and the project list return the
// declarations; PUT .../labels/{name} changes them (a name with a space
// too); another project's other skeleton for the name is a 409.
func TestDeclaredLabelsOverHTTP(t *testing.T) {
	c := serve(t)
	ctx := context.Background()
	max := 200.0
	car := client.Label{Name: "car", Attributes: []client.AttributeSpec{
		{Name: "occluded", Type: "boolean", Required: true},
		{Name: "color", Type: "select", Values: []string{"red", "blue"}},
		{Name: "speed", Type: "number", Max: &max}}}
	person := client.Label{Name: "person", Skeleton: &shape.Skeleton{Names: []string{"nose", "left_eye", "right_eye"},
		Edges: [][2]string{{"nose", "left_eye"}}}}
	id, err := c.CreateProject(ctx, client.Project{Name: "streets", ContentType: client.ContentImage,
		Labels: []client.Label{car, person}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := c.InitializeUpload(ctx, id, "streets-1", 1)
	if err != nil {
		t.Fatal(err)
	}
	box := func(attrs string) client.Box {
		return client.Box{Label: "car", X: 1, Y: 1, Width: 10, Height: 10, Attributes: json.RawMessage(attrs)}
	}
	_, err = c.UploadFrame(ctx, sess.UploadID, client.Frame{File: jpegFile(1), Boxes: []client.Box{box(`{"occluded":true}`),
		box(`{"occluded":true,"color":"green"}`)}})
	var e *client.Error
	if !asError(err, &e) || e.Status != 400 || !strings.Contains(e.Message, `labels[1]: attribute "color" of label "car" is one of red, blue, got "green"`) {
		t.Fatalf("wrong attribute: %v", err)
	}
	kp := client.Box{Label: "person", Geometry: shape.Geometry{Type: shape.Keypoints,
		Keypoints: []shape.Keypoint{{Name: "nose", X: 5, Y: 5, V: 2}, {Name: "chin", X: 6, Y: 9, V: 2}}}}
	_, err = c.UploadFrame(ctx, sess.UploadID, client.Frame{File: jpegFile(1), Boxes: []client.Box{kp}})
	if !asError(err, &e) || e.Status != 400 || !strings.Contains(e.Message, `labels[0]: keypoint "chin" is not a point of label "person"`) {
		t.Fatalf("undeclared keypoint: %v", err)
	}
	list, err := c.ListProjects(ctx, client.ProjectListOptions{})
	if err != nil || len(list.ProjectList) != 1 || list.ProjectList[0].UploadedFrames != 0 {
		t.Fatalf("after refused uploads: %+v %v", list, err)
	}
	up, err := c.UploadFrame(ctx, sess.UploadID, client.Frame{File: jpegFile(1),
		Boxes: []client.Box{box(`{"occluded":false,"color":"blue","speed":120}`)}})
	if err != nil {
		t.Fatal(err)
	}
	// The workspace's versioned edit checks the same, and changes nothing on a 400.
	_, err = c.ReplaceFrameAnnotationsAt(ctx, id, up.UniqueName, 1, []client.Box{box(`{"occluded":false,"speed":201}`)})
	if !asError(err, &e) || e.Status != 400 || !strings.Contains(e.Message, `labels[0]: attribute "speed" of label "car" is 201, above its max 200`) {
		t.Fatalf("versioned edit with a wrong attribute: %v", err)
	}
	if st, err := c.FrameAnnotations(ctx, id, up.UniqueName); err != nil || st.Version != 1 {
		t.Fatalf("frame after the refused edit: %+v %v", st, err)
	}
	d, err := c.DownloadAnnotations(ctx, client.DownloadOptions{ProjectID: id})
	if err != nil || len(d.Data) != 1 || len(d.Data[0].Frames) != 1 {
		t.Fatalf("download: %+v %v", d, err)
	}
	if a := d.Data[0].Frames[0].Annotations; len(a) != 1 || string(a[0].Attributes) != `{"occluded":false,"color":"blue","speed":120}` {
		t.Fatalf("stored: %+v", a)
	}
	got, err := c.GetProject(ctx, id)
	if err != nil || !reflect.DeepEqual(got.Labels, []client.Label{car, person}) {
		t.Fatalf("Get Project labels %+v, %v", got, err)
	}
	if !reflect.DeepEqual(list.ProjectList[0].Labels, []client.Label{car, person}) {
		t.Fatalf("project list labels %+v", list.ProjectList[0].Labels)
	}
	light := client.Label{Name: "traffic light", Attributes: []client.AttributeSpec{{Name: "state", Type: "select",
		Values: []string{"red", "amber", "green"}}}}
	if l, err := c.PutLabel(ctx, id, light); err != nil || !reflect.DeepEqual(*l, light) {
		t.Fatalf("PutLabel: %+v %v", l, err)
	}
	_, err = c.PutLabel(ctx, id, client.Label{Name: "car", Attributes: []client.AttributeSpec{{Name: "speed", Type: "number", Values: []string{"x"}}}})
	if !asError(err, &e) || e.Status != 400 || !strings.Contains(e.Message, `label "car": attributes[0]: "speed": values are for select attributes`) {
		t.Fatalf("bad PutLabel: %v", err)
	}
	got, err = c.GetProject(ctx, id)
	if err != nil || !reflect.DeepEqual(got.Labels, []client.Label{car, person, light}) {
		t.Fatalf("labels after PutLabel %+v, %v", got, err)
	}
	_, err = c.CreateProject(ctx, client.Project{Name: "other", ContentType: client.ContentImage,
		Labels: []client.Label{{Name: "person", Skeleton: &shape.Skeleton{Names: []string{"head"}}}}})
	if !asError(err, &e) || e.Status != 409 || !strings.Contains(e.Message, "declares another skeleton in project "+id) {
		t.Fatalf("another skeleton for person: %v", err)
	}
}

// TestCOCOKeypointsImportDeclares: a COCO person-keypoints import into a
// project declares on its person label the category's 17 point names and
// skeleton, with COCO's left/right flip pairs and sigmas: shape.COCOPerson.
func TestCOCOKeypointsImportDeclares(t *testing.T) {
	c := serve(t)
	ctx := context.Background()
	sk := make([][2]int, len(shape.COCOPerson.Edges))
	for i, e := range shape.COCOPerson.Edges {
		sk[i] = [2]int{slices.Index(shape.COCOPerson.Names, e[0]) + 1, slices.Index(shape.COCOPerson.Names, e[1]) + 1}
	}
	kps := make([]float64, 0, 51)
	for i := range shape.COCOPerson.Names {
		kps = append(kps, float64(10+i), float64(5+i), 2)
	}
	doc, _ := json.Marshal(map[string]any{
		"images":     []any{map[string]any{"id": 1, "file_name": "a.jpg", "width": 64, "height": 48}},
		"categories": []any{map[string]any{"id": 1, "name": "person", "keypoints": shape.COCOPerson.Names, "skeleton": sk}},
		"annotations": []any{map[string]any{"id": 1, "image_id": 1, "category_id": 1, "bbox": []float64{5, 5, 40, 30},
			"area": 1200, "iscrowd": 0, "num_keypoints": 17, "keypoints": kps}},
	})
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, b := range map[string][]byte{"a.jpg": testmedia.JPEG(64, 48, 3), "person_keypoints.json": doc} {
		w, _ := zw.Create(name)
		w.Write(b)
	}
	zw.Close()
	jobID, err := c.ImportArchive(ctx, &zb, client.ImportArchiveOptions{Name: "poses.zip", Format: "coco",
		Collection: "poses", Project: "poses"})
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.WaitJob(ctx, jobID)
	if err != nil || job.Status != "completed" {
		t.Fatalf("import job %+v %v", job, err)
	}
	var res struct {
		Project struct {
			ProjectID string `json:"projectId"`
		} `json:"project"`
	}
	if err := json.Unmarshal(job.Result, &res); err != nil || res.Project.ProjectID == "" {
		t.Fatalf("job result %s: %v", job.Result, err)
	}
	p, err := c.GetProject(ctx, res.Project.ProjectID)
	if err != nil || len(p.Labels) != 1 || p.Labels[0].Skeleton == nil {
		t.Fatalf("project %+v %v", p, err)
	}
	if got := *p.Labels[0].Skeleton; !reflect.DeepEqual(got, shape.COCOPerson) {
		t.Fatalf("person declares %+v\nwant %+v", got, shape.COCOPerson)
	}
}

func asError(err error, e **client.Error) bool {
	if err == nil {
		return false
	}
	ce, ok := err.(*client.Error)
	*e = ce
	return ok
}
