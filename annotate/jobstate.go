package annotate

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/framelake/framelake/errs"
)

// transitions are the moves people other than curators make, and who makes
// them: the job's annotator hands it in, a reviewer of the project takes it
// and decides. A curator may move a job from any state to any other.
var transitions = map[JobState]map[JobState]string{
	JobAnnotation: {JobSubmitted: "assignee"},
	JobRejected:   {JobSubmitted: "assignee"},
	JobSubmitted:  {JobInReview: "reviewer"},
	JobInReview:   {JobAccepted: "reviewer", JobRejected: "reviewer"},
}

// StateChange moves a job and records the reviewer's verdict per frame
// (unique name → "accepted" or "rejected"); either may be left out.
type StateChange struct {
	State  JobState
	Note   string
	Frames map[string]string
}

// MaxNote bounds a state change's note and a comment's text.
const MaxNote = 4000

// jobRow is a job's state as a change reads it in its transaction.
type jobRow struct {
	seq, sessionSeq    int64
	number, copy       int
	state              JobState
	assignee, reviewer sql.NullString
}

func loadJobRow(ctx context.Context, q ctxTx, r taskRef, number int) (jobRow, error) {
	j := jobRow{sessionSeq: r.sessionSeq, number: number}
	err := q.QueryRowContext(ctx, `SELECT seq, copy, state, assignee, reviewer FROM label_job WHERE session_seq = ? AND number = ?`,
		r.sessionSeq, number).Scan(&j.seq, &j.copy, &j.state, &j.assignee, &j.reviewer)
	if errors.Is(err, sql.ErrNoRows) {
		return j, errs.New(errs.NotFound, "number", "task %s has no job %d", r.taskID, number)
	}
	return j, err
}

// SetJobState moves a job (see transitions) and records frame verdicts, in
// one transaction with its events; wrong moves are FailedPrecondition naming
// the job's state, moves by the wrong person PermissionDenied.
func (s *Service) SetJobState(ctx context.Context, taskID string, number int, ch StateChange, m Member) (Job, error) {
	if ch.State == "" && len(ch.Frames) == 0 {
		return Job{}, errs.Invalid("state", "give a state (%s) or frames' verdicts", joinStates(JobStates))
	}
	if ch.State != "" && !slices.Contains(JobStates, ch.State) {
		return Job{}, errs.Invalid("state", "state is one of %s, got %q", joinStates(JobStates), ch.State)
	}
	if len(ch.Note) > MaxNote {
		return Job{}, errs.Invalid("note", "note is longer than %d bytes", MaxNote)
	}
	for name, v := range ch.Frames {
		if v != string(JobAccepted) && v != string(JobRejected) {
			return Job{}, errs.Invalid("frames", "frame %q: a verdict is accepted or rejected, got %q", name, v)
		}
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := loadTaskRef(ctx, tx, taskID)
		if err != nil {
			return err
		}
		j, err := loadJobRow(ctx, tx, r, number)
		if err != nil {
			return err
		}
		after := j.state
		if ch.State != "" {
			if err := checkMove(ctx, tx, j, ch.State, m); err != nil {
				return err
			}
			after = ch.State
		}
		now := millis(s.now())
		if ch.State != "" {
			// The first reviewer to take a job is its reviewer from then on.
			if _, err := tx.ExecContext(ctx, `UPDATE label_job SET state = ?, updated_at = ?, reviewer = CASE WHEN ? = 'in_review'
				THEN coalesce(reviewer, ?) ELSE reviewer END WHERE seq = ?`, ch.State, now, ch.State, m.Name, j.seq); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO job_event (job_seq, at, who, kind, from_state, to_state, note)
				VALUES (?, ?, ?, 'state', ?, ?, ?)`, j.seq, now, m.Name, j.state, ch.State, ch.Note); err != nil {
				return err
			}
		}
		if len(ch.Frames) > 0 {
			if err := reviewFrames(ctx, tx, j, after, ch, m, now); err != nil {
				return err
			}
		}
		return refreshStatus(ctx, s, tx, r.sessionSeq)
	})
	if err != nil {
		return Job{}, err
	}
	return s.Job(ctx, taskID, number)
}

// checkMove decides whether m may move job j to state to.
func checkMove(ctx context.Context, tx *sql.Tx, j jobRow, to JobState, m Member) error {
	if to == j.state {
		return errs.New(errs.FailedPrecondition, "state", "job %d is already %s", j.number, j.state)
	}
	if m.Curate {
		return nil
	}
	who, ok := transitions[j.state][to]
	if !ok {
		return errs.New(errs.FailedPrecondition, "state", "job %d is %s: %s", j.number, j.state, nextMoves(j.state))
	}
	switch who {
	case "assignee":
		if !j.assignee.Valid || j.assignee.String != m.Name {
			holder := "no one"
			if j.assignee.Valid {
				holder = j.assignee.String
			}
			return errs.New(errs.PermissionDenied, "state", "job %d is assigned to %s: only its annotator (or a curator) "+
				"submits it", j.number, holder)
		}
		var open int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM job_frame jf JOIN frame f ON f.session_seq = ?
			AND f.file_seq = jf.file_seq WHERE jf.job_seq = ? AND CASE WHEN ? = 0 THEN f.annotated ELSE jf.annotated END = 0`,
			j.sessionSeq, j.seq, j.copy).Scan(&open); err != nil {
			return err
		}
		if open > 0 {
			return errs.New(errs.FailedPrecondition, "state", "job %d has %s not annotated yet; annotate them (\"no "+
				"objects\" for an empty one) before submitting", j.number, frames(open))
		}
	case "reviewer":
		if !m.Review {
			return errs.New(errs.PermissionDenied, "state", "moving job %d to %s needs a reviewer of the project", j.number, to)
		}
		if j.reviewer.Valid && j.reviewer.String != m.Name {
			return errs.New(errs.PermissionDenied, "state", "job %d is reviewed by %s; a curator can reassign its reviewer",
				j.number, j.reviewer.String)
		}
	}
	return nil
}

// nextMoves says where a job in state st can go, and who moves it.
func nextMoves(st JobState) string {
	next := transitions[st]
	if len(next) == 0 {
		return "only a curator moves it now"
	}
	var parts []string
	for to, who := range next {
		parts = append(parts, fmt.Sprintf("%s (by its %s)", to, who))
	}
	slices.Sort(parts)
	return "it can go to " + strings.Join(parts, " or ")
}

func joinStates(sts []JobState) string {
	parts := make([]string, len(sts))
	for i, st := range sts {
		parts[i] = string(st)
	}
	return strings.Join(parts, ", ")
}

// reviewFrames records a reviewer's verdicts on frames of job j, whose state
// is after once the change is made.
func reviewFrames(ctx context.Context, tx *sql.Tx, j jobRow, after JobState, ch StateChange, m Member, now int64) error {
	if !m.Review && !m.Curate {
		return errs.New(errs.PermissionDenied, "frames", "judging frames of job %d needs a reviewer of the project", j.number)
	}
	if after != JobInReview && after != JobAccepted && after != JobRejected {
		return errs.New(errs.FailedPrecondition, "frames", "job %d is %s: frames are judged while it is in_review", j.number, after)
	}
	names := make([]string, 0, len(ch.Frames))
	for name := range ch.Frames {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		res, err := tx.ExecContext(ctx, `UPDATE job_frame SET review = ? WHERE job_seq = ? AND file_seq IN
			(SELECT file_seq FROM frame WHERE session_seq = ? AND unique_name = ?)`, ch.Frames[name], j.seq, j.sessionSeq, name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// A video job's frames are named by their number in the video.
			ok, err := reviewVideoFrame(ctx, tx, j, name, ch.Frames[name])
			if err != nil {
				return err
			}
			if ok {
				continue
			}
			return errs.New(errs.NotFound, "frames", "%q is not a frame of job %d", name, j.number)
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO job_event (job_seq, at, who, kind, to_state, note, detail)
		VALUES (?, ?, ?, 'review', ?, ?, ?)`, j.seq, now, m.Name, after, ch.Note, jsonArray(map[string]any{"frames": ch.Frames}))
	return err
}

// jobsStatus is the task status its jobs imply (docs/team.md "Jobs"):
// completed when every job is accepted, in progress once any has started
// (left annotation or had a frame saved), else not started; ok is false for
// a task without jobs.
func jobsStatus(ctx context.Context, tx *sql.Tx, sessionSeq int64) (st TaskStatus, ok bool, err error) {
	var n, accepted, started int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(state = 'accepted'), 0),
		coalesce(sum(state <> 'annotation' OR started = 1), 0) FROM label_job WHERE session_seq = ?`, sessionSeq).Scan(&n,
		&accepted, &started); err != nil || n == 0 {
		return 0, false, err
	}
	switch {
	case accepted == n:
		return Completed, true, nil
	case started > 0:
		return InProgress, true, nil
	}
	return NotStarted, true, nil
}

// refreshStatus saves a task's counters again, so its status follows its jobs.
func refreshStatus(ctx context.Context, s *Service, tx *sql.Tx, sessionSeq int64) error {
	c, err := loadCounters(ctx, tx, sessionSeq)
	if err != nil {
		return err
	}
	return s.saveCounters(ctx, tx, c)
}

// Opt is a field a change may set, clear (Name nil) or leave (Set false).
type Opt struct {
	Set  bool
	Name *string
}

// JobChange reassigns a job's annotator or reviewer.
type JobChange struct {
	Assignee, Reviewer Opt
}

// UpdateJob reassigns a job (curators). Nobody annotates the same frame in
// two jobs (a copy is another person's answer): an assignee who holds one of
// the job's frames in another job is FailedPrecondition.
func (s *Service) UpdateJob(ctx context.Context, taskID string, number int, ch JobChange, by Member) (Job, error) {
	for field, o := range map[string]Opt{"assignee": ch.Assignee, "reviewer": ch.Reviewer} {
		if o.Set && o.Name != nil {
			if err := checkUserName(field, *o.Name); err != nil {
				return Job{}, err
			}
		}
	}
	if !ch.Assignee.Set && !ch.Reviewer.Set {
		return Job{}, errs.Invalid("assignee", "give assignee or reviewer (null to unset)")
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		r, err := loadTaskRef(ctx, tx, taskID)
		if err != nil {
			return err
		}
		j, err := loadJobRow(ctx, tx, r, number)
		if err != nil {
			return err
		}
		detail := map[string]any{}
		now := millis(s.now())
		if o := ch.Assignee; o.Set {
			if o.Name != nil {
				if other, ok, err := heldElsewhere(ctx, tx, j, *o.Name); err != nil {
					return err
				} else if ok {
					return errs.New(errs.FailedPrecondition, "assignee", "%s already holds frames of job %d in job %d; "+
						"a frame's copies go to different people", *o.Name, number, other)
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE label_job SET assignee = ?, updated_at = ? WHERE seq = ?`, o.Name, now, j.seq); err != nil {
				return err
			}
			detail["assignee"] = o.Name
		}
		if o := ch.Reviewer; o.Set {
			if _, err := tx.ExecContext(ctx, `UPDATE label_job SET reviewer = ?, updated_at = ? WHERE seq = ?`, o.Name, now, j.seq); err != nil {
				return err
			}
			detail["reviewer"] = o.Name
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO job_event (job_seq, at, who, kind, detail) VALUES (?, ?, ?, 'assigned', ?)`,
			j.seq, now, by.Name, jsonArray(detail))
		return err
	})
	if err != nil {
		return Job{}, err
	}
	return s.Job(ctx, taskID, number)
}

// heldElsewhere finds another job of j's task, held by name, that shares a
// frame with j.
func heldElsewhere(ctx context.Context, tx *sql.Tx, j jobRow, name string) (int, bool, error) {
	var other int
	err := tx.QueryRowContext(ctx, `SELECT o.number FROM job_frame a JOIN job_frame b ON b.file_seq = a.file_seq
		JOIN label_job o ON o.seq = b.job_seq WHERE a.job_seq = ? AND o.seq <> ? AND o.session_seq = ? AND o.assignee = ?
		LIMIT 1`, j.seq, j.seq, j.sessionSeq, name).Scan(&other)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return other, err == nil, err
}

// NextJob hands name the next unassigned job of the project (pull mode):
// the oldest task's lowest-numbered job still in annotation with no
// assignee, skipping copies of frames name already holds. It runs in one
// write transaction, so concurrent callers never get the same job; none
// left is NotFound.
func (s *Service) NextJob(ctx context.Context, projectID, name string) (Job, error) {
	if err := checkUserName("user", name); err != nil {
		return Job{}, err
	}
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return Job{}, err
	}
	var taskID string
	var number int
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT j.seq, j.number, s.task_id FROM label_job j JOIN upload_session s
			ON s.seq = j.session_seq WHERE s.project_seq = ? AND j.state = 'annotation' AND j.assignee IS NULL
			AND NOT EXISTS (SELECT 1 FROM job_frame a JOIN job_frame b ON b.file_seq = a.file_seq JOIN label_job o
				ON o.seq = b.job_seq WHERE a.job_seq = j.seq AND o.session_seq = j.session_seq AND o.assignee = ?)
			ORDER BY s.seq, j.number LIMIT 1`, p.seq, name).Scan(&seq, &number, &taskID)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.NotFoundf("project %s has no unassigned job left for %s", p.ID, name)
		}
		if err != nil {
			return err
		}
		now := millis(s.now())
		if _, err := tx.ExecContext(ctx, `UPDATE label_job SET assignee = ?, updated_at = ? WHERE seq = ?`, name, now, seq); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO job_event (job_seq, at, who, kind, note, detail)
			VALUES (?, ?, ?, 'assigned', 'next job', ?)`, seq, now, name, jsonArray(map[string]any{"assignee": name}))
		return err
	})
	if err != nil {
		return Job{}, err
	}
	return s.Job(ctx, taskID, number)
}

// QueueItem is a job in a person's queue, with what they do next.
type QueueItem struct {
	Job
	TaskName    string `json:"taskName"`
	ProjectName string `json:"projectName"`
	Role        string `json:"role"`   // annotator or reviewer
	Action      string `json:"action"` // fix, review, annotate, wait
}

// queueOrder ranks actions: work sent back first, then reviews under way,
// then new work, then jobs to take for review, then jobs waiting on others.
var queueOrder = map[string]int{"fix": 0, "continue review": 1, "annotate": 2, "review": 3, "wait": 4}

// Queue lists name's jobs: those they annotate (not yet accepted) and those
// they review or, in projects where canReview says they may, that wait for
// any reviewer; what to do next first.
func (s *Service) Queue(ctx context.Context, name string, canReview func(projectID string) bool) ([]QueueItem, error) {
	var all []QueueItem
	err := rowsEach(ctx, s.db.R, `SELECT `+jobColumns+`, s.task_id, p.id, coalesce(s.name, s.collection_name), p.name
		FROM label_job j JOIN upload_session s ON s.seq = j.session_seq JOIN project p ON p.seq = s.project_seq
		WHERE (j.assignee = ?1 AND j.state <> 'accepted') OR (j.state IN ('submitted', 'in_review')
			AND (j.reviewer = ?1 OR j.reviewer IS NULL)) ORDER BY s.seq, j.number`, []any{name}, func(rows *sql.Rows) error {
		var it QueueItem
		var taskID, projectID string
		var err error
		it.Job, err = scanJob(rows, &taskID, &projectID, &it.TaskName, &it.ProjectName)
		it.TaskID, it.ProjectID = taskID, projectID
		all = append(all, it)
		return err
	})
	if err != nil {
		return nil, err
	}
	// canReview is asked once the rows are closed: it may read too.
	items := []QueueItem{}
	for _, it := range all {
		mine := it.Assignee != nil && *it.Assignee == name
		reviews := it.Reviewer != nil && *it.Reviewer == name
		switch {
		case mine && it.State == JobRejected:
			it.Role, it.Action = "annotator", "fix"
		case mine && it.State == JobAnnotation:
			it.Role, it.Action = "annotator", "annotate"
		case reviews && it.State == JobInReview:
			it.Role, it.Action = "reviewer", "continue review"
		case it.State == JobSubmitted && (reviews || it.Reviewer == nil && !mine && canReview(it.ProjectID)):
			it.Role, it.Action = "reviewer", "review"
		case mine:
			it.Role, it.Action = "annotator", "wait"
		default:
			continue
		}
		items = append(items, it)
	}
	slices.SortStableFunc(items, func(a, b QueueItem) int { return cmp.Compare(queueOrder[a.Action], queueOrder[b.Action]) })
	return items, nil
}
