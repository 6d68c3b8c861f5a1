package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// Job is a long-running piece of work on the server (analysis, dataset build).
type Job struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Status   string          `json:"status"` // queued, running, completed, failed, cancelled
	Progress int             `json:"progress"`
	Done     int64           `json:"done"`
	Total    int64           `json:"total"`
	Error    string          `json:"error"`
	Result   json.RawMessage `json:"result"`
	// ResultSummarized: in a job list, a large result is a summary (lists
	// as their lengths, "<name>Count"); Job(id) gives it whole.
	ResultSummarized bool       `json:"resultSummarized,omitempty"`
	Attempts         int        `json:"attempts"`
	CreatedAt        time.Time  `json:"createdAt"`
	StartedAt        *time.Time `json:"startedAt"`
	FinishedAt       *time.Time `json:"finishedAt"`
}

// Finished reports whether the job has stopped for good.
func (j Job) Finished() bool {
	return j.Status == "completed" || j.Status == "failed" || j.Status == "cancelled"
}

// Job returns a job by id.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var j Job
	err := c.do(ctx, http.MethodGet, "/api/v1/jobs/"+url.PathEscape(id), "", nil, &j)
	return j, err
}

// CancelJob asks the server to stop a job.
func (c *Client) CancelJob(ctx context.Context, id string) (Job, error) {
	var j Job
	err := c.do(ctx, http.MethodPost, "/api/v1/jobs/"+url.PathEscape(id)+"/cancel", "", nil, &j)
	return j, err
}

// RetryJob runs a failed job again (POST /api/v1/jobs/{id}/retry) and
// returns it as queued. A failed import kept its archive, and its retry
// skips the files already in the lake. A job that is not failed is an
// error with code failed_precondition (409).
func (c *Client) RetryJob(ctx context.Context, id string) (Job, error) {
	var j Job
	err := c.do(ctx, http.MethodPost, "/api/v1/jobs/"+url.PathEscape(id)+"/retry", "", nil, &j)
	return j, err
}

// WaitJob polls a job until it finishes or ctx ends.
func (c *Client) WaitJob(ctx context.Context, id string) (Job, error) {
	delay := 50 * time.Millisecond
	for {
		j, err := c.Job(ctx, id)
		if err != nil || j.Finished() {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}
