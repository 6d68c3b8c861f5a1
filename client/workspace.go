package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// NewTask makes a task of lake images: exactly one of UniqueNames, Query and
// CollectionID names its frames; or, in a video project, of a lake video:
// Video with an optional range (nil: the whole video) and Every (0: every
// frame), no media copied.
type NewTask struct {
	TaskName     string   `json:"taskName,omitempty"`
	UniqueNames  []string `json:"uniqueNames,omitempty"`
	Query        string   `json:"query,omitempty"`
	CollectionID string   `json:"collectionId,omitempty"`
	// StartFrom is "lake" (default: the frames start from the images' human
	// boxes with the project's labels, which become the project's) or
	// "empty" (no boxes; the lake's stay as they are).
	StartFrom string `json:"startFrom,omitempty"`

	Video      string `json:"video,omitempty"`
	FirstFrame *int   `json:"firstFrame,omitempty"`
	LastFrame  *int   `json:"lastFrame,omitempty"`
	Every      int    `json:"every,omitempty"`
}

// Workspace is a task with its project's labels and its frames in order.
type Workspace struct {
	Task         Task          `json:"task"`
	ProjectID    string        `json:"projectId"`
	Labels       []Label       `json:"labels"`
	CollectionID string        `json:"collectionId"`
	Frames       []FrameStatus `json:"frames"`
	Video        *VideoTask    `json:"video,omitempty"` // a task made from a lake video
}

// VideoTask is the lake video a task labels and which of its frames: every
// Every-th frame from FirstFrame to LastFrame.
type VideoTask struct {
	UniqueName string  `json:"uniqueName"`
	FirstFrame int     `json:"firstFrame"`
	LastFrame  int     `json:"lastFrame"`
	Every      int     `json:"every"`
	Frames     int     `json:"frames"`     // the task's frames
	FrameRate  float64 `json:"frameRate"`  // the video's
	FrameCount int     `json:"frameCount"` // the video's
	Width      int     `json:"width"`
	Height     int     `json:"height"`
}

// FrameStatus is one frame of a task.
type FrameStatus struct {
	SequenceNo int    `json:"sequenceNo"`
	UniqueName string `json:"uniqueName"`
	URL        string `json:"url"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	Annotated  bool   `json:"annotated"`
	BoxCount   int    `json:"boxCount"`
	Version    int    `json:"version"`
	Frame      *int   `json:"frame,omitempty"` // a video task's: the frame number in the video UniqueName
}

// FrameState is a frame's human boxes in a project at a version, with the
// model suggestions still open on it.
type FrameState struct {
	TaskID      string       `json:"taskId"`
	SequenceNo  int          `json:"sequenceNo"`
	UniqueName  string       `json:"uniqueName"`
	Width       int          `json:"width"`
	Height      int          `json:"height"`
	Annotated   bool         `json:"annotated"`
	Version     int          `json:"version"`
	Annotations []Annotation `json:"annotations"`
	Suggestions []Suggestion `json:"suggestions"`
}

// Suggestion is a machine box with one of the project's labels.
type Suggestion struct {
	ID         string  `json:"id"`
	Label      string  `json:"label"`
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
	Width      float64 `json:"width"`
	Height     float64 `json:"height"`
	Confidence float64 `json:"confidence"`
	Operation  string  `json:"operation"`
}

// FrameEdit is a frame edit's answer: its task and the frame's new version.
type FrameEdit struct {
	FrameResult
	Version int `json:"version"`
}

// ConflictError is a 409 of an edit made on a stale version: nothing
// changed, and Current is the frame as it is.
type ConflictError struct {
	Err     *Error
	Current FrameState
}

func (e *ConflictError) Error() string { return e.Err.Error() }
func (e *ConflictError) Unwrap() error { return e.Err }

// CreateTask makes a task of lake images in a project.
func (c *Client) CreateTask(ctx context.Context, projectID string, t NewTask) (*Task, error) {
	var out Task
	if err := c.postJSON(ctx, "/api/v1/projects/"+url.PathEscape(projectID)+"/tasks", t, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RenameTask gives a task a name.
func (c *Client) RenameTask(ctx context.Context, taskID, name string) (*Task, error) {
	return c.patchTask(ctx, taskID, map[string]any{"taskName": name})
}

// CompleteTask marks a task done (status 2); every frame must be annotated.
func (c *Client) CompleteTask(ctx context.Context, taskID string) (*Task, error) {
	return c.patchTask(ctx, taskID, map[string]any{"status": 2})
}

// ReopenTask moves a completed task back to in progress (status 1).
func (c *Client) ReopenTask(ctx context.Context, taskID string) (*Task, error) {
	return c.patchTask(ctx, taskID, map[string]any{"status": 1})
}

func (c *Client) patchTask(ctx context.Context, taskID string, body map[string]any) (*Task, error) {
	b, _ := json.Marshal(body)
	var out Task
	if err := c.do(ctx, http.MethodPatch, "/api/v1/tasks/"+url.PathEscape(taskID), "application/json",
		bytes.NewReader(b), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TaskWorkspace returns a task's labels and frames.
func (c *Client) TaskWorkspace(ctx context.Context, taskID string) (*Workspace, error) {
	var out Workspace
	if err := c.do(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(taskID)+"/frames", "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func framePath(projectID, uniqueName, what string) string {
	return "/api/v1/projects/" + url.PathEscape(projectID) + "/frames/" + url.PathEscape(uniqueName) + "/" + what
}

// FrameAnnotations returns a frame's boxes, version and open suggestions.
func (c *Client) FrameAnnotations(ctx context.Context, projectID, uniqueName string) (*FrameState, error) {
	var out FrameState
	if err := c.do(ctx, http.MethodGet, framePath(projectID, uniqueName, "annotations"), "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReplaceFrameAnnotationsAt replaces a frame's human boxes ([] for "no
// objects"). With version > 0 only if the frame is still at that version:
// else a *ConflictError holding the frame as it is.
func (c *Client) ReplaceFrameAnnotationsAt(ctx context.Context, projectID, uniqueName string, version int, boxes []Box) (*FrameEdit, error) {
	if boxes == nil {
		boxes = []Box{}
	}
	b, _ := json.Marshal(boxes)
	return c.frameEdit(ctx, http.MethodPut, framePath(projectID, uniqueName, "annotations"), version, b)
}

// DecideSuggestions accepts (accept true: they become human boxes) or
// rejects a frame's suggestions by id, or every one at least minConfidence
// sure when minConfidence is not nil; version as for ReplaceFrameAnnotationsAt.
func (c *Client) DecideSuggestions(ctx context.Context, projectID, uniqueName string, version int, accept bool, ids []string, minConfidence *float64) (*FrameEdit, error) {
	action := "reject"
	if accept {
		action = "accept"
	}
	b, _ := json.Marshal(map[string]any{"action": action, "ids": ids, "minConfidence": minConfidence})
	return c.frameEdit(ctx, http.MethodPost, framePath(projectID, uniqueName, "suggestions"), version, b)
}

func (c *Client) frameEdit(ctx context.Context, method, path string, version int, body []byte) (*FrameEdit, error) {
	var out FrameEdit
	if err := c.versioned(ctx, method, path, version, body, &out, "frame edit"); err != nil {
		return nil, err
	}
	return &out, nil
}

// versioned sends a write made on a frame's version (If-Match when version
// > 0; body nil for none) and decodes its answer into out; a 409 holding the
// frame as it is now is a *ConflictError.
func (c *Client) versioned(ctx context.Context, method, path string, version int, body []byte, out any, what string) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("key", c.key)
	req.Header.Set("secret", c.secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if version > 0 {
		req.Header.Set("If-Match", `"`+strconv.Itoa(version)+`"`)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusConflict {
		var cb struct {
			Error   Error      `json:"error"`
			Current FrameState `json:"current"`
		}
		if json.Unmarshal(raw, &cb) == nil && cb.Current.Version > 0 {
			cb.Error.Status = resp.StatusCode
			return &ConflictError{Err: &cb.Error, Current: cb.Current}
		}
	}
	if resp.StatusCode/100 != 2 {
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		return decodeError(resp)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return errors.Join(errors.New("framelake: decode "+what), err)
	}
	return nil
}
