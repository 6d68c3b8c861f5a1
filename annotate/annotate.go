// Package annotate is framelake's annotation projects: projects with a content
// type and labels, upload sessions that receive one frame (an image) at a time
// with its boxes, one task per session that tracks annotation progress, and
// the download of a project's annotations page by page.
//
// Frames become lake files listed under the session's collection (an
// image_collection for both content types, since every frame is an image; a
// video project's frames keep their sequence number as the file's
// video_index). Their boxes are lake annotations with source human and the
// project id as the operation, so the query language and datasets see them
// like any other annotation.
//
// A frame with no objects is a real answer: a frame is annotated once its
// labels have been given, and [] (no boxes) is such an answer. Upload Files
// with Labelling requires labels, so a frame is annotated from the moment it
// arrives, and Replace Frame Annotations (PUT, [] included) keeps it so; the
// frames not annotated are those not uploaded yet. A task's completedFrames
// counts its annotated frames, and the task is completed (status 2) when all
// totalFileCount frames have arrived, however many of them are empty;
// isDownloadEnable is true exactly then, when its annotations are final.
// Raising totalFileCount reopens a completed task, and deleting a frame's
// file takes the frame out of its tasks. A lake file may be a frame of tasks
// of several projects (one task per project), each project keeping its own
// boxes of it and each task its own frame state.
//
// A task may be cut into labelling jobs (job.go, jobstate.go, copies.go;
// docs/team.md "Jobs", "Review", "Comments"): runs of its frames handed to
// annotators and moved through review, after which the task's status follows
// them and its frames are written only by the people holding them; copy jobs
// keep independent answers of a share of the frames under operation
// "<projectId>/copy<k>"; comments are pinned to frames and shapes.
//
// The package owns the tables project, project_label, upload_session (which
// is also the task: one row, an upl_ and a tsk_ id), frame, label_job,
// job_frame, job_event and comment.
//
// Deleting a project deletes its labels, upload sessions with their tasks,
// and its frame records. Its frames are lake files: they stay in the lake,
// with their human boxes and in their sessions' collections, unless the
// delete asks for the files too; then the frames' files are deleted as the
// lake deletes files (dataset versions keep theirs) and the sessions'
// collections left empty go with them.
package annotate

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the package's numbered schema files, applied after the
// lake's (frames reference lake files) with db.Migrate(ctx, "annotate", ...).
var Migrations, _ = fs.Sub(migrations, "migrations")

// ContentType is what a project annotates.
type ContentType int

const (
	Video ContentType = 1 // frames of a video, uploaded as images in sequence
	Image ContentType = 2 // independent images
)

// TaskStatus is a task's annotation state.
type TaskStatus int

const (
	NotStarted TaskStatus = 0 // no frame has arrived (so none is annotated) yet
	InProgress TaskStatus = 1 // some frames are annotated, others are still to come
	Completed  TaskStatus = 2 // every frame arrived and is annotated (boxes or [] for none)
)

// Paging bounds of docs/spec/rest.md; a page size over the maximum is an error.
const (
	DefaultTaskPageSize     = 100
	MaxTaskPageSize         = 1000
	DefaultProjectPageSize  = 100
	MaxProjectPageSize      = 1000
	DefaultDownloadPageSize = 5
	MaxDownloadPageSize     = 50
	// MaxBoxesPerFrame bounds one frame's label data.
	MaxBoxesPerFrame = 10000
)

// Label is a class a project's boxes may carry, with what it declares
// (docs/shapes.md, "Declaring labels"): typed attributes, which its
// annotations' attributes must then match (none declared: any attributes),
// and, for a keypoints label, its point names, skeleton, flip pairs and
// sigmas as shape.Skeleton's JSON fields beside labelName (nil: none). A
// label name's skeleton is the same in every project declaring one.
type Label struct {
	Name        string          `json:"labelName"`
	Description string          `json:"labelDescription"`
	Attributes  []AttributeSpec `json:"attributes,omitempty"`
	*shape.Skeleton
}

// NewProject is what Create Project receives.
type NewProject struct {
	Name        string
	ContentType ContentType
	Labels      []Label
}

// Project is an annotation project.
type Project struct {
	ID          string      `json:"projectId"`
	Name        string      `json:"projectName"`
	ContentType ContentType `json:"contentType"`
	Labels      []Label     `json:"labels"`
	CreatedAt   time.Time   `json:"createdAt"`

	seq int64
}

func (p Project) hasLabel(name string) bool {
	_, ok := p.label(name)
	return ok
}

func (p Project) label(name string) (Label, bool) {
	for _, l := range p.Labels {
		if l.Name == name {
			return l, true
		}
	}
	return Label{}, false
}

func (p Project) labelNames() string {
	return strings.Join(p.labelList(), ", ")
}

func (p Project) labelList() []string {
	names := make([]string, len(p.Labels))
	for i, l := range p.Labels {
		names[i] = l.Name
	}
	return names
}

// Box is a frame's labelled rectangle in pixels, origin at the image's
// top-left corner, (X, Y) the box's top-left corner.
type Box struct {
	Label      string          `json:"label"`
	X          float64         `json:"x"`
	Y          float64         `json:"y"`
	Width      float64         `json:"width"`
	Height     float64         `json:"height"`
	Attributes json.RawMessage `json:"attributes,omitempty"` // a JSON object
	// Geometry makes the box another shape (docs/shapes.md): a polygon,
	// mask, keypoints, polyline or class, whose box the lake derives.
	shape.Geometry
}

// Session is an upload session.
type Session struct {
	ID             string // upl_...
	TaskID         string // tsk_...: the task that tracks the session
	ProjectID      string
	CollectionID   string
	CollectionName string
	TotalFileCount int
	Received       int // frames stored
	LastSequenceID int // highest sequence number received; -1 before the first
	CreatedAt      time.Time

	seq, projectSeq int64
}

// Complete reports whether every frame has arrived.
func (s Session) Complete() bool { return s.Received >= s.TotalFileCount }

// Frame is one frame offered to an upload session.
type Frame struct {
	Name string                        // file name, e.g. "frame-0001.jpg"
	Open func() (io.ReadCloser, error) // the image bytes
	// SequenceNo is the frame's index; nil means one past the last received.
	SequenceNo *int
	Boxes      []Box
}

// FrameResult is a stored (or re-sent) frame.
type FrameResult struct {
	UniqueName string `json:"uniqueName"`
	SequenceNo int    `json:"sequenceNo"`
	// Replaced is true when the sequence number had arrived before: the first
	// file was kept and only its boxes were replaced.
	Replaced bool   `json:"-"`
	TaskID   string `json:"-"`
	Version  int    `json:"-"` // the frame's version after the change
}

// Task tracks the annotation of one upload session; the JSON fields are those
// of docs/spec/interface.md 2.2, nothing more.
type Task struct {
	ID                    string      `json:"id"`
	FrameCount            int         `json:"frameCount"` // the session's totalFileCount
	Status                TaskStatus  `json:"status"`
	CompletedFrames       int         `json:"completedFrames"`
	CreatedAt             time.Time   `json:"createdAt"`
	UpdatedAt             time.Time   `json:"updatedAt"`
	CompletedAt           *time.Time  `json:"completedAt"`
	ProjectName           string      `json:"projectName"`
	Progress              float64     `json:"progress"` // completedFrames/frameCount in percent
	ContentType           ContentType `json:"contentType"`
	VideoResolutionWidth  int         `json:"videoResolutionWidth"`
	VideoResolutionHeight int         `json:"videoResolutionHeight"`
	VideoName             string      `json:"videoName"` // the collection name
	TaskName              string      `json:"taskName"`  // the name given to the task, else the collection name
	IsDownloadEnable      bool        `json:"isDownloadEnable"`
	DownLoadURL           string      `json:"downLoadUrl"`

	UploadID       string `json:"-"`
	ProjectID      string `json:"-"`
	UploadedFrames int    `json:"-"`
}

// ProjectQuery pages through the projects, oldest first.
type ProjectQuery struct {
	PageIndex int
	PageSize  int // 0: DefaultProjectPageSize
}

// ProjectSummary is a project in the project list: its labels, and its
// tasks' counts and progress summed over the project.
type ProjectSummary struct {
	Project
	TaskCount       int     `json:"taskCount"`
	FrameCount      int     `json:"frameCount"`      // the tasks' totalFileCount summed
	UploadedFrames  int     `json:"uploadedFrames"`  // frames received
	CompletedFrames int     `json:"completedFrames"` // frames annotated
	Progress        float64 `json:"progress"`        // completedFrames/frameCount in percent
	CompletedTasks  int     `json:"completedTasks"`
}

// TaskQuery pages through a project's tasks, oldest first.
type TaskQuery struct {
	ProjectID string
	PageIndex int
	PageSize  int // 0: DefaultTaskPageSize
}

// DownloadQuery pages through a project's annotations, a page of tasks at a time.
type DownloadQuery struct {
	ProjectID string
	TaskIDs   []string // only these tasks; all when empty
	Labels    []string // only boxes with these labels; all when empty
	PageIndex int
	PageSize  int // tasks per page; 0: DefaultDownloadPageSize
}

// Download is a page of Download Annotations, shaped as docs/spec/rest.md shows it.
type Download struct {
	PageIndex int          `json:"pageIndex"`
	PageSize  int          `json:"pageSize"`
	TaskCount int          `json:"taskCount"`
	MetaData  DownloadMeta `json:"metaData"`
	Data      []TaskFrames `json:"data"`
}

// DownloadMeta describes the project.
type DownloadMeta struct {
	ProjectID   string      `json:"projectId"`
	ProjectName string      `json:"projectName"`
	ContentType ContentType `json:"contentType"`
	Labels      []Label     `json:"labels"`
}

// TaskFrames are one task's frames in sequence order.
type TaskFrames struct {
	TaskID   string             `json:"taskId"`
	TaskName string             `json:"taskName"`
	Frames   []FrameAnnotations `json:"frames"`
}

// FrameAnnotations is a frame with its boxes.
type FrameAnnotations struct {
	FrameID    int    `json:"frameId"` // the sequence number
	UniqueName string `json:"uniqueName"`
	URL        string `json:"url"` // signed media URL
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	// Annotations is the JSON array of the frame's boxes, each an Annotation,
	// kept as the database built it: a page holds tens of thousands of boxes
	// and decoding them only to encode them again would double its time.
	Annotations json.RawMessage `json:"annotations"`
	// Shapes are the frame's other annotations (polygons, masks, keypoints,
	// polylines, classes), Annotation objects with their type and shape:
	// beside Annotations, so a client that knows only boxes reads the same.
	Shapes json.RawMessage `json:"shapes"`
}

// Annotation is a stored box, an element of FrameAnnotations.Annotations.
type Annotation struct {
	ID         string          `json:"id"`
	Label      string          `json:"label"`
	X          float64         `json:"x"`
	Y          float64         `json:"y"`
	Width      float64         `json:"width"`
	Height     float64         `json:"height"`
	Attributes json.RawMessage `json:"attributes"`
	Source     lake.Source     `json:"source"`
	shape.Geometry
}

// Options configure a Service.
type Options struct {
	// BaseURL prefixes the tasks' downLoadUrl, e.g. "http://127.0.0.1:8080".
	BaseURL string
}

// Service runs annotation projects over a lake. It is safe for concurrent use.
type Service struct {
	db   *sqlitedb.DB
	lake *lake.Lake
	opt  Options
	now  func() time.Time
}

// New returns the service on a migrated database and registers the lake
// delete hook that keeps sessions' counters right when frames' files are
// deleted; call it before serving requests.
func New(db *sqlitedb.DB, l *lake.Lake, opt Options) *Service {
	opt.BaseURL = strings.TrimRight(opt.BaseURL, "/")
	s := &Service{db: db, lake: l, opt: opt, now: time.Now}
	l.OnDelete(s.filesDeleted)
	return s
}

// errResend is returned inside the insert transaction when another upload
// stored the same sequence number first: the frame then gets the boxes only.
var errResend = errors.New("annotate: sequence number already received")

// errProbed rejects a re-sent frame's file after its probe, so the lake keeps
// only the first file of a sequence number.
var errProbed = errors.New("annotate: probed only")

func millis(t time.Time) int64      { return t.UnixMilli() }
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func optMillis(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMillis(v.Int64)
	return &t
}

// ctxTx is what the package's queries run on: the reader pool or a write tx.
type ctxTx interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// NewTask is a task made from lake images rather than uploaded: exactly one
// of UniqueNames (in that order), Query (the lake query language, in the
// order the files arrived) or CollectionID (its images by video_index, then
// arrival) names its frames. The task gets a collection of its own, named
// Name ("" for one made up), listing them.
type NewTask struct {
	Name         string
	UniqueNames  []string
	Query        string
	CollectionID string
	// StartFrom is where the frames' boxes come from: StartFromLake (the
	// default, "" too) or StartFromEmpty.
	StartFrom string
}

// Where a task made from lake images starts (NewTask.StartFrom).
//
// StartFromLake: the project takes over each frame's human boxes that carry
// one of its labels and belong to no annotation project (imported, uploaded
// or written through the API): the same boxes, their operation becomes the
// project's id. A frame that got boxes so is annotated from the start, with
// its box count; its edits replace them, as any of the project's boxes. So
// the lake keeps one set of human boxes per file (the project's), which
// queries, datasets and evaluation see as before, now under operation = the
// project id. Human boxes of another project, and boxes with a label the
// project does not have, stay where they are.
//
// StartFromEmpty: the frames start with no boxes and not annotated; the
// lake's human boxes stay with their operations, and the project's edits are
// a second set of human boxes beside them.
const (
	StartFromLake  = "lake"
	StartFromEmpty = "empty"
)

// MaxTaskFrames bounds the frames of a task made from lake images.
const MaxTaskFrames = 100000

// TaskChange is what an annotator changes on a task; nil fields stay.
type TaskChange struct {
	Name *string
	// Status 2 marks the task done (every frame must be annotated), 1
	// reopens it; 0 is not a state one moves a task to.
	Status *TaskStatus
}

// Workspace is what an annotator's page needs of a task: its project's
// labels and every frame in order with its state.
type Workspace struct {
	Task         Task          `json:"task"`
	ProjectID    string        `json:"projectId"`
	Labels       []Label       `json:"labels"`
	CollectionID string        `json:"collectionId"` // the task's frames, for model runs
	Frames       []FrameStatus `json:"frames"`
	Video        *VideoTask    `json:"video,omitempty"` // a task made from a lake video (videotask.go)
}

// FrameStatus is one frame of a task as its frame strip shows it.
type FrameStatus struct {
	SequenceNo int    `json:"sequenceNo"`
	UniqueName string `json:"uniqueName"`
	URL        string `json:"url"` // signed media URL
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	Annotated  bool   `json:"annotated"` // its labels were given ([] included)
	BoxCount   int    `json:"boxCount"`
	Version    int    `json:"version"`
	Frame      *int   `json:"frame,omitempty"` // a video task's: the frame number in the video uniqueName
}

// FrameState is one frame's human boxes in a project, at a version, and the
// model's boxes not yet accepted or rejected there.
type FrameState struct {
	TaskID      string          `json:"taskId"`
	SequenceNo  int             `json:"sequenceNo"`
	UniqueName  string          `json:"uniqueName"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	Annotated   bool            `json:"annotated"`
	Version     int             `json:"version"`
	Annotations json.RawMessage `json:"annotations"` // Annotation objects, human boxes of the project
	Suggestions []Suggestion    `json:"suggestions"`
}

// Suggestion is a machine box on a frame with one of the project's labels.
type Suggestion struct {
	ID         string  `json:"id"`
	Label      string  `json:"label"`
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
	Width      float64 `json:"width"`
	Height     float64 `json:"height"`
	Confidence float64 `json:"confidence"`
	Operation  string  `json:"operation"` // the model run
}

// Decision accepts (the boxes become the frame's human boxes) or rejects
// suggestions of a frame: those of IDs, or with MinConfidence every one at
// least that sure. Version, when not 0, is the frame's version the
// annotator decided on.
type Decision struct {
	Accept        bool
	IDs           []string
	MinConfidence *float64
	Version       int
}

// Conflict is an edit made on a frame's version that is no longer its own:
// nothing changed, and Current is the frame as it is (FailedPrecondition).
type Conflict struct {
	Err     *errs.Error
	Current FrameState
}

func (c *Conflict) Error() string { return c.Err.Error() }
func (c *Conflict) Unwrap() error { return c.Err }
