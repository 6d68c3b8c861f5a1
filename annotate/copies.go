package annotate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// Who writes a frame of a task cut into jobs (docs/team.md "Jobs"): the
// annotator holding a job with the frame while it is in annotation or
// rejected (a copy job's holder writes the copy's answer, operation
// CopyOperation), a reviewer of the job while it is in review, and curators.
// Frames of tasks without jobs are written as before.

// editTarget is the answer an edit of a frame writes.
type editTarget struct {
	jobSeq int64 // the job the edit is made in; 0: none (a task without jobs)
	copy   int   // 0: the project's answer; k: copy k
	number int
	// holder: made by the job's annotator, who writes only while it is
	// in annotation or rejected.
	holder bool
}

// frameJob is a job holding a frame.
type frameJob struct {
	seq                int64
	number, copy       int
	state              JobState
	assignee, reviewer sql.NullString
}

// frameJobs reads the jobs of the frame's task that hold it; hasJobs says
// whether the task has any job. A frame not in the project is NotFound.
func (s *Service) frameJobs(ctx context.Context, q ctxTx, p Project, uniqueName string) (jobs []frameJob, hasJobs bool, taskID string, err error) {
	var sessionSeq, fileSeq int64
	err = q.QueryRowContext(ctx, `SELECT f.session_seq, f.file_seq, s.task_id, EXISTS (SELECT 1 FROM label_job WHERE session_seq = f.session_seq)
		FROM frame f JOIN upload_session s ON s.seq = f.session_seq WHERE f.unique_name = ? AND s.project_seq = ?`,
		uniqueName, p.seq).Scan(&sessionSeq, &fileSeq, &taskID, &hasJobs)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, "", errs.NotFoundf("frame %q not found in project %s", uniqueName, p.ID)
	}
	if err != nil || !hasJobs {
		return nil, hasJobs, taskID, err
	}
	err = rowsEach(ctx, q, `SELECT j.seq, j.number, j.copy, j.state, j.assignee, j.reviewer FROM job_frame jf
		JOIN label_job j ON j.seq = jf.job_seq WHERE jf.file_seq = ? AND j.session_seq = ? ORDER BY j.copy, j.number`,
		[]any{fileSeq, sessionSeq}, func(rows *sql.Rows) error {
			var j frameJob
			err := rows.Scan(&j.seq, &j.number, &j.copy, &j.state, &j.assignee, &j.reviewer)
			jobs = append(jobs, j)
			return err
		})
	return jobs, true, taskID, err
}

// held is the job of jobs m holds, if any.
func held(jobs []frameJob, m Member) (frameJob, bool) {
	for _, j := range jobs {
		if j.assignee.Valid && j.assignee.String == m.Name {
			return j, true
		}
	}
	return frameJob{}, false
}

// editTarget decides whether m may write the frame, and which answer.
func (s *Service) editTarget(ctx context.Context, p Project, uniqueName string, m Member) (editTarget, error) {
	jobs, hasJobs, taskID, err := s.frameJobs(ctx, s.db.R, p, uniqueName)
	if err != nil {
		return editTarget{}, err
	}
	writer := m.Annotate || m.Curate
	if !hasJobs {
		if !writer {
			return editTarget{}, errs.New(errs.PermissionDenied, "uniqueName", "%s may not annotate project %s", m.Name, p.ID)
		}
		return editTarget{}, nil
	}
	if j, ok := held(jobs, m); ok && writer {
		if j.state.editable() || m.Curate && j.copy == 0 {
			return editTarget{jobSeq: j.seq, copy: j.copy, number: j.number, holder: !m.Curate}, nil
		}
		return editTarget{}, errs.New(errs.FailedPrecondition, "state", "frame %q is in your job %d of task %s, which is "+
			"%s: its frames are read-only to its annotator unless a reviewer rejects it", uniqueName, j.number, taskID, j.state)
	}
	var main *frameJob
	for i := range jobs {
		if jobs[i].copy == 0 {
			main = &jobs[i]
			break
		}
	}
	switch {
	case m.Curate:
		if main != nil {
			return editTarget{jobSeq: main.seq, number: main.number}, nil
		}
		return editTarget{}, nil
	case main == nil:
		return editTarget{}, errs.New(errs.PermissionDenied, "uniqueName", "frame %q of task %s is in no job; only a "+
			"curator edits it", uniqueName, taskID)
	case m.Review && main.state == JobInReview && (!main.reviewer.Valid || main.reviewer.String == m.Name):
		return editTarget{jobSeq: main.seq, number: main.number}, nil
	}
	holder := "no one"
	if main.assignee.Valid {
		holder = main.assignee.String
	}
	return editTarget{}, errs.New(errs.PermissionDenied, "uniqueName", "frame %q is in job %d of task %s, assigned to %s: "+
		"you edit only the frames of jobs assigned to you", uniqueName, main.number, taskID, holder)
}

// ReplaceFrameBoxesAs is ReplaceFrameBoxesAt made by m, under the jobs'
// rules: refused (PermissionDenied, or FailedPrecondition naming the job's
// state) when m may not write the frame now, and written to m's copy when
// the frame is in a copy job m holds.
func (s *Service) ReplaceFrameBoxesAs(ctx context.Context, projectID, uniqueName string, version int, boxes []Box, m Member) (FrameResult, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return FrameResult{}, err
	}
	if err := checkBoxes(p, boxes, 0, 0); err != nil {
		return FrameResult{}, err
	}
	t, err := s.editTarget(ctx, p, uniqueName, m)
	if err != nil {
		return FrameResult{}, err
	}
	if t.copy > 0 {
		res, err := s.writeCopy(ctx, p, t, uniqueName, version, boxes)
		return res, s.withCurrentCopy(ctx, p, t, uniqueName, err)
	}
	after := func(tx *sql.Tx, _ int64) error { return startJob(ctx, tx, t) }
	res, err := s.replaceBoxes(ctx, p, frameEdit{version: version, after: after}, "f.unique_name = ? AND s.project_seq = ?",
		uniqueName, p.seq)(boxes)
	return res, s.withCurrent(ctx, p, uniqueName, err)
}

// CheckFrameEdit refuses, as ReplaceFrameBoxesAs would, an edit m may not
// make; model suggestions are decided on the project's answer only, so a
// copy's holder decides none.
func (s *Service) CheckFrameEdit(ctx context.Context, projectID, uniqueName string, m Member) error {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return err
	}
	t, err := s.editTarget(ctx, p, uniqueName, m)
	if err == nil && t.copy > 0 {
		return errs.New(errs.FailedPrecondition, "uniqueName", "frame %q is in your copy job %d: an independent answer "+
			"takes no model suggestions", uniqueName, t.number)
	}
	return err
}

// startJob marks the edit's job started, in the edit's transaction, after
// checking the job did not leave the state the edit was allowed in.
func startJob(ctx context.Context, tx *sql.Tx, t editTarget) error {
	if t.jobSeq == 0 {
		return nil
	}
	var state JobState
	if err := tx.QueryRowContext(ctx, `SELECT state FROM label_job WHERE seq = ?`, t.jobSeq).Scan(&state); err != nil {
		return err
	}
	if t.holder && !state.editable() {
		return errs.New(errs.FailedPrecondition, "state", "job %d is %s: its frames are read-only to its annotator",
			t.number, state)
	}
	_, err := tx.ExecContext(ctx, `UPDATE label_job SET started = 1 WHERE seq = ?`, t.jobSeq)
	return err
}

// writeCopy replaces copy t.copy's answer on a frame: the lake's human
// annotations of CopyOperation, versioned by the job's frame row.
func (s *Service) writeCopy(ctx context.Context, p Project, t editTarget, uniqueName string, version int, boxes []Box) (FrameResult, error) {
	res := FrameResult{UniqueName: uniqueName, Replaced: true}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var sessionSeq, fileSeq int64
		var width, height, have int
		var state JobState
		if err := tx.QueryRowContext(ctx, `SELECT f.session_seq, f.sequence_no, f.file_seq, f.width, f.height, jf.version,
			s.task_id, j.state FROM job_frame jf JOIN label_job j ON j.seq = jf.job_seq JOIN frame f ON f.session_seq = j.session_seq
			AND f.file_seq = jf.file_seq JOIN upload_session s ON s.seq = f.session_seq WHERE jf.job_seq = ? AND f.unique_name = ?`,
			t.jobSeq, uniqueName).Scan(&sessionSeq, &res.SequenceNo, &fileSeq, &width, &height, &have, &res.TaskID,
			&state); err != nil {
			return err
		}
		if !state.editable() {
			return errs.New(errs.FailedPrecondition, "state", "job %d is %s: its frames are read-only to its annotator",
				t.number, state)
		}
		if version != 0 && version != have {
			return staleVersion{have: have, want: version}
		}
		if err := checkBoxes(p, boxes, width, height); err != nil {
			return err
		}
		if err := lake.ReplaceBoxes(ctx, tx, fileSeq, lake.Human, CopyOperation(p.ID, t.copy), 0, lakeBoxes(boxes)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE job_frame SET version = version + 1, annotated = 1, box_count = ?
			WHERE job_seq = ? AND file_seq = ?`, len(boxes), t.jobSeq, fileSeq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE label_job SET started = 1, updated_at = ? WHERE seq = ?`, millis(s.now()), t.jobSeq); err != nil {
			return err
		}
		res.Version = have + 1
		return refreshStatus(ctx, s, tx, sessionSeq)
	})
	return res, err
}

// withCurrentCopy turns a stale copy edit into a *Conflict with the copy's
// answer as it is.
func (s *Service) withCurrentCopy(ctx context.Context, p Project, t editTarget, uniqueName string, err error) error {
	var stale staleVersion
	if !errors.As(err, &stale) {
		return err
	}
	cur, ferr := s.copyState(ctx, p, t, uniqueName)
	if ferr != nil {
		return ferr
	}
	return &Conflict{Err: errs.New(errs.FailedPrecondition, "version", "%s; its current boxes are in current", stale.Error()),
		Current: cur}
}

// FrameStateAs is FrameState as m sees it: a copy job's holder sees their
// own answer (without model suggestions), everyone else the project's.
func (s *Service) FrameStateAs(ctx context.Context, projectID, uniqueName string, m Member) (FrameState, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return FrameState{}, err
	}
	jobs, _, _, err := s.frameJobs(ctx, s.db.R, p, uniqueName)
	if err != nil {
		return FrameState{}, err
	}
	if j, ok := held(jobs, m); ok && j.copy > 0 {
		return s.copyState(ctx, p, editTarget{jobSeq: j.seq, copy: j.copy, number: j.number}, uniqueName)
	}
	return s.frameState(ctx, p, uniqueName)
}

// copyState is a frame's answer in copy job t.
func (s *Service) copyState(ctx context.Context, p Project, t editTarget, uniqueName string) (FrameState, error) {
	st := FrameState{UniqueName: uniqueName, Annotations: json.RawMessage("[]"), Suggestions: []Suggestion{}}
	var fileSeq int64
	if err := s.db.R.QueryRowContext(ctx, `SELECT s.task_id, f.sequence_no, f.file_seq, f.width, f.height, jf.annotated,
		jf.version FROM job_frame jf JOIN label_job j ON j.seq = jf.job_seq JOIN frame f ON f.session_seq = j.session_seq
		AND f.file_seq = jf.file_seq JOIN upload_session s ON s.seq = f.session_seq WHERE jf.job_seq = ? AND f.unique_name = ?`,
		t.jobSeq, uniqueName).Scan(&st.TaskID, &st.SequenceNo, &fileSeq, &st.Width, &st.Height, &st.Annotated,
		&st.Version); err != nil {
		return FrameState{}, err
	}
	boxes, err := s.lake.BoxesJSON(ctx, lake.BoxQuery{FileSeqs: []int64{fileSeq}, Sources: []lake.Source{lake.Human},
		Operations: []string{CopyOperation(p.ID, t.copy)}})
	if err != nil {
		return FrameState{}, err
	}
	if arr, ok := boxes[fileSeq]; ok {
		st.Annotations = arr
	}
	return st, nil
}
