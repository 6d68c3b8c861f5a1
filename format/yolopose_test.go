package format

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// TestYAMLKptNames reads kpt_names as data.yaml files write it: one list
// for every class, per class as flow or block lists, or a flow list of lists.
func TestYAMLKptNames(t *testing.T) {
	fish := []string{"head", "tail", "fin"}
	for doc, want := range map[string]map[int][]string{
		"kpt_names: [head, 'tail', \"fin\"]\nnames: [fish]\n":                 {-1: fish},
		"kpt_names:\n  - head\n  - tail # end\n  - fin\nnc: 1\n":              {-1: fish},
		"kpt_names:\n  0: [head, tail,\n    fin]\n  1: [a, b, c]\n":           {0: fish, 1: {"a", "b", "c"}},
		"kpt_names:\n  0:\n    - head\n    - tail\n    - fin\nflip_idx: []\n": {0: fish},
		"kpt_names: [['head', 'tail', 'fin'], [a, b, c]]\n":                   {0: fish, 1: {"a", "b", "c"}},
	} {
		per, all := yamlKptNames(doc)
		if all != nil {
			per[-1] = all
		}
		if !reflect.DeepEqual(per, want) {
			t.Errorf("yamlKptNames(%q) = %v, want %v", doc, per, want)
		}
	}
	if got, ok := yamlKeyList("a: 1\nkpt_shape: [17, 3] # pose\n", "kpt_shape"); !ok || !reflect.DeepEqual(atois(got), []int{17, 3}) {
		t.Errorf("kpt_shape %q %v", got, ok)
	}
}

// poseTree writes an Ultralytics tree: data.yaml, images/train/a.jpg and
// its label file.
func poseTree(t *testing.T, yaml, labels string) string {
	dir := t.TempDir()
	for name, body := range map[string]string{"data.yaml": yaml, "images/train/a.jpg": "x", "labels/train/a.txt": labels} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	return dir
}

func readAll(t *testing.T, dir string) ([]Box, *Report) {
	t.Helper()
	var items []Item
	rep, err := Read(context.Background(), dir, Auto, func(it Item) error { items = append(items, it); return nil })
	if err != nil || len(items) != 1 {
		t.Fatalf("read: %v, %d items", err, len(items))
	}
	return rep.Fit(items[0], 200, 100), rep
}

// TestYOLOPoseCOCO: kpt_shape [17, 3] with COCO's flip_idx and no
// kpt_names names the points as COCO's person; visibilities kept; a pose
// with no labelled point is its box; a visibility of 3 and a line of
// another length are problems at their line.
func TestYOLOPoseCOCO(t *testing.T) {
	pts := func(v func(i int) int) string {
		var b strings.Builder
		for i := range 17 {
			fmt.Fprintf(&b, " %g %g %d", 0.25+float64(i)/100, 0.5, v(i))
		}
		return b.String()
	}
	labels := "0 0.5 0.5 0.5 0.8" + pts(func(i int) int { return []int{2, 1, 0}[i%3] }) + "\n" +
		"0 0.5 0.5 0.2 0.2" + pts(func(int) int { return 0 }) + "\n" +
		"0 0.5 0.5 0.2 0.2" + pts(func(i int) int { return 3 * (i / 16) }) + "\n" +
		"0 0.5 0.5 0.2 0.2" + strings.TrimSuffix(pts(func(int) int { return 2 }), " 2") + "\n"
	yaml := "path: .\ntrain: images/train\nkpt_shape: [17, 3]\nflip_idx: [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15]\nnames:\n  0: person\n"
	bs, rep := readAll(t, poseTree(t, yaml, labels))
	if len(bs) != 2 || bs[0].Type != shape.Keypoints || bs[1].Type != "" || bs[0].Label != "person" {
		t.Fatalf("boxes %+v, problems %v", bs, rep.Problems)
	}
	kp := bs[0].Keypoints
	if len(kp) != 17 || kp[0] != (shape.Keypoint{Name: "nose", X: 50, Y: 50, V: 2}) || kp[16].Name != "right_ankle" ||
		kp[1].V != 1 || kp[2].V != 0 || bs[0].X != 50 || bs[0].W != 100 {
		t.Errorf("pose %+v", bs[0])
	}
	p := fmt.Sprint(rep.Problems)
	if rep.Counts[Malformed] != 2 || !strings.Contains(p, "labels/train/a.txt:3: malformed: keypoint 16 (right_ankle) has visibility 3") ||
		!strings.Contains(p, "labels/train/a.txt:4") || !strings.Contains(p, "17 points of 3 numbers") {
		t.Errorf("problems %v", rep.Problems)
	}
	if n := fmt.Sprint(rep.Notes); !strings.Contains(n, "left_eye↔right_eye") || !strings.Contains(n, "lines of 56 numbers are poses") {
		t.Errorf("notes %v", rep.Notes)
	}
}

// TestYOLOPoseNamed: kpt_shape [3, 2] names points by kpt_names; a line of
// 4 + 6 numbers is a pose although it could be a segment, a point at (0, 0)
// is not labelled; a box still reads as a box, and an 8-number line is no
// segment in a pose data set but a problem.
func TestYOLOPoseNamed(t *testing.T) {
	yaml := "names: [fish, cat]\nkpt_shape: [3, 2]\nkpt_names:\n  0: [head, tail, fin]\n"
	labels := "0 0.5 0.5 0.5 0.5 0.3 0.4 0 0 0.6 0.6\n1 0.5 0.5 0.5 0.5 0.3 0.4 0 0 0.6 0.6\n" +
		"1 0.1 0.1 0.2 0.1 0.2 0.3 0.1 0.3\n0 0.5 0.5 0.1 0.1\n"
	bs, rep := readAll(t, poseTree(t, yaml, labels))
	if len(bs) != 3 || rep.Counts[Malformed] != 1 || !strings.Contains(fmt.Sprint(rep.Problems), "a.txt:3: malformed") {
		t.Fatalf("boxes %+v, problems %v", bs, rep.Problems)
	}
	want := []shape.Keypoint{{Name: "head", X: 60, Y: 40, V: 2}, {Name: "tail", V: 0}, {Name: "fin", X: 120, Y: 60, V: 2}}
	if bs[0].Type != shape.Keypoints || !reflect.DeepEqual(bs[0].Keypoints, want) {
		t.Errorf("fish pose %+v", bs[0].Keypoints)
	}
	if bs[1].Type != shape.Keypoints || bs[1].Keypoints[0].Name != "0" || bs[1].Keypoints[2].Name != "2" {
		t.Errorf("cat pose (no kpt_names for class 1: points by number) %+v", bs[1].Keypoints)
	}
	if bs[2].Type != "" || bs[2].W != 20 {
		t.Errorf("box %+v", bs[2])
	}
}

// TestYOLOPoseBadShape: a kpt_shape that is no [K, 2|3] is a problem of
// data.yaml and lines read as boxes and segments.
func TestYOLOPoseBadShape(t *testing.T) {
	bs, rep := readAll(t, poseTree(t, "names: [a]\nkpt_shape: [3, 4]\n", "0 0.5 0.5 0.5 0.5 0.3 0.4 0.2 0.2 0.6 0.6\n"))
	if len(bs) != 1 || bs[0].Type != shape.Polygon || rep.Counts[Malformed] != 1 ||
		!strings.Contains(fmt.Sprint(rep.Problems), "data.yaml: malformed: kpt_shape [3 4]") {
		t.Errorf("boxes %+v, problems %v", bs, rep.Problems)
	}
}
