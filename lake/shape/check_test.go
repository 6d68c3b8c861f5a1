package shape

import (
	"math"
	"strings"
	"testing"
)

func TestChecksNameWhatIsWrong(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		err  error
		want string // "" when valid
	}{
		{"triangle", CheckPolygon([][]float64{{0, 0, 4, 0, 0, 4}}, 10, 10), ""},
		{"bow tie crosses itself", CheckPolygon([][]float64{{0, 0, 4, 4, 4, 0, 0, 4}}, 10, 10), ""},
		{"no ring", CheckPolygon(nil, 10, 10), "polygon has no ring"},
		{"two points", CheckPolygon([][]float64{{0, 0, 4, 0, 0, 4}, {1, 1, 2, 2}}, 10, 10), "polygon ring 1 has 2 points; it needs at least 3"},
		{"odd numbers", CheckPolygon([][]float64{{0, 0, 4, 0, 0}}, 10, 10), "polygon ring 0 has 5 numbers"},
		{"NaN", CheckPolygon([][]float64{{0, 0, nan, 0, 0, 4}}, 10, 10), "polygon ring 0 point 1 is not finite"},
		{"Inf", CheckPoints([]float64{0, 0, math.Inf(1), 0}, 2, 10, 10), "point 1 is not finite"},
		{"far outside", CheckPoints([]float64{0, 0, 25, 0}, 2, 10, 10), "point 1 (25, 0) lies more than the image's size outside the 10x10 image"},
		{"outside within reach", CheckPoints([]float64{-3, 0, 15, 0}, 2, 10, 10), ""},
		{"polyline of one point", CheckPoints([]float64{1, 1}, 2, 10, 10), "has 1 points; it needs at least 2"},
		{"keypoints", CheckKeypoints([]Keypoint{{"nose", 1, 2, 2}, {"left_eye", 0, 0, 0}}, []string{"nose", "left_eye"}, 10, 10), ""},
		{"undeclared keypoint", CheckKeypoints([]Keypoint{{"tail", 1, 2, 2}}, []string{"nose"}, 10, 10), `keypoint "tail" is not a point of the label`},
		{"twice", CheckKeypoints([]Keypoint{{"nose", 1, 2, 2}, {"nose", 1, 2, 1}}, nil, 10, 10), `keypoint "nose" is given twice`},
		{"visibility 3", CheckKeypoints([]Keypoint{{"nose", 1, 2, 3}}, nil, 10, 10), "visibility 3"},
		{"unlabelled point may be anything", CheckKeypoints([]Keypoint{{"nose", nan, 2, 0}}, nil, 10, 10), ""},
		{"labelled NaN", CheckKeypoints([]Keypoint{{"nose", nan, 2, 1}}, nil, 10, 10), `keypoint "nose" is not finite`},
		{"no points", CheckKeypoints(nil, nil, 10, 10), "keypoints has no point"},
		{"mask sum", RLE{Height: 4, Width: 4, Counts: []uint32{5, 2}}.Check(), "mask counts sum to 7, not height×width = 4×4 = 16"},
		{"mask size", RLE{Height: 0, Width: 4}.Check(), "mask size 0x4"},
	}
	for _, c := range cases {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("%s: %v", c.name, c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, c.err, c.want)
		}
	}
}

func TestBoundsAndCounts(t *testing.T) {
	if b := PointsBounds([]float64{3, 4, 1, 9, 5, 2}); b != (Rect{1, 2, 4, 7}) {
		t.Errorf("PointsBounds %v", b)
	}
	kps := []Keypoint{{"a", 1, 1, 2}, {"b", 9, 9, 0}, {"c", 3, 5, 1}}
	if b := KeypointsBounds(kps); b != (Rect{1, 1, 2, 4}) {
		t.Errorf("KeypointsBounds %v: the unlabelled point is not in it", b)
	}
	if Visible(kps) != 1 || Labelled(kps) != 2 {
		t.Errorf("visible %d labelled %d", Visible(kps), Labelled(kps))
	}
	if _, err := ParseType("circle"); err == nil {
		t.Error("circle is not a type")
	}
	if ty, err := ParseType(""); ty != Box || err != nil {
		t.Errorf(`"" is a box: %v %v`, ty, err)
	}
}

func TestSkeletonCheck(t *testing.T) {
	if err := COCOPerson.Check(); err != nil {
		t.Fatalf("COCO person: %v", err)
	}
	for _, c := range []struct {
		s    Skeleton
		want string
	}{
		{Skeleton{}, "at least one"},
		{Skeleton{Names: []string{"a", "a"}}, `"a" is declared twice`},
		{Skeleton{Names: []string{"a", "b"}, Edges: [][2]string{{"a", "c"}}}, `skeleton[0]: "c" is not a declared keypoint`},
		{Skeleton{Names: []string{"a", "b", "c"}, Flip: [][2]string{{"a", "b"}, {"b", "c"}}}, `flipPairs[1]: "b" is in two pairs`},
		{Skeleton{Names: []string{"a", "b"}, Sigmas: []float64{.1}}, "1 values for 2"},
		{Skeleton{Names: []string{"a"}, Sigmas: []float64{0}}, "sigmas[0] is 0"},
	} {
		err := c.s.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.s, err, c.want)
		}
	}
	if COCOPerson.FlipName("left_wrist") != "right_wrist" || COCOPerson.FlipName("nose") != "nose" {
		t.Error("FlipName does not swap COCO's pairs")
	}
	if got := (Skeleton{Names: COCOPerson.Names}).SigmasOr(); len(got) != 17 || got[0] != .026 {
		t.Errorf("COCO's names take COCO's sigmas, got %v", got)
	}
}
