package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/framelake/framelake/lake"
)

// detection is one box a model reported, in the pixels of the image it received.
type detection struct {
	x1, y1, x2, y2 float64
	label          string
	score          float64
}

// outputError is a model answer that breaks the contract of docs/spec/rest.md's
// "Model package contract".
func (a *analyzer) outputError(body []byte, format string, args ...any) error {
	shown := strings.TrimSpace(string(body))
	if len(shown) > 300 {
		shown = shown[:300] + "..."
	}
	return &ModelError{Model: a.model.Name, Stage: "output",
		Msg:  fmt.Sprintf("output_fn's answer breaks the %s contract: %s", a.run.Application, fmt.Sprintf(format, args...)),
		Tail: "answer: " + shown}
}

// rawDetections is the union of the auto_tagging and auto_annotation answers.
type rawDetections struct {
	Boxes   [][]float64 `json:"boxes"`
	Classes []float64   `json:"classes"`
	Scores  []float64   `json:"scores"`
	Phrases []string    `json:"phrases"`
	// Unsupported (auto_annotation, optional) lists the prompts the model
	// cannot look for, so "not found" can be told from "cannot look".
	Unsupported []string `json:"unsupported"`
}

// detections parses an auto_tagging or auto_annotation answer and resolves
// each box's label (a class index into label_list.yaml, or a prompt's label).
// unsupported are the labels of the prompts the model said it cannot handle.
func (a *analyzer) detections(body []byte) (out []detection, unsupported []string, err error) {
	var raw rawDetections
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, a.outputError(body, "not the JSON object expected: %v", err)
	}
	if raw.Boxes == nil {
		return nil, nil, a.outputError(body, `no "boxes" list`)
	}
	n := len(raw.Boxes)
	names, list := "classes", len(raw.Classes)
	if a.run.Application == AutoAnnotation {
		names, list = "phrases", len(raw.Phrases)
		for _, phrase := range raw.Unsupported {
			label, err := a.promptLabel(body, phrase)
			if err != nil {
				return nil, nil, err
			}
			unsupported = append(unsupported, label)
		}
	}
	if list != n || len(raw.Scores) != n {
		return nil, nil, a.outputError(body, "%d boxes, %d %s and %d scores; the three lists must be as long", n, list, names, len(raw.Scores))
	}
	out = make([]detection, 0, n)
	for i, b := range raw.Boxes {
		if len(b) != 4 || !finite(b...) {
			return nil, nil, a.outputError(body, "box %d is %v, not four numbers [x1, y1, x2, y2]", i, b)
		}
		s := raw.Scores[i]
		if !finite(s) || s < 0 || s > 1 {
			return nil, nil, a.outputError(body, "score %d is %v, not in 0..1", i, s)
		}
		d := detection{x1: b[0], y1: b[1], x2: b[2], y2: b[3], score: s}
		if a.run.Application == AutoAnnotation {
			d.label, err = a.promptLabel(body, raw.Phrases[i])
		} else {
			d.label, err = a.classLabel(body, i, raw.Classes[i])
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, d)
	}
	return out, unsupported, nil
}

func (a *analyzer) classLabel(body []byte, i int, c float64) (string, error) {
	k := int(c)
	if !finite(c) || float64(k) != c || k < 0 || k >= len(a.model.Labels) {
		return "", a.outputError(body, "class %d is %v, not an index into the %d labels of label_list.yaml", i, c, len(a.model.Labels))
	}
	return a.model.Labels[k], nil
}

// promptLabel maps a phrase to its prompt's label: the label itself, or the
// prompt's description, compared without case as a last resort.
func (a *analyzer) promptLabel(body []byte, phrase string) (string, error) {
	for _, p := range a.run.Params.Prompts {
		if phrase == p.Label || (phrase == p.Description && p.Description != "") {
			return p.Label, nil
		}
	}
	for _, p := range a.run.Params.Prompts {
		if strings.EqualFold(phrase, p.Label) || strings.EqualFold(phrase, p.Description) && p.Description != "" {
			return p.Label, nil
		}
	}
	return "", a.outputError(body, "phrase %q is not the label of a prompt", phrase)
}

// embedding parses an embedding answer.
func (a *analyzer) embedding(body []byte) ([]float32, error) {
	var raw struct {
		Embedding []float64 `json:"embedding"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, a.outputError(body, "not the JSON object expected: %v", err)
	}
	if len(raw.Embedding) == 0 {
		return nil, a.outputError(body, `no "embedding" list of numbers`)
	}
	v := make([]float32, len(raw.Embedding))
	for i, f := range raw.Embedding {
		if !finite(f) || math.Abs(f) > math.MaxFloat32 {
			return nil, a.outputError(body, "embedding[%d] is %v, not a finite number", i, f)
		}
		v[i] = float32(f)
	}
	return v, nil
}

func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// toBox maps a detection from the inW x inH image the model saw to the
// origW x origH original, clipped to it; ok is false when nothing is left.
func toBox(d detection, inW, inH, origW, origH, frame int) (lake.Box, bool) {
	sx, sy := float64(origW)/float64(inW), float64(origH)/float64(inH)
	x1, x2 := clamp(min(d.x1, d.x2)*sx, float64(origW)), clamp(max(d.x1, d.x2)*sx, float64(origW))
	y1, y2 := clamp(min(d.y1, d.y2)*sy, float64(origH)), clamp(max(d.y1, d.y2)*sy, float64(origH))
	if x2-x1 <= 0 || y2-y1 <= 0 {
		return lake.Box{}, false
	}
	conf := d.score
	return lake.Box{Frame: frame, Label: d.label, X: x1, Y: y1, W: x2 - x1, H: y2 - y1, Confidence: &conf}, true
}

func clamp(v, hi float64) float64 { return max(0, min(v, hi)) }
