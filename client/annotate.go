package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/lake/shape"
)

// Content types of a project.
const (
	ContentVideo = 1
	ContentImage = 2
)

// Label is a class of a project and what it declares (docs/shapes.md,
// "Declaring labels"): typed attributes its annotations' attributes must
// match (none: free attributes) and, for a keypoints label, its point
// names, skeleton, flip pairs and sigmas (Skeleton nil: none).
type Label struct {
	Name        string          `json:"labelName"`
	Description string          `json:"labelDescription"`
	Attributes  []AttributeSpec `json:"attributes,omitempty"`
	*shape.Skeleton
}

// AttributeSpec is a typed attribute a label declares: Type is "text",
// "number" (within Min and Max when given), "boolean" or "select" (one of
// Values).
type AttributeSpec struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	Values   []string `json:"values,omitempty"`
	Required bool     `json:"required,omitempty"`
}

// ProjectInfo is a project with its labels (Get Project).
type ProjectInfo struct {
	ProjectID   string    `json:"projectId"`
	ProjectName string    `json:"projectName"`
	ContentType int       `json:"contentType"`
	Labels      []Label   `json:"labels"`
	CreatedAt   time.Time `json:"createdAt"`
}

// GetProject returns a project with its labels and what they declare.
func (c *Client) GetProject(ctx context.Context, projectID string) (*ProjectInfo, error) {
	var out ProjectInfo
	if err := c.do(ctx, http.MethodGet, "/api/v1/projects/"+url.PathEscape(projectID), "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutLabel sets a project's label as l gives it (description, attributes
// and keypoints; absent ones declare none), adding it when the project
// lacks it, and returns it as stored. Another project's other skeleton for
// the same label name is a 409 (already_exists).
func (c *Client) PutLabel(ctx context.Context, projectID string, l Label) (*Label, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	var out Label
	err = c.do(ctx, http.MethodPut, "/api/v1/projects/"+url.PathEscape(projectID)+"/labels/"+url.PathEscape(l.Name),
		"application/json", bytes.NewReader(b), &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Project is what Create Project takes.
type Project struct {
	Name        string  `json:"projectName"`
	ContentType int     `json:"contentType"` // ContentVideo or ContentImage
	Labels      []Label `json:"labels"`
}

// Box is a labelled rectangle on a frame, in pixels from the image's top-left
// corner, (X, Y) the box's top-left corner.
type Box struct {
	Label      string          `json:"label"`
	X          float64         `json:"x"`
	Y          float64         `json:"y"`
	Width      float64         `json:"width"`
	Height     float64         `json:"height"`
	Attributes json.RawMessage `json:"attributes,omitempty"` // a JSON object
	// Geometry makes the box another shape (docs/shapes.md): a polygon,
	// mask, keypoints, polyline or class, whose box the server derives.
	shape.Geometry
}

// UploadSession is what Initialize Upload returns.
type UploadSession struct {
	UploadID string `json:"uploadId"`
	// LastSequenceID is the highest sequence number received so far (-1 for
	// none): a client that lost its connection resumes after it.
	LastSequenceID int `json:"lastSequenceId"`
}

// Frame is one frame to upload with its boxes.
type Frame struct {
	File       UploadFile
	SequenceNo *int  // nil: one past the last received
	Boxes      []Box // nil sends an empty list
}

// FrameResult is a stored frame.
type FrameResult struct {
	Success    bool   `json:"success"`
	UniqueName string `json:"uniqueName"`
	SequenceNo int    `json:"sequenceNo"`
	Task       *Task  `json:"task,omitempty"` // set by ReplaceFrameAnnotations: the frame's task after the change
}

// Task tracks the annotation of one upload session.
type Task struct {
	ID                    string     `json:"id"`
	FrameCount            int        `json:"frameCount"`
	Status                int        `json:"status"` // 0 not started, 1 in progress, 2 completed
	CompletedFrames       int        `json:"completedFrames"`
	CreatedAt             time.Time  `json:"createdAt"`
	UpdatedAt             time.Time  `json:"updatedAt"`
	CompletedAt           *time.Time `json:"completedAt"`
	ProjectName           string     `json:"projectName"`
	Progress              float64    `json:"progress"`
	ContentType           int        `json:"contentType"`
	VideoResolutionWidth  int        `json:"videoResolutionWidth"`
	VideoResolutionHeight int        `json:"videoResolutionHeight"`
	VideoName             string     `json:"videoName"`
	TaskName              string     `json:"taskName"`
	IsDownloadEnable      bool       `json:"isDownloadEnable"`
	DownLoadURL           string     `json:"downLoadUrl"`
}

// TaskList is a page of a project's tasks.
type TaskList struct {
	TaskCount int    `json:"taskCount"`
	TaskList  []Task `json:"taskList"`
}

// TaskListOptions select a page of tasks; zero sizes take the server default.
type TaskListOptions struct {
	ProjectID string
	PageIndex int
	PageSize  int
}

// DownloadOptions select a page of a project's annotations.
type DownloadOptions struct {
	ProjectID string
	TaskIDs   []string // only these tasks; all when empty
	Labels    []string // only boxes with these labels; all when empty
	PageIndex int
	PageSize  int // tasks per page; 0: the server default (5)
}

// Annotations is a page of Download Annotations.
type Annotations struct {
	PageIndex int             `json:"pageIndex"`
	PageSize  int             `json:"pageSize"`
	TaskCount int             `json:"taskCount"`
	MetaData  ProjectMeta     `json:"metaData"`
	Data      []TaskAnnotated `json:"data"`
}

// ProjectMeta describes the project of a download.
type ProjectMeta struct {
	ProjectID   string  `json:"projectId"`
	ProjectName string  `json:"projectName"`
	ContentType int     `json:"contentType"`
	Labels      []Label `json:"labels"`
}

// TaskAnnotated is a task's frames in sequence order.
type TaskAnnotated struct {
	TaskID   string           `json:"taskId"`
	TaskName string           `json:"taskName"`
	Frames   []AnnotatedFrame `json:"frames"`
}

// AnnotatedFrame is a frame with its boxes.
type AnnotatedFrame struct {
	FrameID     int          `json:"frameId"` // the sequence number
	UniqueName  string       `json:"uniqueName"`
	URL         string       `json:"url"`
	Width       int          `json:"width"`
	Height      int          `json:"height"`
	Annotations []Annotation `json:"annotations"`
	// Shapes are the frame's annotations that are not boxes.
	Shapes []Annotation `json:"shapes"`
}

// Annotation is a stored box.
type Annotation struct {
	ID string `json:"id"`
	Box
	Source string `json:"source"` // "human"
}

// CreateProject creates an annotation project and returns its id.
func (c *Client) CreateProject(ctx context.Context, p Project) (string, error) {
	if p.Labels == nil {
		p.Labels = []Label{}
	}
	var out struct {
		ProjectID string `json:"projectId"`
	}
	err := c.postJSON(ctx, "/api/v1/projects", p, &out)
	return out.ProjectID, err
}

// InitializeUpload opens (or, for the same project and collection name,
// resumes) an upload session of totalFileCount frames.
func (c *Client) InitializeUpload(ctx context.Context, projectID, collectionName string, totalFileCount int) (*UploadSession, error) {
	var out UploadSession
	err := c.postJSON(ctx, "/api/v1/projects/"+url.PathEscape(projectID)+"/uploads",
		map[string]any{"collectionName": collectionName, "totalFileCount": totalFileCount}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// UploadFrame sends one frame with its boxes (Upload Files with Labelling),
// streamed rather than buffered.
func (c *Client) UploadFrame(ctx context.Context, uploadID string, f Frame) (*FrameResult, error) {
	boxes := f.Boxes
	if boxes == nil {
		boxes = []Box{}
	}
	labels, err := json.Marshal(boxes)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeFrame(mw, f, labels)) }()
	var out FrameResult
	err = c.do(ctx, http.MethodPost, "/api/v1/uploads/"+url.PathEscape(uploadID)+"/files", mw.FormDataContentType(), pr, &out)
	pr.CloseWithError(err) // unblocks the writer if the server answered early
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func writeFrame(mw *multipart.Writer, f Frame, labels []byte) error {
	if f.SequenceNo != nil {
		if err := mw.WriteField("sequenceNo", strconv.Itoa(*f.SequenceNo)); err != nil {
			return err
		}
	}
	if err := mw.WriteField("labels", string(labels)); err != nil {
		return err
	}
	if err := copyPart(mw, f.File); err != nil {
		return err
	}
	return mw.Close()
}

// TaskList pages through a project's tasks (Get Task List).
func (c *Client) TaskList(ctx context.Context, opt TaskListOptions) (*TaskList, error) {
	q := url.Values{"projectId": {opt.ProjectID}}
	paging(q, opt.PageIndex, opt.PageSize)
	var out TaskList
	if err := c.do(ctx, http.MethodGet, "/api/v1/tasks?"+q.Encode(), "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DownloadAnnotations reads a page of a project's tasks with their frames
// and boxes (Download Annotations).
func (c *Client) DownloadAnnotations(ctx context.Context, opt DownloadOptions) (*Annotations, error) {
	q := url.Values{}
	if len(opt.TaskIDs) > 0 {
		q.Set("taskList", strings.Join(opt.TaskIDs, ","))
	}
	if len(opt.Labels) > 0 {
		q["labels"] = opt.Labels
	}
	paging(q, opt.PageIndex, opt.PageSize)
	var out Annotations
	path := "/api/v1/projects/" + url.PathEscape(opt.ProjectID) + "/annotations?" + q.Encode()
	if err := c.do(ctx, http.MethodGet, path, "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReplaceFrameAnnotations replaces the boxes a project gave the frame stored
// as uniqueName; an empty list removes them.
func (c *Client) ReplaceFrameAnnotations(ctx context.Context, projectID, uniqueName string, boxes []Box) (*FrameResult, error) {
	if boxes == nil {
		boxes = []Box{}
	}
	b, err := json.Marshal(boxes)
	if err != nil {
		return nil, err
	}
	var out FrameResult
	path := "/api/v1/projects/" + url.PathEscape(projectID) + "/frames/" + url.PathEscape(uniqueName) + "/annotations"
	if err := c.do(ctx, http.MethodPut, path, "application/json", strings.NewReader(string(b)), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func paging(q url.Values, index, size int) {
	if index > 0 {
		q.Set("pageIndex", strconv.Itoa(index))
	}
	if size > 0 {
		q.Set("pageSize", strconv.Itoa(size))
	}
}
