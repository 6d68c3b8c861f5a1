package annotate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// A task may be cut into labelling jobs (docs/team.md "Jobs"): runs of N of
// its frames in frame order, numbered 1..n within the task, each with an
// annotator (assignee) and a reviewer, moving through the JobState values.
// Once a task has jobs its status follows them and its frames are written
// only by the annotators holding them (see CheckFrameEdit).

// JobState is where a job is in its review.
type JobState string

const (
	JobAnnotation JobState = "annotation" // its annotator works on it
	JobSubmitted  JobState = "submitted"  // handed in, waiting for a reviewer
	JobInReview   JobState = "in_review"  // a reviewer is checking it
	JobAccepted   JobState = "accepted"   // final
	JobRejected   JobState = "rejected"   // back with its annotator, worked on like annotation
)

// JobStates are the states in their order.
var JobStates = []JobState{JobAnnotation, JobSubmitted, JobInReview, JobAccepted, JobRejected}

// editable reports whether the job's annotator may write its frames.
func (st JobState) editable() bool { return st == JobAnnotation || st == JobRejected }

// Member is who acts on a project's jobs: their user name and what the
// project lets them do (the web layer asks its access rules).
type Member struct {
	Name     string
	Annotate bool // may write the frames of the jobs they hold (and of tasks without jobs)
	Review   bool // may review (and comment on) the project's jobs
	Curate   bool // may cut, reassign and move jobs to any state
}

// JobPlan is how a task is cut into jobs.
type JobPlan struct {
	Size      int      // frames per job, 1..MaxJobSize
	Assignees []string // given the jobs round-robin; none: jobs wait for "next job"
	Replace   bool     // cut again a task that has jobs, while none has left annotation
	Overlap   *Overlap // independent copies of a share of the frames
	Seed      *uint64  // of the overlap's frame choice; nil: derived from the task id
}

// Overlap gives a seeded share of a task's frames to Annotators people
// independently: the frames stay in their jobs (copy 0) and are also cut
// into copy jobs 1..Annotators-1, whose answers are stored apart
// (CopyOperation) for agreement.
type Overlap struct {
	Share      float64 `json:"share"`      // of the task's frames, in (0, 1]
	Annotators int     `json:"annotators"` // people per overlapping frame, 2..MaxOverlapAnnotators
}

// Bounds of a JobPlan.
const (
	MaxJobSize           = 10000
	MaxOverlapAnnotators = 5
	maxUserName          = 64
)

// CopyOperation is the lake operation of copy k's answers in a project:
// "<projectId>/copy<k>". The project's own answer is operation = project id,
// which is all the lake query, exports and evaluation of the project read,
// so copies never leak into them.
func CopyOperation(projectID string, k int) string {
	return fmt.Sprintf("%s/copy%d", projectID, k)
}

// Job is a labelling job of a task with its counts; Frames and Events are
// filled when one job is asked for.
type Job struct {
	TaskID         string     `json:"taskId"`
	ProjectID      string     `json:"projectId"`
	Number         int        `json:"number"`
	Copy           int        `json:"copy"` // 0: the task's answer; k: the k-th independent copy
	State          JobState   `json:"state"`
	Assignee       *string    `json:"assignee"`
	Reviewer       *string    `json:"reviewer"`
	FrameCount     int        `json:"frameCount"`
	AnnotatedCount int        `json:"annotatedFrames"`
	AcceptedFrames int        `json:"acceptedFrames"`
	RejectedFrames int        `json:"rejectedFrames"`
	Comments       int        `json:"comments"`
	OpenComments   int        `json:"openComments"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	Frames         []JobFrame `json:"frames,omitempty"`
	Events         []JobEvent `json:"events,omitempty"`
	Video          *VideoTask `json:"video,omitempty"` // a video task's job: the video and the task's range

	seq, sessionSeq int64
}

// JobFrame is a frame of a job, with the answer the job writes.
// Its status fields are a workspace's (FrameStatus); in a copy job they are
// the copy's.
type JobFrame struct {
	FrameStatus
	Review *string `json:"review"` // "accepted", "rejected" or null
}

// JobEvent is one recorded change of a job.
type JobEvent struct {
	At     time.Time       `json:"at"`
	Who    string          `json:"who"`
	Kind   string          `json:"kind"` // created, assigned, state, review
	From   *string         `json:"from,omitempty"`
	To     *string         `json:"to,omitempty"`
	Note   string          `json:"note,omitempty"`
	Detail json.RawMessage `json:"detail,omitempty"`
}

// taskRef is a task's rows a job operation needs.
type taskRef struct {
	sessionSeq, projectSeq int64
	taskID, projectID      string
}

func loadTaskRef(ctx context.Context, q ctxTx, taskID string) (taskRef, error) {
	r := taskRef{taskID: taskID}
	err := q.QueryRowContext(ctx, `SELECT s.seq, s.project_seq, p.id FROM upload_session s JOIN project p
		ON p.seq = s.project_seq WHERE s.task_id = ?`, taskID).Scan(&r.sessionSeq, &r.projectSeq, &r.projectID)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errs.New(errs.NotFound, "taskId", "task %q not found", taskID)
	}
	return r, err
}

// TaskProject is the id of a task's project, for access checks.
func (s *Service) TaskProject(ctx context.Context, taskID string) (string, error) {
	r, err := loadTaskRef(ctx, s.db.Point, taskID)
	return r.projectID, err
}

// checkUserName refuses what cannot be a user name.
func checkUserName(field, name string) error {
	switch {
	case name == "":
		return errs.Invalid(field, "%s is empty: give a user name (null to leave it unset)", field)
	case len(name) > maxUserName:
		return errs.Invalid(field, "%s %q is longer than %d bytes", field, name, maxUserName)
	case strings.IndexFunc(name, unicode.IsControl) >= 0 || strings.TrimSpace(name) != name:
		return errs.Invalid(field, "%s %q has spaces at its ends or control characters", field, name)
	}
	return nil
}

func checkPlan(pl JobPlan) error {
	if pl.Size < 1 || pl.Size > MaxJobSize {
		return errs.Invalid("size", "size is the frames per job, 1 to %d, got %d", MaxJobSize, pl.Size)
	}
	seen := map[string]bool{}
	for _, a := range pl.Assignees {
		if err := checkUserName("assignees", a); err != nil {
			return err
		}
		if seen[a] {
			return errs.Invalid("assignees", "assignee %q is given twice", a)
		}
		seen[a] = true
	}
	if o := pl.Overlap; o != nil {
		if !(o.Share > 0 && o.Share <= 1) {
			return errs.Invalid("overlap", "overlap.share is the share of frames labelled twice or more, in (0, 1], got %v", o.Share)
		}
		if o.Annotators < 2 || o.Annotators > MaxOverlapAnnotators {
			return errs.Invalid("overlap", "overlap.annotators is 2 to %d people per frame, got %d", MaxOverlapAnnotators, o.Annotators)
		}
	}
	return nil
}

// planFrame is a task frame being cut into jobs: a lake file, or a frame
// of a video task's video (video).
type planFrame struct {
	fileSeq  int64
	position int
	frame    int
	video    bool
}

// key names the frame among a task's: its file, or its video frame.
func (f planFrame) key() int64 {
	if f.video {
		return -1 - int64(f.frame)
	}
	return f.fileSeq
}

// CreateJobs cuts a task into jobs (see JobPlan) and returns them. A task
// that has jobs is refused (AlreadyExists) unless the plan replaces them,
// which only works while every job is still in annotation and unstarted.
func (s *Service) CreateJobs(ctx context.Context, taskID string, pl JobPlan, by Member) ([]Job, error) {
	if err := checkPlan(pl); err != nil {
		return nil, err
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := loadTaskRef(ctx, tx, taskID)
		if err != nil {
			return err
		}
		if err := clearJobs(ctx, tx, r, pl.Replace); err != nil {
			return err
		}
		if v, ok, err := s.loadVideoTask(ctx, tx, r.sessionSeq); err != nil {
			return err
		} else if ok {
			if pl.Overlap != nil {
				return errs.Invalid("overlap", "task %s labels a video: independent copies (overlap) are made of image "+
					"tasks only", taskID)
			}
			return s.insertJobs(ctx, tx, r, pl, videoJobFrames(v), by)
		}
		var fr []planFrame
		if err := rowsEach(ctx, tx, `SELECT file_seq, sequence_no FROM frame WHERE session_seq = ? ORDER BY sequence_no`,
			[]any{r.sessionSeq}, func(rows *sql.Rows) error {
				var f planFrame
				err := rows.Scan(&f.fileSeq, &f.position)
				fr = append(fr, f)
				return err
			}); err != nil {
			return err
		}
		if len(fr) == 0 {
			return errs.New(errs.FailedPrecondition, "taskId", "task %s has no frames yet: upload them before cutting it into jobs", taskID)
		}
		return s.insertJobs(ctx, tx, r, pl, fr, by)
	})
	if err != nil {
		return nil, errs.Prefix(err, "create jobs")
	}
	return s.Jobs(ctx, taskID)
}

// clearJobs makes room for a new cut: none there, or replace while every job
// is untouched.
func clearJobs(ctx context.Context, tx *sql.Tx, r taskRef, replace bool) error {
	var n int
	var number sql.NullInt64
	var state sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM label_job WHERE session_seq = ?), number, state
		FROM (SELECT 1) LEFT JOIN (SELECT number, state FROM label_job WHERE session_seq = ? AND (state <> 'annotation'
		OR started = 1) ORDER BY number LIMIT 1)`, r.sessionSeq, r.sessionSeq).Scan(&n, &number, &state); err != nil {
		return err
	}
	switch {
	case n == 0:
		return nil
	case !replace:
		return errs.New(errs.AlreadyExists, "replace", "task %s already has %d jobs; send \"replace\": true to cut it "+
			"again (only while no job has left annotation)", r.taskID, n)
	case number.Valid:
		what := "is " + state.String
		if state.String == string(JobAnnotation) {
			what = "has been worked on"
		}
		return errs.New(errs.FailedPrecondition, "replace", "job %d of task %s %s: its jobs can no longer be cut again",
			number.Int64, r.taskID, what)
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM label_job WHERE session_seq = ?`, r.sessionSeq)
	return err
}

// insertJobs writes the jobs of a plan: the task's frames in runs of Size,
// then the overlap's copies, assignees round-robin (a copy skips people who
// already hold one of its frames).
func (s *Service) insertJobs(ctx context.Context, tx *sql.Tx, r taskRef, pl JobPlan, fr []planFrame, by Member) error {
	now := millis(s.now())
	insJob, err := tx.PrepareContext(ctx, `INSERT INTO label_job (session_seq, number, copy, assignee, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`)
	if err != nil {
		return err
	}
	defer insJob.Close()
	insFrame, err := tx.PrepareContext(ctx, `INSERT INTO job_frame (job_seq, file_seq, position) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insFrame.Close()
	insVideo, err := tx.PrepareContext(ctx, `INSERT INTO video_job_frame (job_seq, frame) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer insVideo.Close()
	insEvent, err := tx.PrepareContext(ctx, `INSERT INTO job_event (job_seq, at, who, kind, to_state, detail)
		VALUES (?, ?, ?, 'created', 'annotation', ?)`)
	if err != nil {
		return err
	}
	defer insEvent.Close()
	holders := map[int64][]string{} // file seq → people holding it in a job of this cut
	number, turn := 0, 0
	cut := func(frames []planFrame, copyNo int) error {
		for start := 0; start < len(frames); start += pl.Size {
			run := frames[start:min(start+pl.Size, len(frames))]
			number++
			var assignee sql.NullString
			for try := 0; try < len(pl.Assignees); try++ {
				a := pl.Assignees[(turn+try)%len(pl.Assignees)]
				if !holdsAny(holders, run, a) {
					assignee = sql.NullString{String: a, Valid: true}
					turn += try + 1
					break
				}
			}
			var jobSeq int64
			if err := insJob.QueryRowContext(ctx, r.sessionSeq, number, copyNo, assignee, now, now).Scan(&jobSeq); err != nil {
				return err
			}
			for _, f := range run {
				var err error
				if f.video {
					_, err = insVideo.ExecContext(ctx, jobSeq, f.frame)
				} else {
					_, err = insFrame.ExecContext(ctx, jobSeq, f.fileSeq, f.position)
				}
				if err != nil {
					return err
				}
				if assignee.Valid {
					holders[f.key()] = append(holders[f.key()], assignee.String)
				}
			}
			detail := jsonArray(map[string]any{"assignee": nullString(assignee), "frames": len(run), "copy": copyNo})
			if _, err := insEvent.ExecContext(ctx, jobSeq, now, by.Name, detail); err != nil {
				return err
			}
		}
		return nil
	}
	if err := cut(fr, 0); err != nil {
		return err
	}
	if pl.Overlap != nil {
		shared := overlapFrames(fr, pl.Overlap.Share, seedOf(pl.Seed, r.taskID))
		for k := 1; k < pl.Overlap.Annotators; k++ {
			if err := cut(shared, k); err != nil {
				return err
			}
		}
	}
	return refreshStatus(ctx, s, tx, r.sessionSeq)
}

func holdsAny(holders map[int64][]string, run []planFrame, name string) bool {
	for _, f := range run {
		if slices.Contains(holders[f.key()], name) {
			return true
		}
	}
	return false
}

func nullString(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

func seedOf(seed *uint64, taskID string) uint64 {
	if seed != nil {
		return *seed
	}
	h := fnv.New64a()
	h.Write([]byte(taskID))
	return h.Sum64()
}

// overlapFrames picks ceil(share × frames) of them with a seeded shuffle,
// kept in frame order.
func overlapFrames(fr []planFrame, share float64, seed uint64) []planFrame {
	n := int(math.Ceil(share * float64(len(fr))))
	idx := rand.New(rand.NewPCG(seed, 0x6a6f6273)).Perm(len(fr))[:n]
	slices.Sort(idx)
	out := make([]planFrame, n)
	for i, j := range idx {
		out[i] = fr[j]
	}
	return out
}

// Jobs lists a task's jobs by number, with their counts.
func (s *Service) Jobs(ctx context.Context, taskID string) ([]Job, error) {
	r, err := loadTaskRef(ctx, s.db.R, taskID)
	if err != nil {
		return nil, err
	}
	return s.loadJobs(ctx, s.db.R, r, "j.session_seq = ?", r.sessionSeq)
}

// A video task's job counts its video_job_frame rows; a frame of it is
// annotated when a track of the project lies on it (first to last keyframe).
var jobColumns = `j.seq, j.session_seq, j.number, j.copy, j.state, j.assignee, j.reviewer, j.created_at, j.updated_at,
	(SELECT count(*) FROM job_frame jf WHERE jf.job_seq = j.seq) + (SELECT count(*) FROM video_job_frame vf WHERE vf.job_seq = j.seq),
	(SELECT count(*) FROM job_frame jf JOIN frame f ON f.session_seq = j.session_seq AND f.file_seq = jf.file_seq
		WHERE jf.job_seq = j.seq AND CASE WHEN j.copy = 0 THEN f.annotated ELSE jf.annotated END = 1) +
	(SELECT count(*) FROM video_job_frame vf JOIN video_task vt ON vt.session_seq = j.session_seq WHERE vf.job_seq = j.seq
		AND ` + lake.TrackOnFrameSQL("vt.file_seq", `(SELECT p.id FROM upload_session s
			JOIN project p ON p.seq = s.project_seq WHERE s.seq = j.session_seq)`, "vf.frame") + `),
	(SELECT count(*) FROM job_frame jf WHERE jf.job_seq = j.seq AND jf.review = 'accepted') +
	(SELECT count(*) FROM video_job_frame vf WHERE vf.job_seq = j.seq AND vf.review = 'accepted'),
	(SELECT count(*) FROM job_frame jf WHERE jf.job_seq = j.seq AND jf.review = 'rejected') +
	(SELECT count(*) FROM video_job_frame vf WHERE vf.job_seq = j.seq AND vf.review = 'rejected'),
	(SELECT count(*) FROM comment c WHERE c.job_seq = j.seq),
	(SELECT count(*) FROM comment c WHERE c.job_seq = j.seq AND c.resolved_at IS NULL)`

func (s *Service) loadJobs(ctx context.Context, q ctxTx, r taskRef, where string, args ...any) ([]Job, error) {
	jobs := []Job{}
	err := rowsEach(ctx, q, `SELECT `+jobColumns+` FROM label_job j WHERE `+where+` ORDER BY j.number`, args, func(rows *sql.Rows) error {
		j, err := scanJob(rows)
		j.TaskID, j.ProjectID = r.taskID, r.projectID
		jobs = append(jobs, j)
		return err
	})
	return jobs, err
}

// scanJob reads jobColumns, then extra.
func scanJob(sc interface{ Scan(...any) error }, extra ...any) (Job, error) {
	var j Job
	var assignee, reviewer sql.NullString
	var created, updated int64
	err := sc.Scan(append([]any{&j.seq, &j.sessionSeq, &j.Number, &j.Copy, &j.State, &assignee, &reviewer, &created,
		&updated, &j.FrameCount, &j.AnnotatedCount, &j.AcceptedFrames, &j.RejectedFrames, &j.Comments, &j.OpenComments},
		extra...)...)
	j.Assignee, j.Reviewer = nullString(assignee), nullString(reviewer)
	j.CreatedAt, j.UpdatedAt = fromMillis(created), fromMillis(updated)
	return j, err
}

// Job returns one job of a task with its frames and its recorded events.
func (s *Service) Job(ctx context.Context, taskID string, number int) (Job, error) {
	r, err := loadTaskRef(ctx, s.db.R, taskID)
	if err != nil {
		return Job{}, err
	}
	js, err := s.loadJobs(ctx, s.db.R, r, "j.session_seq = ? AND j.number = ?", r.sessionSeq, number)
	if err != nil {
		return Job{}, err
	}
	if len(js) == 0 {
		return Job{}, errs.New(errs.NotFound, "number", "task %s has no job %d", taskID, number)
	}
	j := js[0]
	if v, ok, err := s.loadVideoTask(ctx, s.db.R, j.sessionSeq); err != nil {
		return Job{}, err
	} else if ok {
		j.Video = &v
		if j.Frames, err = s.videoJobFramesOf(ctx, v, r.projectID, j.seq); err != nil {
			return Job{}, err
		}
		j.Events, err = s.jobEvents(ctx, j.seq)
		return j, err
	}
	j.Frames = []JobFrame{}
	if err := rowsEach(ctx, s.db.R, `SELECT jf.position, f.unique_name, f.width, f.height,
		CASE WHEN ? = 0 THEN f.annotated ELSE jf.annotated END, CASE WHEN ? = 0 THEN f.box_count ELSE jf.box_count END,
		CASE WHEN ? = 0 THEN f.version ELSE jf.version END, jf.review FROM job_frame jf JOIN frame f
		ON f.session_seq = ? AND f.file_seq = jf.file_seq WHERE jf.job_seq = ? ORDER BY jf.position`,
		[]any{j.Copy, j.Copy, j.Copy, j.sessionSeq, j.seq}, func(rows *sql.Rows) error {
			var f JobFrame
			var review sql.NullString
			err := rows.Scan(&f.SequenceNo, &f.UniqueName, &f.Width, &f.Height, &f.Annotated, &f.BoxCount, &f.Version, &review)
			f.Review = nullString(review)
			f.URL = s.lake.URL(lake.File{UniqueName: f.UniqueName})
			j.Frames = append(j.Frames, f)
			return err
		}); err != nil {
		return Job{}, err
	}
	j.Events, err = s.jobEvents(ctx, j.seq)
	return j, err
}

func (s *Service) jobEvents(ctx context.Context, jobSeq int64) ([]JobEvent, error) {
	events := []JobEvent{}
	err := rowsEach(ctx, s.db.R, `SELECT at, who, kind, from_state, to_state, note, detail FROM job_event
		WHERE job_seq = ? ORDER BY seq`, []any{jobSeq}, func(rows *sql.Rows) error {
		var e JobEvent
		var at int64
		var from, to, detail sql.NullString
		err := rows.Scan(&at, &e.Who, &e.Kind, &from, &to, &e.Note, &detail)
		e.At, e.From, e.To = fromMillis(at), nullString(from), nullString(to)
		if detail.Valid {
			e.Detail = json.RawMessage(detail.String)
		}
		events = append(events, e)
		return err
	})
	return events, err
}

// rowsEach runs query with args and calls fn on each row.
func rowsEach(ctx context.Context, q ctxTx, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
