package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// ProjectSummary is a project in the project list, with its tasks' counts.
type ProjectSummary struct {
	ProjectID       string    `json:"projectId"`
	ProjectName     string    `json:"projectName"`
	ContentType     int       `json:"contentType"`
	Labels          []Label   `json:"labels"`
	CreatedAt       time.Time `json:"createdAt"`
	TaskCount       int       `json:"taskCount"`
	FrameCount      int       `json:"frameCount"`      // the tasks' totalFileCount summed
	UploadedFrames  int       `json:"uploadedFrames"`  // frames received
	CompletedFrames int       `json:"completedFrames"` // frames annotated
	Progress        float64   `json:"progress"`        // completedFrames/frameCount in percent
	CompletedTasks  int       `json:"completedTasks"`
}

// ProjectList is a page of projects and how many there are.
type ProjectList struct {
	ProjectCount int              `json:"projectCount"`
	ProjectList  []ProjectSummary `json:"projectList"`
}

// ProjectListOptions page through the projects, oldest first; PageSize 0
// is the server's default (100), at most 1000.
type ProjectListOptions struct {
	PageIndex int
	PageSize  int
}

// ListProjects pages through the projects (GET /api/v1/projects).
func (c *Client) ListProjects(ctx context.Context, opt ProjectListOptions) (*ProjectList, error) {
	q := url.Values{}
	paging(q, opt.PageIndex, opt.PageSize)
	var out ProjectList
	if err := c.do(ctx, http.MethodGet, "/api/v1/projects?"+q.Encode(), "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteCounts are how many things of each kind a delete removed or kept;
// the server leaves out kinds with none.
type DeleteCounts struct {
	Files       int `json:"files,omitempty"`
	Collections int `json:"collections,omitempty"`
	Memberships int `json:"memberships,omitempty"`
	Tags        int `json:"tags,omitempty"`
	Annotations int `json:"annotations,omitempty"`
	Embeddings  int `json:"embeddings,omitempty"`
	Blobs       int `json:"blobs,omitempty"`
	Datasets    int `json:"datasets,omitempty"`
	Versions    int `json:"versions,omitempty"`
	Frames      int `json:"frames,omitempty"`
	Projects    int `json:"projects,omitempty"`
	Labels      int `json:"labels,omitempty"`
	Tasks       int `json:"tasks,omitempty"`
	TaskFrames  int `json:"taskFrames,omitempty"`
}

// Deleted is the answer of a delete: what it removed, and what it left
// because something else still needs it (a dataset version holding a deleted
// file, a blob another file or version names, the files of a collection or
// project deleted without its files).
type Deleted struct {
	Removed       DeleteCounts `json:"removed"`
	Kept          DeleteCounts `json:"kept"`
	CancelledJobs []string     `json:"cancelledJobs,omitempty"` // builds of deleted versions
}

// DeleteFile deletes a lake file with its memberships, tags, annotations and
// embeddings; dataset versions that hold it keep it. It needs a write key.
func (c *Client) DeleteFile(ctx context.Context, uniqueName string) (*Deleted, error) {
	return c.delete(ctx, "/api/v1/lake/files/"+url.PathEscape(uniqueName), false)
}

// DeleteCollection deletes a collection and its memberships; withFiles
// deletes its files too, otherwise they stay in the lake.
func (c *Client) DeleteCollection(ctx context.Context, collectionID string, withFiles bool) (*Deleted, error) {
	return c.delete(ctx, "/api/v1/lake/collections/"+url.PathEscape(collectionID), withFiles)
}

// DeleteDataset deletes a dataset with all its versions.
func (c *Client) DeleteDataset(ctx context.Context, datasetGroupID string) (*Deleted, error) {
	return c.delete(ctx, "/api/v1/datasets/"+url.PathEscape(datasetGroupID), false)
}

// DeleteDatasetVersion deletes a dataset version, cancelling its build if
// one is queued or running.
func (c *Client) DeleteDatasetVersion(ctx context.Context, datasetVersionID string) (*Deleted, error) {
	return c.delete(ctx, "/api/v1/dataset-versions/"+url.PathEscape(datasetVersionID), false)
}

// DeleteProject deletes a project with its labels, upload sessions and
// tasks; withFiles deletes its frames' lake files too, otherwise they stay
// in the lake with their annotations.
func (c *Client) DeleteProject(ctx context.Context, projectID string, withFiles bool) (*Deleted, error) {
	return c.delete(ctx, "/api/v1/projects/"+url.PathEscape(projectID), withFiles)
}

func (c *Client) delete(ctx context.Context, path string, withFiles bool) (*Deleted, error) {
	if withFiles {
		path += "?files=true"
	}
	var out Deleted
	if err := c.do(ctx, http.MethodDelete, path, "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
