package annotate_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake/shape"
)

func num(v float64) *float64 { return &v }

// carAttrs are typed attributes of every kind.
var carAttrs = []annotate.AttributeSpec{
	{Name: "occluded", Type: annotate.AttrBoolean, Required: true},
	{Name: "color", Type: annotate.AttrSelect, Values: []string{"red", "blue"}},
	{Name: "speed", Type: annotate.AttrNumber, Min: num(0), Max: num(200)},
	{Name: "note", Type: annotate.AttrText},
}

var face = shape.Skeleton{Names: []string{"nose", "left_eye", "right_eye"},
	Edges: [][2]string{{"nose", "left_eye"}, {"nose", "right_eye"}}, Flip: [][2]string{{"left_eye", "right_eye"}},
	Sigmas: []float64{.026, .025, .025}}

// TestLabelDeclarationsChecked: Create Project refuses a malformed
// declaration with a 400 naming labels[i] and what is wrong, and creates
// nothing; a good one comes back from Get Project and the project list.
func TestLabelDeclarationsChecked(t *testing.T) {
	f := open(t, annotate.Image)
	bad := []struct {
		name  string
		label annotate.Label
		want  string
	}{
		{"unknown type", annotate.Label{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "date"}}}, `attributes[0]: "a": type is "date"`},
		{"empty name", annotate.Label{Attributes: []annotate.AttributeSpec{{Type: "text"}}}, "attributes[0]: name is empty"},
		{"twice", annotate.Label{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "text"}, {Name: "a", Type: "boolean"}}}, `attributes[1]: "a" is declared twice`},
		{"min above max", annotate.Label{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "number", Min: num(3), Max: num(1)}}}, "min 3 is above max 1"},
		{"range on text", annotate.Label{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "text", Max: num(1)}}}, "min and max are for number attributes"},
		{"select without values", annotate.Label{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "select"}}}, "a select attribute lists 1 to 1000 values, got 0"},
		{"values on boolean", annotate.Label{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "boolean", Values: []string{"x"}}}}, "values are for select attributes"},
		{"select value twice", annotate.Label{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "select", Values: []string{"x", "x"}}}}, `values[1] "x" is empty or given twice`},
		{"no keypoint names", annotate.Label{Skeleton: &shape.Skeleton{Edges: [][2]string{{"a", "b"}}}}, "declare at least one point name"},
		{"edge to undeclared", annotate.Label{Skeleton: &shape.Skeleton{Names: []string{"a", "b"}, Edges: [][2]string{{"a", "c"}}}}, `skeleton[0]: "c" is not a declared keypoint`},
		{"sigmas count", annotate.Label{Skeleton: &shape.Skeleton{Names: []string{"a", "b"}, Sigmas: []float64{.1}}}, "sigmas: 1 values for 2 keypoints"},
		{"flip twice", annotate.Label{Skeleton: &shape.Skeleton{Names: []string{"a", "b", "c"}, Flip: [][2]string{{"a", "b"}, {"a", "c"}}}}, `flipPairs[1]: "a" is in two pairs`},
	}
	for _, c := range bad {
		c.label.Name = "thing"
		_, err := f.s.CreateProject(f.ctx, annotate.NewProject{Name: "p", ContentType: annotate.Image,
			Labels: []annotate.Label{{Name: "plain"}, c.label}})
		if errs.CodeOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), "labels[1]: ") ||
			!strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a 400 naming labels[1] and %q", c.name, err, c.want)
		}
	}
	if n := f.count(t, "project"); n != 1 {
		t.Fatalf("refused declarations left %d projects, want the fixture's 1", n)
	}
	p, err := f.s.CreateProject(f.ctx, annotate.NewProject{Name: "p", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car", Attributes: carAttrs}, {Name: "face", Skeleton: &face}, {Name: "bus"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.s.Project(f.ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(p.Labels)
	if b, _ := json.Marshal(got.Labels); string(b) != string(want) {
		t.Fatalf("Get Project labels:\n%s\nwant\n%s", b, want)
	}
	if !strings.Contains(string(want), `"labelName":"face","labelDescription":"","keypoints":["nose","left_eye","right_eye"],"skeleton":[["nose","left_eye"]`) ||
		!strings.Contains(string(want), `{"labelName":"bus","labelDescription":""}`) {
		t.Fatalf("label JSON: %s", want)
	}
	list, _, err := f.s.ListProjects(f.ctx, annotate.ProjectQuery{})
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
	if b, _ := json.Marshal(list[1].Labels); string(b) != string(want) {
		t.Fatalf("project list labels:\n%s\nwant\n%s", b, want)
	}
}

// TestDeclaredAttributesChecked: a frame's annotation whose attribute is of
// the wrong type, out of range, not in the list, not declared, or missing
// while required, or whose keypoint is not in the label's skeleton, is a
// 400 naming labels[i] and the attribute, on upload and on replace, and
// writes nothing; a label declaring no attributes takes any.
func TestDeclaredAttributesChecked(t *testing.T) {
	f := open(t, annotate.Image)
	p, err := f.s.CreateProject(f.ctx, annotate.NewProject{Name: "p", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car", Attributes: carAttrs}, {Name: "face", Skeleton: &face}, {Name: "bus"}}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := f.s.InitializeUpload(f.ctx, p.ID, "shots", 2)
	if err != nil {
		t.Fatal(err)
	}
	box := func(label, attrs string) annotate.Box {
		return annotate.Box{Label: label, X: 1, Y: 1, Width: 10, Height: 10, Attributes: json.RawMessage(attrs)}
	}
	kps := func(names ...string) annotate.Box {
		b := annotate.Box{Label: "face", Geometry: shape.Geometry{Type: shape.Keypoints}}
		for i, n := range names {
			b.Keypoints = append(b.Keypoints, shape.Keypoint{Name: n, X: float64(5 + i), Y: 5, V: 2})
		}
		return b
	}
	good := box("car", `{"occluded":false,"color":"red","speed":50,"note":"dented"}`)
	bad := []struct {
		box  annotate.Box
		want string
	}{
		{box("car", `{"occluded":"yes"}`), `labels[1]: attribute "occluded" of label "car" is boolean: give true or false, got "yes"`},
		{box("car", `{"occluded":true,"color":"green"}`), `labels[1]: attribute "color" of label "car" is one of red, blue, got "green"`},
		{box("car", `{"occluded":true,"speed":250}`), `labels[1]: attribute "speed" of label "car" is 250, above its max 200`},
		{box("car", `{"occluded":true,"speed":-1}`), `labels[1]: attribute "speed" of label "car" is -1, below its min 0`},
		{box("car", `{"occluded":true,"speed":"fast"}`), `labels[1]: attribute "speed" of label "car" is a number, got "fast"`},
		{box("car", `{"occluded":true,"note":7}`), `labels[1]: attribute "note" of label "car" is text: give a string, got 7`},
		{box("car", `{"occluded":true,"wheels":4}`), `labels[1]: attribute "wheels" is not declared on label "car" (declared: occluded, color, speed, note)`},
		{box("car", `{"color":"red"}`), `labels[1]: attribute "occluded" of label "car" is required`},
		{box("car", ``), `labels[1]: attribute "occluded" of label "car" is required`},
		{kps("nose", "chin"), `labels[1]: keypoint "chin" is not a point of label "face" (nose, left_eye, right_eye)`},
	}
	for _, c := range bad {
		_, err := f.s.UploadFrame(f.ctx, sess.ID, frame(1, nil, good, c.box))
		if errs.CodeOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Errorf("upload: got %v, want a 400 with %q", err, c.want)
		}
	}
	if n := f.count(t, "frame"); n != 0 {
		t.Fatalf("refused uploads stored %d frames", n)
	}
	free := box("bus", `{"anything":[1,2]}`)
	res, err := f.s.UploadFrame(f.ctx, sess.ID, frame(1, nil, good, free, kps("nose", "right_eye")))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range bad {
		_, err := f.s.ReplaceFrameBoxes(f.ctx, p.ID, res.UniqueName, []annotate.Box{good, c.box})
		if errs.CodeOf(err) != errs.InvalidArgument || !strings.Contains(err.Error(), c.want) {
			t.Errorf("replace: got %v, want a 400 with %q", err, c.want)
		}
	}
	st, err := f.s.FrameState(f.ctx, p.ID, res.UniqueName)
	if err != nil || st.Version != 1 {
		t.Fatalf("frame after refused replaces: version %d, %v", st.Version, err)
	}
	var stored []annotate.Annotation
	if err := json.Unmarshal(st.Annotations, &stored); err != nil || len(stored) != 3 {
		t.Fatalf("stored %s: %v", st.Annotations, err)
	}
	for _, a := range stored {
		if a.Label == "car" && string(a.Attributes) != `{"occluded":false,"color":"red","speed":50,"note":"dented"}` {
			t.Fatalf("car's attributes stored as %s", a.Attributes)
		}
	}
}

// TestSkeletonOnePerName: a label name has one skeleton in every project
// that declares one: another project declaring another is a 409 naming the
// first (by Create Project and by PutLabel), the same one is fine, and
// Skeleton finds it by name (nil for a name none declares).
func TestSkeletonOnePerName(t *testing.T) {
	f := open(t, annotate.Image)
	a, err := f.s.CreateProject(f.ctx, annotate.NewProject{Name: "a", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "face", Skeleton: &face}}})
	if err != nil {
		t.Fatal(err)
	}
	other := shape.Skeleton{Names: []string{"nose", "chin"}}
	_, err = f.s.CreateProject(f.ctx, annotate.NewProject{Name: "b", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "x"}, {Name: "face", Skeleton: &other}}})
	if errs.CodeOf(err) != errs.AlreadyExists || !strings.Contains(err.Error(), "labels[1]: label \"face\" declares another skeleton in project "+a.ID) {
		t.Fatalf("second skeleton: %v", err)
	}
	if n := f.count(t, "project"); n != 2 {
		t.Fatalf("%d projects after the 409, want 2", n)
	}
	same := face
	b, err := f.s.CreateProject(f.ctx, annotate.NewProject{Name: "b", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "face", Skeleton: &same}, {Name: "car"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PutLabel(f.ctx, b.ID, "face", annotate.LabelChange{Skeleton: &other}); errs.CodeOf(err) != errs.AlreadyExists ||
		!strings.Contains(err.Error(), a.ID) {
		t.Fatalf("PutLabel with another skeleton: %v", err)
	}
	sk, err := f.s.Skeleton(f.ctx, "face")
	if err != nil || sk == nil || strings.Join(sk.Names, ",") != "nose,left_eye,right_eye" || len(sk.Sigmas) != 3 {
		t.Fatalf("Skeleton(face) = %+v, %v", sk, err)
	}
	if sk, err := f.s.Skeleton(f.ctx, "car"); sk != nil || err != nil {
		t.Fatalf("Skeleton(car) = %+v, %v; want nil", sk, err)
	}
	// PutLabel declares on an existing label, keeping its description, and
	// adds a label the project lacks; a bad declaration changes nothing.
	desc := "any car"
	if _, err := f.s.PutLabel(f.ctx, b.ID, "car", annotate.LabelChange{Description: &desc, Attributes: carAttrs}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PutLabel(f.ctx, b.ID, "car", annotate.LabelChange{Attributes: []annotate.AttributeSpec{{Name: "a", Type: "colour"}}}); errs.CodeOf(err) != errs.InvalidArgument ||
		!strings.Contains(err.Error(), `label "car": attributes[0]: "a": type is "colour"`) {
		t.Fatalf("bad PutLabel: %v", err)
	}
	if _, err := f.s.PutLabel(f.ctx, b.ID, "truck", annotate.LabelChange{}); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.Project(f.ctx, b.ID)
	if err != nil || len(got.Labels) != 3 || got.Labels[1].Description != "any car" || len(got.Labels[1].Attributes) != 4 ||
		got.Labels[2].Name != "truck" || got.Labels[2].Skeleton != nil {
		t.Fatalf("labels after PutLabel: %+v %v", got.Labels, err)
	}
	// The only project declaring a name may change its skeleton.
	if _, err := f.s.PutLabel(f.ctx, b.ID, "face", annotate.LabelChange{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PutLabel(f.ctx, a.ID, "face", annotate.LabelChange{Skeleton: &other}); err != nil {
		t.Fatal(err)
	}
}
