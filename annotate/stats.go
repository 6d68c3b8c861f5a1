package annotate

import (
	"context"
	"database/sql"
	"sort"
	"time"
)

// ReviewDay is what one person did in review, and what their work met
// there, on one day (UTC): jobs they accepted or rejected as reviewer; their
// jobs judged and rejected (the annotator of a verdict is who last
// submitted the job, else its assignee); comments on their jobs by others,
// and comments they resolved.
type ReviewDay struct {
	Who              string `json:"user"`
	Day              string `json:"day"`
	ReviewsDone      int    `json:"reviewsDone"`
	JobsReviewed     int    `json:"jobsReviewed"`
	JobsRejected     int    `json:"jobsRejected"`
	CommentsReceived int    `json:"commentsReceived"`
	CommentsResolved int    `json:"commentsResolved"`
}

// ReviewStats counts review verdicts and comments by person and day, in
// [from, to), of one project when projectID is not "", ordered by person
// then day.
func (s *Service) ReviewStats(ctx context.Context, from, to time.Time, projectID string) ([]ReviewDay, error) {
	days := map[[2]string]*ReviewDay{}
	day := func(who string, at int64) *ReviewDay {
		k := [2]string{who, time.UnixMilli(at).UTC().Format(time.DateOnly)}
		if days[k] == nil {
			days[k] = &ReviewDay{Who: who, Day: k[1]}
		}
		return days[k]
	}
	args := []any{millis(from), millis(to), projectID, projectID}
	// A verdict: a job moved to accepted or rejected.
	err := rowsEach(ctx, s.db.R, `SELECT e.who, e.at, e.to_state, coalesce((SELECT s.who FROM job_event s
		WHERE s.job_seq = e.job_seq AND s.kind = 'state' AND s.to_state = 'submitted' AND s.seq < e.seq
		ORDER BY s.seq DESC LIMIT 1), j.assignee) FROM job_event e JOIN label_job j ON j.seq = e.job_seq
		JOIN upload_session u ON u.seq = j.session_seq JOIN project p ON p.seq = u.project_seq
		WHERE e.kind = 'state' AND e.to_state IN ('accepted', 'rejected') AND e.at >= ? AND e.at < ?
		AND (? = '' OR p.id = ?)`, args, func(rows *sql.Rows) error {
		var who, verdict string
		var annotator sql.NullString
		var at int64
		if err := rows.Scan(&who, &at, &verdict, &annotator); err != nil {
			return err
		}
		day(who, at).ReviewsDone++
		if annotator.Valid {
			d := day(annotator.String, at)
			d.JobsReviewed++
			if verdict == string(JobRejected) {
				d.JobsRejected++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Comments received: on a job, by someone other than its annotator.
	err = rowsEach(ctx, s.db.R, `SELECT j.assignee, c.created_at FROM comment c JOIN label_job j ON j.seq = c.job_seq
		JOIN project p ON p.seq = c.project_seq WHERE j.assignee IS NOT NULL AND j.assignee <> c.author
		AND c.created_at >= ? AND c.created_at < ? AND (? = '' OR p.id = ?)`, args, func(rows *sql.Rows) error {
		var who string
		var at int64
		if err := rows.Scan(&who, &at); err != nil {
			return err
		}
		day(who, at).CommentsReceived++
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = rowsEach(ctx, s.db.R, `SELECT c.resolved_by, c.resolved_at FROM comment c JOIN project p ON p.seq = c.project_seq
		WHERE c.resolved_by IS NOT NULL AND c.resolved_at >= ? AND c.resolved_at < ? AND (? = '' OR p.id = ?)`, args,
		func(rows *sql.Rows) error {
			var who string
			var at int64
			if err := rows.Scan(&who, &at); err != nil {
				return err
			}
			day(who, at).CommentsResolved++
			return nil
		})
	if err != nil {
		return nil, err
	}
	out := make([]ReviewDay, 0, len(days))
	for _, d := range days {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Who != out[j].Who {
			return out[i].Who < out[j].Who
		}
		return out[i].Day < out[j].Day
	})
	return out, nil
}

// OverlapFrame is a frame of a project given to more than one annotator
// (docs/team.md "Jobs": copy jobs): its answers, the project's own first,
// each with who holds its job.
type OverlapFrame struct {
	UniqueName    string
	FileSeq       int64
	Width, Height int
	Answers       []Answer
	// Complete: every answer was saved at least once; frames still being
	// labelled are not measured.
	Complete bool
}

// Answer is one annotator's answer to a frame: the lake operation it is
// stored under and the job holder (the operation when the job has none).
type Answer struct {
	Operation string
	Annotator string
}

// OverlapFrames lists the frames of a project's tasks that are in copy
// jobs, in task and frame order.
func (s *Service) OverlapFrames(ctx context.Context, projectID string) ([]OverlapFrame, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var out []OverlapFrame
	at := map[[2]int64]int{} // (session, file) → index in out
	err = rowsEach(ctx, s.db.R, `SELECT f.session_seq, f.file_seq, f.unique_name, f.width, f.height, j.copy,
		j.assignee, CASE WHEN j.copy = 0 THEN f.annotated ELSE jf.annotated END
		FROM label_job j JOIN job_frame jf ON jf.job_seq = j.seq
		JOIN frame f ON f.session_seq = j.session_seq AND f.file_seq = jf.file_seq
		JOIN upload_session u ON u.seq = j.session_seq
		WHERE u.project_seq = ? AND EXISTS (SELECT 1 FROM job_frame cf JOIN label_job cj ON cj.seq = cf.job_seq
			WHERE cj.session_seq = j.session_seq AND cf.file_seq = jf.file_seq AND cj.copy > 0)
		ORDER BY f.session_seq, f.sequence_no, j.copy`, []any{p.seq}, func(rows *sql.Rows) error {
		var session, file int64
		var name string
		var width, height, copy int
		var assignee sql.NullString
		var annotated bool
		if err := rows.Scan(&session, &file, &name, &width, &height, &copy, &assignee, &annotated); err != nil {
			return err
		}
		i, ok := at[[2]int64{session, file}]
		if !ok {
			i = len(out)
			at[[2]int64{session, file}] = i
			out = append(out, OverlapFrame{UniqueName: name, FileSeq: file, Width: width, Height: height, Complete: true})
		}
		op := p.ID
		if copy > 0 {
			op = CopyOperation(p.ID, copy)
		}
		who := op
		if assignee.Valid {
			who = assignee.String
		}
		out[i].Answers = append(out[i].Answers, Answer{Operation: op, Annotator: who})
		out[i].Complete = out[i].Complete && annotated
		return nil
	})
	return out, err
}
