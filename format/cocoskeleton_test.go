package format_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/framelake/framelake/format"
	"github.com/framelake/framelake/lake/shape"
)

// TestCOCOSkeletons: a COCO keypoints category declares its point names and
// skeleton (COCO numbers points from 1) in the report, with left_X/right_X
// points as flip pairs; an edge naming no point is Malformed and leaves the
// category its names alone; a category without keypoints declares nothing.
func TestCOCOSkeletons(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.jpg": "@" + darknetData + "/person.jpg",
		"kp.json": `{"images": [{"id": 1, "file_name": "a.jpg", "width": 64, "height": 48}],
 "categories": [{"id": 1, "name": "face", "keypoints": ["nose", "left_eye", "right_eye"], "skeleton": [[1, 2], [1, 3]]},
  {"id": 2, "name": "hand", "keypoints": ["wrist", "thumb"], "skeleton": [[1, 5]]},
  {"id": 3, "name": "car"}],
 "annotations": [{"id": 1, "image_id": 1, "category_id": 3, "bbox": [5, 5, 20, 30]}]}`,
	})
	_, rep := read(t, dir, format.Auto)
	want := map[string]shape.Skeleton{
		"face": {Names: []string{"nose", "left_eye", "right_eye"}, Edges: [][2]string{{"nose", "left_eye"}, {"nose", "right_eye"}},
			Flip: [][2]string{{"left_eye", "right_eye"}}},
		"hand": {Names: []string{"wrist", "thumb"}},
	}
	if !reflect.DeepEqual(rep.Skeletons, want) {
		t.Fatalf("skeletons %+v\nwant %+v", rep.Skeletons, want)
	}
	if rep.Counts[format.Malformed] != 1 || !strings.Contains(rep.Problems[0].Message, "category 2 (hand): skeleton edge [1 5] names no keypoint of its 2") {
		t.Fatalf("problems %+v", rep.Problems)
	}
}
