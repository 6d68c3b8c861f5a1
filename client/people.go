package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// A labelling team's work (docs/team.md "Jobs", "Review", "Comments",
// "Roles", "Managing people"): a task's jobs, a person's queue, comments
// on frames and shapes, a project's members and, for admins, people.

// LabelJob is a job of a task: frames handed to one annotator (docs/team.md
// "Jobs"); Copy > 0 is the k-th independent copy of those frames. (Job is a
// background job of the server, another thing.)
type LabelJob struct {
	TaskID         string          `json:"taskId"`
	ProjectID      string          `json:"projectId"`
	Number         int             `json:"number"`
	Copy           int             `json:"copy"`
	State          string          `json:"state"` // annotation, submitted, in_review, accepted, rejected
	Assignee       *string         `json:"assignee"`
	Reviewer       *string         `json:"reviewer"`
	FrameCount     int             `json:"frameCount"`
	AnnotatedCount int             `json:"annotatedFrames"`
	AcceptedFrames int             `json:"acceptedFrames"`
	RejectedFrames int             `json:"rejectedFrames"`
	Comments       int             `json:"comments"`
	OpenComments   int             `json:"openComments"`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	Frames         []LabelJobFrame `json:"frames,omitempty"` // one job's answer only
	Events         []LabelJobEvent `json:"events,omitempty"`
	Video          json.RawMessage `json:"video,omitempty"` // a video task's job: the video and the range
}

// LabelJobFrame is a frame of a job, with the answer the job writes.
type LabelJobFrame struct {
	FrameStatus
	Review *string `json:"review"` // accepted, rejected or nil
}

// LabelJobEvent is one recorded change of a job.
type LabelJobEvent struct {
	At     time.Time       `json:"at"`
	Who    string          `json:"who"`
	Kind   string          `json:"kind"` // created, assigned, state, review
	From   *string         `json:"from,omitempty"`
	To     *string         `json:"to,omitempty"`
	Note   string          `json:"note,omitempty"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

// QueueItem is a job of the caller's queue and what to do with it.
type QueueItem struct {
	LabelJob
	TaskName    string `json:"taskName"`
	ProjectName string `json:"projectName"`
	Role        string `json:"role"`   // annotator or reviewer
	Action      string `json:"action"` // fix, continue review, annotate, review, wait
}

// JobPlan cuts a task into jobs of Size frames, given round-robin to
// Assignees (none: the jobs wait for NextLabelJob). Replace recuts a task
// whose jobs have not started; Overlap gives a share of the frames to more
// annotators independently (copy jobs); Seed fixes which frames.
type JobPlan struct {
	Size      int         `json:"size"`
	Assignees []string    `json:"assignees,omitempty"`
	Replace   bool        `json:"replace,omitempty"`
	Overlap   *JobOverlap `json:"overlap,omitempty"`
	Seed      *uint64     `json:"seed,omitempty"`
}

// JobOverlap is the share of a task's frames (0..1] given to Annotators
// people (2..5) each.
type JobOverlap struct {
	Share      float64 `json:"share"`
	Annotators int     `json:"annotators"`
}

func taskJobs(taskID string) string { return "/api/v1/tasks/" + url.PathEscape(taskID) + "/jobs" }

func taskJob(taskID string, number int) string { return taskJobs(taskID) + "/" + strconv.Itoa(number) }

// CreateLabelJobs cuts a task into jobs (curators).
func (c *Client) CreateLabelJobs(ctx context.Context, taskID string, p JobPlan) ([]LabelJob, error) {
	var out struct {
		Jobs []LabelJob `json:"jobs"`
	}
	err := c.postJSON(ctx, taskJobs(taskID), p, &out)
	return out.Jobs, err
}

// LabelJobs lists a task's jobs.
func (c *Client) LabelJobs(ctx context.Context, taskID string) ([]LabelJob, error) {
	var out struct {
		Jobs []LabelJob `json:"jobs"`
	}
	err := c.do(ctx, http.MethodGet, taskJobs(taskID), "", nil, &out)
	return out.Jobs, err
}

// LabelJob reads one job, with its frames and events.
func (c *Client) LabelJob(ctx context.Context, taskID string, number int) (*LabelJob, error) {
	var out LabelJob
	if err := c.do(ctx, http.MethodGet, taskJob(taskID, number), "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobAssignment changes who holds and who reviews a job: nil leaves a
// field as it is, "" takes the job from whoever has it.
type JobAssignment struct {
	Assignee, Reviewer *string
}

// ReassignLabelJob gives a job to another annotator or reviewer (curators).
func (c *Client) ReassignLabelJob(ctx context.Context, taskID string, number int, a JobAssignment) (*LabelJob, error) {
	body := map[string]*string{}
	for name, v := range map[string]*string{"assignee": a.Assignee, "reviewer": a.Reviewer} {
		switch {
		case v == nil:
		case *v == "":
			body[name] = nil // JSON null: nobody
		default:
			body[name] = v
		}
	}
	var out LabelJob
	if err := c.sendJSON(ctx, http.MethodPatch, taskJob(taskID, number), body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// JobStateChange moves a job: State submitted (its annotator), in_review,
// accepted or rejected (a reviewer; Note says why, Frames judges frames
// by unique name: "accepted" or "rejected").
type JobStateChange struct {
	State  string            `json:"state"`
	Note   string            `json:"note,omitempty"`
	Frames map[string]string `json:"frames,omitempty"`
}

// SetLabelJobState moves a job through review.
func (c *Client) SetLabelJobState(ctx context.Context, taskID string, number int, ch JobStateChange) (*LabelJob, error) {
	var out LabelJob
	if err := c.postJSON(ctx, taskJob(taskID, number)+"/state", ch, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// NextLabelJob hands the caller (an annotator of the project) the next
// unassigned job of a project.
func (c *Client) NextLabelJob(ctx context.Context, projectID string) (*LabelJob, error) {
	var out LabelJob
	if err := c.postJSON(ctx, "/api/v1/projects/"+url.PathEscape(projectID)+"/jobs/next", map[string]any{}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Queue lists the caller's jobs, what to do next first.
func (c *Client) Queue(ctx context.Context) ([]QueueItem, error) {
	var out struct {
		Jobs []QueueItem `json:"jobs"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/queue", "", nil, &out)
	return out.Jobs, err
}

// Comment is a comment pinned to a frame or one of its shapes.
type Comment struct {
	ID         string        `json:"id"`
	ProjectID  string        `json:"projectId"`
	UniqueName string        `json:"uniqueName"`
	TaskID     string        `json:"taskId"`
	Job        *int          `json:"job"`
	ShapeID    *string       `json:"shapeId"`
	Shape      *CommentShape `json:"shape"` // the shape as it was when commented on
	Frame      *int          `json:"frame"`
	Text       string        `json:"text"`
	Author     string        `json:"author"`
	CreatedAt  time.Time     `json:"createdAt"`
	Resolved   bool          `json:"resolved"`
	ResolvedBy *string       `json:"resolvedBy"`
	ResolvedAt *time.Time    `json:"resolvedAt"`
}

// CommentShape is the shape a comment is pinned to.
type CommentShape struct {
	Label  string  `json:"label"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// NewComment is a comment to add: on the frame, or on one shape (ShapeID,
// the shape's id in the frame's annotations); Frame is a video's frame,
// Job the job it concerns when the frame is in several.
type NewComment struct {
	Text    string `json:"text"`
	ShapeID string `json:"shapeId,omitempty"`
	Frame   *int   `json:"frame,omitempty"`
	Job     *int   `json:"job,omitempty"`
}

// AddComment pins a comment to a project's frame (reviewers, and
// annotators of the frame's job).
func (c *Client) AddComment(ctx context.Context, projectID, uniqueName string, nc NewComment) (*Comment, error) {
	var out Comment
	if err := c.postJSON(ctx, framePath(projectID, uniqueName, "comments"), nc, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// FrameComments lists the comments on a project's frame.
func (c *Client) FrameComments(ctx context.Context, projectID, uniqueName string) ([]Comment, error) {
	var out struct {
		Comments []Comment `json:"comments"`
	}
	err := c.do(ctx, http.MethodGet, framePath(projectID, uniqueName, "comments"), "", nil, &out)
	return out.Comments, err
}

// JobComments lists the comments on a job's frames.
func (c *Client) JobComments(ctx context.Context, taskID string, number int) ([]Comment, error) {
	var out struct {
		Comments []Comment `json:"comments"`
	}
	err := c.do(ctx, http.MethodGet, taskJob(taskID, number)+"/comments", "", nil, &out)
	return out.Comments, err
}

// ResolveComment marks a comment resolved (or open again).
func (c *Client) ResolveComment(ctx context.Context, commentID string, resolved bool) (*Comment, error) {
	var out Comment
	err := c.sendJSON(ctx, http.MethodPatch, "/api/v1/comments/"+url.PathEscape(commentID), map[string]bool{"resolved": resolved}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Member is a person's role in one project (annotator or reviewer) beside
// their own role.
type Member struct {
	ProjectID string    `json:"projectId"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	UserRole  string    `json:"userRole"`
	Disabled  bool      `json:"disabled,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

func memberPath(projectID, name string) string {
	return "/api/v1/projects/" + url.PathEscape(projectID) + "/members/" + url.PathEscape(name)
}

// ProjectMembers lists a project's members (curators).
func (c *Client) ProjectMembers(ctx context.Context, projectID string) ([]Member, error) {
	var out struct {
		Members []Member `json:"members"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/projects/"+url.PathEscape(projectID)+"/members", "", nil, &out)
	return out.Members, err
}

// PutMember makes a person a member of a project as role (annotator or
// reviewer; "" for the person's own role), or changes their role there.
func (c *Client) PutMember(ctx context.Context, projectID, name, role string) (*Member, error) {
	body := map[string]string{}
	if role != "" {
		body["role"] = role
	}
	var out Member
	if err := c.sendJSON(ctx, http.MethodPut, memberPath(projectID, name), body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteMember ends a person's membership of a project.
func (c *Client) DeleteMember(ctx context.Context, projectID, name string) error {
	return c.do(ctx, http.MethodDelete, memberPath(projectID, name), "", nil, nil)
}

// User is a person who signs in (docs/team.md "Accounts"); Role is
// answered as the API spells it (admin, write, read, annotator, reviewer).
type User struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	CreatedAt  time.Time  `json:"createdAt"`
	DisabledAt *time.Time `json:"disabledAt,omitempty"`
}

// UserChange changes a person; nil fields stay. Disabling ends their
// sessions and stops their keys at once; a new password ends their
// sessions.
type UserChange struct {
	Role     *string `json:"role,omitempty"`
	Disabled *bool   `json:"disabled,omitempty"`
	Password *string `json:"password,omitempty"`
}

// Users lists people (admins).
func (c *Client) Users(ctx context.Context) ([]User, error) {
	var out struct {
		Users []User `json:"users"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/users", "", nil, &out)
	return out.Users, err
}

// CreateUser adds a person (admins): a name, a password of at least 10
// characters and a role (admin, curator, viewer, annotator, reviewer).
func (c *Client) CreateUser(ctx context.Context, name, password, role string) (*User, error) {
	var out User
	err := c.postJSON(ctx, "/api/v1/users", map[string]string{"name": name, "password": password, "role": role}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateUser changes a person (admins).
func (c *Client) UpdateUser(ctx context.Context, name string, ch UserChange) (*User, error) {
	var out User
	if err := c.sendJSON(ctx, http.MethodPatch, "/api/v1/users/"+url.PathEscape(name), ch, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DisableUser disables a person (or enables them again).
func (c *Client) DisableUser(ctx context.Context, name string, disabled bool) (*User, error) {
	return c.UpdateUser(ctx, name, UserChange{Disabled: &disabled})
}

// ResetPassword gives a person a new password.
func (c *Client) ResetPassword(ctx context.Context, name, password string) (*User, error) {
	return c.UpdateUser(ctx, name, UserChange{Password: &password})
}

// SetUserRole gives a person another role.
func (c *Client) SetUserRole(ctx context.Context, name, role string) (*User, error) {
	return c.UpdateUser(ctx, name, UserChange{Role: &role})
}

// sendJSON sends in as application/json with method and decodes the
// answer into out.
func (c *Client) sendJSON(ctx context.Context, method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, method, path, "application/json", bytes.NewReader(b), out)
}
