package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/framelake/framelake/lake/shape"
)

// LakeBox is an annotation on a lake file as the server lists it: a box,
// or a shape with its box.
type LakeBox struct {
	ID         string         `json:"id"`
	Frame      int            `json:"frame"`
	Label      string         `json:"label"`
	X          float64        `json:"x"`
	Y          float64        `json:"y"`
	Width      float64        `json:"width"`
	Height     float64        `json:"height"`
	Confidence *float64       `json:"confidence,omitempty"`
	Source     string         `json:"source"`
	Operation  string         `json:"operation"`
	Attributes map[string]any `json:"attributes"`
	// Geometry is the shape of an annotation that is more than a box
	// (docs/shapes.md); X, Y, Width and Height are then its box.
	shape.Geometry
}

// FileBoxes are the boxes an import gives one lake file.
type FileBoxes struct {
	UniqueName  string `json:"uniqueName"`
	Annotations []Box  `json:"annotations"`
}

// SetBoxesResult counts the files whose boxes changed and those that
// already had exactly these boxes.
type SetBoxesResult struct {
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// SetLakeAnnotations makes each file's human boxes from operation
// ("import:<name>") exactly the boxes given, in one transaction. A file
// given an empty list is labelled empty (evaluations judge it); nil
// Annotations (null) remove its boxes and leave it unlabelled.
func (c *Client) SetLakeAnnotations(ctx context.Context, operation string, files []FileBoxes) (SetBoxesResult, error) {
	b, err := json.Marshal(map[string]any{"operation": operation, "files": files})
	if err != nil {
		return SetBoxesResult{}, err
	}
	var out SetBoxesResult
	err = c.do(ctx, http.MethodPut, "/api/v1/lake/annotations", "application/json", bytes.NewReader(b), &out)
	return out, err
}

// FileAnnotations lists a lake file's boxes, only those of operations when
// some are given.
func (c *Client) FileAnnotations(ctx context.Context, uniqueName string, operations ...string) ([]LakeBox, error) {
	q := url.Values{"operation": operations}
	var out struct {
		Annotations []LakeBox `json:"annotations"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/lake/files/"+url.PathEscape(uniqueName)+"/annotations?"+q.Encode(), "", nil, &out)
	return out.Annotations, err
}
