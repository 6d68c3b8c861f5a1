package annotate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake"
)

// Comments are pinned to a frame of a project (docs/team.md "Comments"), or
// to one of its shapes, and to a video frame; they belong to the job that
// holds the frame, so its annotator sees them, and are resolved by the job's
// annotator or a reviewer.

// NewComment is what a comment is made of.
type NewComment struct {
	Text    string
	ShapeID string // an annotation id of the frame's shapes in the project (or a copy); "" for the frame
	Frame   *int   // a video file's frame
	Job     *int   // the job's number in the frame's task; nil: the task's job holding the frame, if any
}

// CommentShape is the shape a comment was pinned to, as it was then: a save
// gives shapes new ids, so the box lets a page place the pin afterwards.
type CommentShape struct {
	Label  string  `json:"label"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Comment is a comment with who wrote and who resolved it, and when.
type Comment struct {
	ID         string        `json:"id"`
	ProjectID  string        `json:"projectId"`
	UniqueName string        `json:"uniqueName"`
	TaskID     string        `json:"taskId"`
	Job        *int          `json:"job"` // its number in the task
	ShapeID    *string       `json:"shapeId"`
	Shape      *CommentShape `json:"shape"`
	Frame      *int          `json:"frame"`
	Text       string        `json:"text"`
	Author     string        `json:"author"`
	CreatedAt  time.Time     `json:"createdAt"`
	Resolved   bool          `json:"resolved"`
	ResolvedBy *string       `json:"resolvedBy"`
	ResolvedAt *time.Time    `json:"resolvedAt"`
}

const commentColumns = `c.id, p.id, c.unique_name, coalesce(s.task_id, ''), j.number, c.shape_id, c.shape, c.frame, c.text,
	c.author, c.created_at, c.resolved_by, c.resolved_at`

const commentFrom = ` FROM comment c JOIN project p ON p.seq = c.project_seq LEFT JOIN label_job j ON j.seq = c.job_seq
	LEFT JOIN upload_session s ON s.seq = coalesce((SELECT f.session_seq FROM frame f JOIN upload_session fs
		ON fs.seq = f.session_seq WHERE f.file_seq = c.file_seq AND fs.project_seq = c.project_seq LIMIT 1),
		(SELECT v.session_seq FROM video_task v JOIN upload_session vs ON vs.seq = v.session_seq WHERE v.file_seq = c.file_seq
			AND vs.project_seq = c.project_seq AND c.frame BETWEEN v.first_frame AND v.last_frame LIMIT 1))`

func scanComment(sc interface{ Scan(...any) error }) (Comment, error) {
	var c Comment
	var job, frame, resolvedAt sql.NullInt64
	var shapeID, shape, resolvedBy sql.NullString
	var created int64
	if err := sc.Scan(&c.ID, &c.ProjectID, &c.UniqueName, &c.TaskID, &job, &shapeID, &shape, &frame, &c.Text, &c.Author,
		&created, &resolvedBy, &resolvedAt); err != nil {
		return Comment{}, err
	}
	if job.Valid {
		n := int(job.Int64)
		c.Job = &n
	}
	if frame.Valid {
		n := int(frame.Int64)
		c.Frame = &n
	}
	c.ShapeID, c.ResolvedBy = nullString(shapeID), nullString(resolvedBy)
	if shape.Valid {
		c.Shape = &CommentShape{}
		if err := json.Unmarshal([]byte(shape.String), c.Shape); err != nil {
			return Comment{}, err
		}
	}
	c.CreatedAt, c.ResolvedAt = fromMillis(created), optMillis(resolvedAt)
	c.Resolved = c.ResolvedAt != nil
	return c, nil
}

// AddComment pins a comment by author to a frame of the project.
func (s *Service) AddComment(ctx context.Context, projectID, uniqueName string, nc NewComment, author string) (Comment, error) {
	nc.Text = strings.TrimSpace(nc.Text)
	switch {
	case nc.Text == "":
		return Comment{}, errs.Invalid("text", "text is empty")
	case len(nc.Text) > MaxNote:
		return Comment{}, errs.Invalid("text", "text is longer than %d bytes", MaxNote)
	case nc.Frame != nil && *nc.Frame < 0:
		return Comment{}, errs.Invalid("frame", "frame is a video frame's index, at least 0, got %d", *nc.Frame)
	}
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return Comment{}, err
	}
	var sessionSeq, fileSeq int64
	var jobSeq any
	err = s.db.R.QueryRowContext(ctx, `SELECT f.session_seq, f.file_seq FROM frame f JOIN upload_session s
		ON s.seq = f.session_seq WHERE f.unique_name = ? AND s.project_seq = ?`, uniqueName, p.seq).Scan(&sessionSeq, &fileSeq)
	if errors.Is(err, sql.ErrNoRows) { // a video of a video task: frame says where
		fileSeq, jobSeq, err = s.videoCommentJob(ctx, p, uniqueName, nc.Frame, nc.Job)
	} else if err == nil {
		jobSeq, err = s.commentJob(ctx, sessionSeq, fileSeq, uniqueName, nc.Job)
	}
	if err != nil {
		return Comment{}, err
	}
	var shape any
	if nc.ShapeID != "" {
		sh, err := s.commentShape(ctx, p, fileSeq, nc.ShapeID)
		if err != nil {
			return Comment{}, err
		}
		shape = jsonArray(sh)
	}
	cid := id.New("cmt")
	var shapeID any
	if nc.ShapeID != "" {
		shapeID = nc.ShapeID
	}
	if err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO comment (id, project_seq, file_seq, unique_name, job_seq, shape_id, shape,
			frame, text, author, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, cid, p.seq, fileSeq, uniqueName,
			jobSeq, shapeID, shape, nc.Frame, nc.Text, author, millis(s.now()))
		return err
	}); err != nil {
		return Comment{}, err
	}
	return s.comment(ctx, cid)
}

// commentJob is the job a comment on a frame belongs to: the number given,
// which must hold the frame, else the task's copy-0 job holding it (nil when
// the task has no jobs).
func (s *Service) commentJob(ctx context.Context, sessionSeq, fileSeq int64, uniqueName string, number *int) (any, error) {
	q := `SELECT j.seq FROM label_job j JOIN job_frame jf ON jf.job_seq = j.seq WHERE j.session_seq = ? AND jf.file_seq = ?`
	args := []any{sessionSeq, fileSeq}
	if number != nil {
		q += ` AND j.number = ?`
		args = append(args, *number)
	} else {
		q += ` AND j.copy = 0`
	}
	var seq int64
	err := s.db.R.QueryRowContext(ctx, q+` LIMIT 1`, args...).Scan(&seq)
	switch {
	case errors.Is(err, sql.ErrNoRows) && number != nil:
		return nil, errs.New(errs.NotFound, "job", "job %d of the frame's task does not hold frame %q", *number, uniqueName)
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return seq, nil
}

// commentShape finds the shape a comment is pinned to among the frame's
// human shapes of the project and its copies.
func (s *Service) commentShape(ctx context.Context, p Project, fileSeq int64, shapeID string) (CommentShape, error) {
	ops := []string{p.ID}
	for k := 1; k < MaxOverlapAnnotators; k++ {
		ops = append(ops, CopyOperation(p.ID, k))
	}
	boxes, err := s.lake.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{fileSeq}, Sources: []lake.Source{lake.Human}, Operations: ops})
	if err != nil {
		return CommentShape{}, err
	}
	for _, b := range boxes {
		if b.ID == shapeID {
			return CommentShape{Label: b.Label, X: b.X, Y: b.Y, Width: b.W, Height: b.H}, nil
		}
	}
	return CommentShape{}, errs.New(errs.NotFound, "shapeId", "shape %q is not a shape of this frame in project %s "+
		"(shape ids change when the frame is saved: read its annotations again)", shapeID, p.ID)
}

func (s *Service) comment(ctx context.Context, commentID string) (Comment, error) {
	c, err := scanComment(s.db.R.QueryRowContext(ctx, `SELECT `+commentColumns+commentFrom+` WHERE c.id = ?`, commentID))
	if errors.Is(err, sql.ErrNoRows) {
		return Comment{}, errs.New(errs.NotFound, "commentId", "comment %q not found", commentID)
	}
	return c, err
}

func (s *Service) comments(ctx context.Context, where string, args ...any) ([]Comment, error) {
	out := []Comment{}
	err := rowsEach(ctx, s.db.R, `SELECT `+commentColumns+commentFrom+` WHERE `+where+` ORDER BY c.seq`, args,
		func(rows *sql.Rows) error {
			c, err := scanComment(rows)
			out = append(out, c)
			return err
		})
	return out, err
}

// FrameComments lists the comments on a frame of the project, oldest first.
func (s *Service) FrameComments(ctx context.Context, projectID, uniqueName string) ([]Comment, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return nil, err
	}
	return s.comments(ctx, `c.project_seq = ? AND c.unique_name = ?`, p.seq, uniqueName)
}

// JobComments lists the comments of a job, oldest first.
func (s *Service) JobComments(ctx context.Context, taskID string, number int) ([]Comment, error) {
	r, err := loadTaskRef(ctx, s.db.R, taskID)
	if err != nil {
		return nil, err
	}
	j, err := loadJobRow(ctx, s.db.R, r, number)
	if err != nil {
		return nil, err
	}
	return s.comments(ctx, `c.job_seq = ?`, j.seq)
}

// CommentProject is the id of a comment's project, for access checks.
func (s *Service) CommentProject(ctx context.Context, commentID string) (string, error) {
	c, err := s.comment(ctx, commentID)
	return c.ProjectID, err
}

// ResolveComment marks a comment resolved (or open again): the annotator of
// its job, a reviewer or a curator may; others are PermissionDenied.
func (s *Service) ResolveComment(ctx context.Context, commentID string, resolved bool, m Member) (Comment, error) {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var assignee sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT j.assignee FROM comment c LEFT JOIN label_job j ON j.seq = c.job_seq
			WHERE c.id = ?`, commentID).Scan(&assignee)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.New(errs.NotFound, "commentId", "comment %q not found", commentID)
		}
		if err != nil {
			return err
		}
		if !m.Review && !m.Curate && (!assignee.Valid || assignee.String != m.Name) {
			return errs.New(errs.PermissionDenied, "resolved", "comment %s is resolved by the annotator of its job or "+
				"a reviewer", commentID)
		}
		if resolved {
			_, err = tx.ExecContext(ctx, `UPDATE comment SET resolved_by = ?, resolved_at = ? WHERE id = ?`, m.Name,
				millis(s.now()), commentID)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE comment SET resolved_by = NULL, resolved_at = NULL WHERE id = ?`, commentID)
		}
		return err
	})
	if err != nil {
		return Comment{}, err
	}
	return s.comment(ctx, commentID)
}
