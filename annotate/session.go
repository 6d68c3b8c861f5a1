package annotate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake"
)

// MaxTotalFileCount bounds a session's totalFileCount.
const MaxTotalFileCount = math.MaxInt32

// InitializeUpload opens an upload session of a project under a new lake
// collection named collectionName, with its task. Called again with the
// same project and name it returns the existing session, whose
// LastSequenceID tells a client that lost its connection where to resume; a
// different totalFileCount then replaces the old one (not below the frames
// already received). A collection of that name that is not this project's
// upload (another project's, or plain lake files) is an AlreadyExists error:
// a session's collection holds its frames and nothing else.
func (s *Service) InitializeUpload(ctx context.Context, projectID, collectionName string, totalFileCount int) (Session, error) {
	if err := lake.ValidateCollectionName(collectionName); err != nil {
		return Session{}, err
	}
	if totalFileCount < 1 || totalFileCount > MaxTotalFileCount {
		return Session{}, errs.Invalid("totalFileCount", "totalFileCount must be between 1 and %d, got %d",
			MaxTotalFileCount, totalFileCount)
	}
	var sess Session
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		p, err := loadProject(ctx, tx, "p.id = ?", projectID)
		if err != nil {
			return err
		}
		sess, err = loadSession(ctx, tx, "s.collection_name = ?", collectionName)
		switch {
		case err == nil && sess.ProjectID != p.ID:
			return errs.New(errs.AlreadyExists, "collectionName",
				"collection %q is an upload of another project (%s); choose another collectionName", collectionName, sess.ProjectID)
		case err == nil:
			return s.resize(ctx, tx, &sess, totalFileCount)
		case !errs.Is(err, errs.NotFound):
			return err
		}
		col, err := lake.CreateCollectionTx(ctx, tx, collectionName, lake.ImageCollection)
		if errs.Is(err, errs.AlreadyExists) {
			return errs.New(errs.AlreadyExists, "collectionName", "collection %q already exists in the lake and is not "+
				"an upload of this project; an upload session needs a collection of its own: choose another collectionName",
				collectionName)
		}
		if err != nil {
			return err
		}
		now := millis(s.now())
		sess = Session{ID: id.New("upl"), TaskID: id.New("tsk"), ProjectID: p.ID, CollectionID: col.ID,
			CollectionName: collectionName, TotalFileCount: totalFileCount, LastSequenceID: -1,
			CreatedAt: fromMillis(now), projectSeq: p.seq}
		return tx.QueryRowContext(ctx, `INSERT INTO upload_session (id, task_id, project_seq, collection_id,
			collection_name, total_file_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
			sess.ID, sess.TaskID, p.seq, col.ID, collectionName, totalFileCount, now, now).Scan(&sess.seq)
	})
	if err != nil {
		return Session{}, errs.Prefix(err, "initialize upload")
	}
	return sess, nil
}

// resize gives a resumed session a new totalFileCount, which can complete
// (or reopen) its upload and so change its task's status.
func (s *Service) resize(ctx context.Context, tx *sql.Tx, sess *Session, total int) error {
	if total == sess.TotalFileCount {
		return nil
	}
	if total < sess.Received {
		return errs.Invalid("totalFileCount", "totalFileCount %d is below the %s upload %s already received",
			total, frames(sess.Received), sess.ID)
	}
	c, err := loadCounters(ctx, tx, sess.seq)
	if err != nil {
		return err
	}
	c.total = total
	sess.TotalFileCount = total
	return s.saveCounters(ctx, tx, c)
}

// Session returns the upload session with id.
func (s *Service) Session(ctx context.Context, uploadID string) (Session, error) {
	return loadSession(ctx, s.db.R, "s.id = ?", uploadID)
}

const sessionColumns = `s.seq, s.id, s.task_id, p.id, p.seq, s.collection_id, s.collection_name,
	s.total_file_count, s.received, s.last_sequence_id, s.created_at`

func loadSession(ctx context.Context, q ctxTx, where string, arg any) (Session, error) {
	var sess Session
	var created int64
	err := q.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM upload_session s
		JOIN project p ON p.seq = s.project_seq WHERE `+where, arg).Scan(&sess.seq, &sess.ID, &sess.TaskID,
		&sess.ProjectID, &sess.projectSeq, &sess.CollectionID, &sess.CollectionName, &sess.TotalFileCount,
		&sess.Received, &sess.LastSequenceID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, errs.NotFoundf("upload %q not found", fmt.Sprint(arg))
	}
	sess.CreatedAt = fromMillis(created)
	return sess, err
}

// counters are a session's task state, read and written in the transaction
// that changes its frames (the single writer serialises them).
type counters struct {
	seq                        int64
	total, received, completed int
	last, width, height        int
	completedAt                sql.NullInt64
	// done is NULL for uploaded tasks (complete once every frame arrived)
	// and the annotator's mark for tasks made from lake files.
	done sql.NullInt64
}

func loadCounters(ctx context.Context, tx *sql.Tx, sessionSeq int64) (counters, error) {
	c := counters{seq: sessionSeq}
	err := tx.QueryRowContext(ctx, `SELECT total_file_count, received, completed_frames, last_sequence_id, width,
		height, completed_at, done FROM upload_session WHERE seq = ?`, sessionSeq).Scan(&c.total, &c.received, &c.completed,
		&c.last, &c.width, &c.height, &c.completedAt, &c.done)
	if errors.Is(err, sql.ErrNoRows) {
		return c, errs.NotFoundf("upload session not found")
	}
	return c, err
}

// status is the task status the counters imply.
func (c counters) status() TaskStatus {
	switch {
	case c.completed == 0:
		return NotStarted
	case c.received >= c.total && c.completed >= c.total && (!c.done.Valid || c.done.Int64 == 1):
		return Completed
	}
	return InProgress
}

// saveCounters writes the counters with the status and completion time they
// imply: completedAt is when the task last became completed, null while not.
func (s *Service) saveCounters(ctx context.Context, tx *sql.Tx, c counters) error {
	now := millis(s.now())
	st := c.status()
	if js, ok, err := jobsStatus(ctx, tx, c.seq); err != nil {
		return err
	} else if ok { // a task cut into jobs follows them (docs/team.md "Jobs")
		st = js
	}
	switch {
	case st != Completed:
		c.completedAt = sql.NullInt64{}
	case !c.completedAt.Valid:
		c.completedAt = sql.NullInt64{Int64: now, Valid: true}
	}
	_, err := tx.ExecContext(ctx, `UPDATE upload_session SET total_file_count = ?, received = ?, completed_frames = ?,
		last_sequence_id = ?, width = ?, height = ?, status = ?, completed_at = ?, updated_at = ? WHERE seq = ?`,
		c.total, c.received, c.completed, c.last, c.width, c.height, st, c.completedAt, now, c.seq)
	return err
}
