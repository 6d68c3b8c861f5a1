package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Change is one change of a frame's shapes (docs/team.md "History"): who,
// when, through what, and the shapes it removed and added.
type Change struct {
	ID         string            `json:"id"`
	UniqueName string            `json:"uniqueName"`
	Frame      int               `json:"frame"`
	Operation  string            `json:"operation"`
	At         time.Time         `json:"at"`
	Who        string            `json:"who"`
	Via        string            `json:"via"`
	Removed    []json.RawMessage `json:"removed"`
	Added      []json.RawMessage `json:"added"`
}

// HistoryQuery selects changes; zero fields select everything. Job is a
// job number within TaskID.
type HistoryQuery struct {
	UniqueName   string
	Frame        *int
	ProjectID    string
	TaskID       string
	Job          int
	Who          string
	Since, Until time.Time
	Limit        int // default 100, at most 1000
}

// History lists changes of frames' shapes, newest first.
func (c *Client) History(ctx context.Context, q HistoryQuery) ([]Change, error) {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("uniqueName", q.UniqueName)
	set("project", q.ProjectID)
	set("task", q.TaskID)
	set("who", q.Who)
	if q.Frame != nil {
		v.Set("frame", strconv.Itoa(*q.Frame))
	}
	if q.Job > 0 {
		v.Set("job", strconv.Itoa(q.Job))
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.UTC().Format(time.RFC3339))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out struct {
		Changes []Change `json:"changes"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/lake/history?"+v.Encode(), "", nil, &out)
	return out.Changes, err
}

// ChangeShapes is a frame's shapes (of the change's operation) as they were
// right after a change.
func (c *Client) ChangeShapes(ctx context.Context, changeID string) ([]json.RawMessage, error) {
	var out struct {
		Shapes []json.RawMessage `json:"shapes"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/lake/history/"+url.PathEscape(changeID)+"/shapes", "", nil, &out)
	return out.Shapes, err
}

// Restored answers a restore: the new change (nil when the shapes already
// were as they were then) and, for a project's frame, its new version.
type Restored struct {
	Restored   string  `json:"restored"`
	UniqueName string  `json:"uniqueName"`
	Frame      int     `json:"frame"`
	Operation  string  `json:"operation"`
	Version    int     `json:"version,omitempty"`
	Change     *Change `json:"change"`
}

// RestoreChange writes a frame's shapes back to their state right after a
// change, as a new change. version > 0 is the project frame's version the
// restore is made on (If-Match): a *ConflictError holding the frame as it is
// when it changed since.
func (c *Client) RestoreChange(ctx context.Context, changeID string, version int) (*Restored, error) {
	var out Restored
	if err := c.versioned(ctx, http.MethodPost, "/api/v1/lake/history/"+url.PathEscape(changeID)+"/restore", version, nil, &out, "restore"); err != nil {
		return nil, err
	}
	return &out, nil
}

// PersonDay is one person's work on one day (UTC), docs/team.md
// "Statistics": frames and shapes they changed, active editing time, reviews
// done, their jobs judged and rejected, comments received and resolved.
type PersonDay struct {
	User             string   `json:"user"`
	Day              string   `json:"day"`
	Frames           int      `json:"frames"`
	Shapes           int      `json:"shapes"`
	ShapesRemoved    int      `json:"shapesRemoved"`
	Changes          int      `json:"changes"`
	ActiveSeconds    float64  `json:"activeSeconds"`
	ReviewsDone      int      `json:"reviewsDone"`
	JobsReviewed     int      `json:"jobsReviewed"`
	JobsRejected     int      `json:"jobsRejected"`
	RejectionRate    *float64 `json:"rejectionRate"`
	CommentsReceived int      `json:"commentsReceived"`
	CommentsResolved int      `json:"commentsResolved"`
}

// PeopleStats reads per-person statistics by day. from and to are dates
// (2026-11-29, to included) or RFC 3339 times; "" for the last 30 days;
// projectID "" for every project.
func (c *Client) PeopleStats(ctx context.Context, from, to, projectID string) ([]PersonDay, error) {
	v := url.Values{}
	for k, s := range map[string]string{"from": from, "to": to, "project": projectID} {
		if s != "" {
			v.Set(k, s)
		}
	}
	var out struct {
		People []PersonDay `json:"people"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/stats/people?"+v.Encode(), "", nil, &out)
	return out.People, err
}

// Agreement is how far a project's annotators agree on the frames given to
// more than one of them (docs/team.md "Agreement between annotators").
type Agreement struct {
	ProjectID      string             `json:"projectId"`
	Threshold      float64            `json:"threshold"`
	IoU            float64            `json:"iou"`
	MeasuredFrames int                `json:"measuredFrames"`
	Pending        []string           `json:"pending"`
	F1             float64            `json:"f1"`
	ByLabel        map[string]float64 `json:"byLabel"`
	Kappa          *struct {
		Kind    string  `json:"kind"`
		Value   float64 `json:"value"`
		Frames  int     `json:"frames"`
		Skipped int     `json:"skipped"`
		// ByLabel is each class's kappa, one against the rest.
		ByLabel map[string]float64 `json:"byLabel"`
	} `json:"kappa"`
	Frames []struct {
		Key string  `json:"key"` // the frame's unique name
		F1  float64 `json:"f1"`
	} `json:"frames"`
	Review []string `json:"review"` // the review queue
}

// Agreement measures a project's agreement; threshold and iou 0 take the
// server's defaults (0.8 and 0.5).
func (c *Client) Agreement(ctx context.Context, projectID string, threshold, iou float64) (*Agreement, error) {
	v := url.Values{}
	if threshold > 0 {
		v.Set("threshold", strconv.FormatFloat(threshold, 'g', -1, 64))
	}
	if iou > 0 {
		v.Set("iou", strconv.FormatFloat(iou, 'g', -1, 64))
	}
	var out Agreement
	err := c.do(ctx, http.MethodGet, "/api/v1/projects/"+url.PathEscape(projectID)+"/agreement?"+v.Encode(), "", nil, &out)
	return &out, err
}

// Consensus answers an accepted consensus: the frame's new version, whose
// answers were merged, how many shapes and which class the merge kept.
type Consensus struct {
	UniqueName string   `json:"uniqueName"`
	Version    int      `json:"version"`
	Annotators []string `json:"annotators"`
	Shapes     int      `json:"shapes"`
	Class      string   `json:"class"`
}

// AcceptConsensus makes the consensus of a frame's answers the project's
// answer (a change in its history).
func (c *Client) AcceptConsensus(ctx context.Context, projectID, uniqueName string) (*Consensus, error) {
	var out Consensus
	err := c.postJSON(ctx, framePath(projectID, uniqueName, "consensus"), map[string]any{}, &out)
	return &out, err
}
