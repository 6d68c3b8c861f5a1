package evaluate

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/framelake/framelake/lake/shape"
)

// TestParseKeypoints: the reader of stored keypoints gives what
// encoding/json gives, for the lake's own form (fast) and others (escaped
// names, other field order, spaces: encoding/json's).
func TestParseKeypoints(t *testing.T) {
	own, _ := json.Marshal([]shape.Keypoint{{Name: "nose", X: 1.5, Y: -2e-3, V: 2}, {Name: "a<b", X: 3, Y: 4}, {Name: "é", X: 1e21, Y: 0, V: 1}})
	for _, s := range []string{string(own), `[]`, `[{"x":1,"name":"n","y":2,"v":1}]`, ` [ {"name": "n", "x": 1, "y": 2, "v": 0} ]`,
		`[{"name":"q\"","x":1,"y":2,"v":2}]`} {
		var want []shape.Keypoint
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		got, err := parseKeypoints(s, nil)
		if err != nil || !reflect.DeepEqual(got, want) && len(want)+len(got) > 0 {
			t.Errorf("%s: %+v %v, want %+v", s, got, err, want)
		}
	}
	lake, _ := json.Marshal([]shape.Keypoint{{Name: "nose", X: 1.25, Y: 2, V: 2}, {Name: "left_eye", X: 3, Y: 4e-7}})
	if kps, ok := scanKeypoints(string(lake), nil); !ok || len(kps) != 2 || kps[1].Y != 4e-7 {
		t.Errorf("the lake's form %s was not read fast: %+v", lake, kps)
	}
	if _, err := parseKeypoints(`[{"name":"n","x":1,"y":2,"v":2}`, nil); err == nil {
		t.Error("an unclosed array was read")
	}
}

// TestSigmasOf: a declared skeleton's sigmas; COCO's for a declaration of
// COCO's 17 names without sigmas; the request's for another declaration
// without sigmas, which must name every declared point.
func TestSigmasOf(t *testing.T) {
	hand := &shape.Skeleton{Names: []string{"thumb", "wrist"}}
	decl := map[string]*shape.Skeleton{"hand": hand, "cat": {Names: []string{"ear", "tail"}, Sigmas: []float64{.1, .2}},
		"person": {Names: shape.COCOPerson.Names}}
	skel := func(_ context.Context, l string) (*shape.Skeleton, error) { return decl[l], nil }
	ctx := context.Background()
	for label, want := range map[string]LabelSigmas{
		"cat":    {Source: "declared", Keypoints: []string{"ear", "tail"}, Sigmas: []float64{.1, .2}},
		"person": {Source: "coco", Keypoints: shape.COCOPerson.Names, Sigmas: shape.COCOPerson.Sigmas},
		"hand":   {Source: "request", Keypoints: []string{"thumb", "wrist"}, Sigmas: []float64{.3, .4}},
	} {
		got, err := sigmasOf(ctx, skel, map[string]map[string]float64{"hand": {"wrist": .4, "thumb": .3}}, label, nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v %v, want %+v", label, got, err, want)
		}
	}
	if _, err := sigmasOf(ctx, skel, map[string]map[string]float64{"hand": {"thumb": .3}}, "hand", nil); err == nil {
		t.Error("hand's wrist without a sigma was taken")
	}
	// Undeclared: the points seen decide; the declared order is then COCO's.
	if got, err := sigmasOf(ctx, nil, nil, "pedestrian", []string{"left_eye", "nose"}); err != nil || got.Source != "coco" {
		t.Errorf("COCO's names undeclared: %+v %v", got, err)
	}
}
