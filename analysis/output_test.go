package analysis

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestDetectionsContract: what an auto_tagging or auto_annotation answer may
// hold, and the error that names what is wrong when it breaks the contract.
func TestDetectionsContract(t *testing.T) {
	prompts := []Prompt{{Label: "puppy", Description: "a young dog"}, {Label: "volcano"}}
	cases := []struct {
		name        string
		app         Application
		body        string
		labels      []string // of the boxes
		unsupported []string
		err         string // "" for none
	}{
		{"tagging", AutoTagging, `{"boxes": [[1,2,3,4]], "classes": [1], "scores": [0.9]}`, []string{"dog"}, nil, ""},
		{"class out of range", AutoTagging, `{"boxes": [[1,2,3,4]], "classes": [7], "scores": [0.9]}`, nil, nil, "not an index"},
		{"lists differ", AutoTagging, `{"boxes": [[1,2,3,4]], "classes": [], "scores": [0.9]}`, nil, nil, "must be as long"},
		{"score above 1", AutoTagging, `{"boxes": [[1,2,3,4]], "classes": [0], "scores": [1.5]}`, nil, nil, "not in 0..1"},
		{"no boxes", AutoTagging, `{"classes": []}`, nil, nil, `no "boxes"`},
		{"prompt by description", AutoAnnotation, `{"boxes": [[1,2,3,4]], "phrases": ["a young dog"], "scores": [0.8],
			"unsupported": ["volcano"]}`, []string{"puppy"}, []string{"volcano"}, ""},
		{"unsupported names no prompt", AutoAnnotation, `{"boxes": [], "phrases": [], "scores": [],
			"unsupported": ["comet"]}`, nil, nil, `phrase "comet" is not the label of a prompt`},
		{"phrase names no prompt", AutoAnnotation, `{"boxes": [[1,2,3,4]], "phrases": ["cat"], "scores": [0.8]}`,
			nil, nil, `phrase "cat"`},
	}
	for _, c := range cases {
		a := &analyzer{run: Run{Application: c.app, Params: RunParams{Prompts: prompts}},
			model: Model{Name: "m", Labels: []string{"cat", "dog"}}}
		ds, unsupported, err := a.detections([]byte(c.body))
		if c.err != "" {
			var me *ModelError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want a ModelError containing %q", c.name, err, c.err)
			}
			continue
		}
		var labels []string
		for _, d := range ds {
			labels = append(labels, d.label)
		}
		if err != nil || !slices.Equal(labels, c.labels) || !slices.Equal(unsupported, c.unsupported) {
			t.Errorf("%s: labels %v unsupported %v err %v; want %v %v", c.name, labels, unsupported, err, c.labels, c.unsupported)
		}
	}
}
