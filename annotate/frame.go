package annotate

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// UploadFrame stores one frame of an upload session with its boxes. The file
// becomes a lake file in the session's collection and the boxes human
// annotations of it. A label not in the project, a box of non-positive size
// or wholly outside the image, a file that is not a decodable image, and a
// new frame once totalFileCount frames have arrived are InvalidArgument
// errors that store nothing.
//
// Re-sending a sequence number that has arrived (an idempotent retry)
// replaces that frame's boxes and keeps its first file, so a session never
// holds two files for one frame; the re-sent file is still probed and must
// be a decodable image.
func (s *Service) UploadFrame(ctx context.Context, uploadID string, f Frame) (FrameResult, error) {
	sess, err := s.Session(ctx, uploadID)
	if err != nil {
		return FrameResult{}, err
	}
	p, err := loadProject(ctx, s.db.R, "p.seq = ?", sess.projectSeq)
	if err != nil {
		return FrameResult{}, err
	}
	if err := checkBoxes(p, f.Boxes, 0, 0); err != nil {
		return FrameResult{}, err
	}
	resend := false
	if f.SequenceNo != nil {
		if n := *f.SequenceNo; n < 0 || n > math.MaxInt32 {
			return FrameResult{}, errs.Invalid("sequenceNo", "sequenceNo must be between 0 and %d, got %d", math.MaxInt32, n)
		}
		if resend, err = s.frameExists(ctx, sess.seq, *f.SequenceNo); err != nil {
			return FrameResult{}, err
		}
	}
	// Checked again in the insert transaction; checking here too means a
	// client that overshoots leaves not even a blob behind.
	if !resend && sess.Complete() {
		return FrameResult{}, errPastTotal(sess)
	}
	var checkErr error
	probed := false
	check := func(_ int, lf lake.File) error {
		if lf.Type != lake.Image {
			checkErr = errs.Invalid("files", "%q is not a decodable image (read as %s): a frame must be an image", lf.Name, lf.Type)
		} else {
			checkErr = checkBoxes(p, f.Boxes, lf.Width, lf.Height)
		}
		if checkErr != nil {
			return checkErr
		}
		probed = true
		if resend {
			return errProbed
		}
		return nil
	}
	var res FrameResult
	insert := func(ctx context.Context, tx *sql.Tx, stored []lake.File) (err error) {
		res, err = s.insertFrame(ctx, tx, sess, p, f, stored[0])
		return err
	}
	ar, err := s.lake.Add(ctx, lake.AddOptions{Collection: sess.CollectionName, Check: check, InTx: insert},
		[]lake.Upload{{Name: f.Name, Open: f.Open}})
	switch {
	case errors.Is(err, errResend): // another upload of this number won the race
		resend = true
	case err != nil:
		return FrameResult{}, err
	case checkErr != nil:
		return FrameResult{}, checkErr
	case len(ar.Rejected) == 1 && !(resend && probed):
		r := ar.Rejected[0]
		return FrameResult{}, errs.New(r.Code, "files", "%q: %s", r.Name, r.Reason)
	}
	if resend {
		return s.replaceBoxes(ctx, p, frameEdit{}, "f.session_seq = ? AND f.sequence_no = ?", sess.seq, *f.SequenceNo)(f.Boxes)
	}
	return res, nil
}

func errPastTotal(sess Session) error {
	return errs.Invalid("files", "upload %s already has all %s (totalFileCount); re-send a received "+
		"sequenceNo to replace its labels, or call Initialize Upload with a larger totalFileCount", sess.ID,
		frames(sess.TotalFileCount))
}

// frames is "1 frame", "2 frames".
func frames(n int) string {
	if n == 1 {
		return "1 frame"
	}
	return fmt.Sprintf("%d frames", n)
}

func (s *Service) frameExists(ctx context.Context, sessionSeq int64, seqNo int) (bool, error) {
	var n int
	err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM frame WHERE session_seq = ? AND sequence_no = ?`,
		sessionSeq, seqNo).Scan(&n)
	return n > 0, err
}

// insertFrame runs in the transaction that inserts the frame's file: it
// claims the sequence number and refuses a frame past totalFileCount there,
// where the single writer serialises concurrent uploads.
func (s *Service) insertFrame(ctx context.Context, tx *sql.Tx, sess Session, p Project, f Frame, file lake.File) (FrameResult, error) {
	c, err := loadCounters(ctx, tx, sess.seq)
	if err != nil {
		return FrameResult{}, err
	}
	seqNo := c.last + 1
	if f.SequenceNo != nil {
		seqNo = *f.SequenceNo
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM frame WHERE session_seq = ? AND sequence_no = ?`,
			sess.seq, seqNo).Scan(&n); err != nil {
			return FrameResult{}, err
		}
		if n > 0 {
			return FrameResult{}, errResend
		}
	}
	if c.received >= c.total {
		sess.TotalFileCount = c.total
		return FrameResult{}, errPastTotal(sess)
	}
	now := millis(s.now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO frame (session_seq, sequence_no, file_seq, unique_name, width,
		height, box_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, sess.seq, seqNo, file.Seq(),
		file.UniqueName, file.Width, file.Height, len(f.Boxes), now, now); err != nil {
		return FrameResult{}, fmt.Errorf("insert frame: %w", err)
	}
	if err := lake.ReplaceBoxes(ctx, tx, file.Seq(), lake.Human, p.ID, 0, lakeBoxes(f.Boxes)); err != nil {
		return FrameResult{}, err
	}
	// video_index is the frame's place in its video or, for image projects,
	// in its upload sequence; either way sorting by it replays the upload.
	if err := lake.SetVideoIndexTx(ctx, tx, file.Seq(), seqNo); err != nil {
		return FrameResult{}, err
	}
	c.received++
	c.completed++ // its labels came with it, [] being an answer too
	c.last = max(c.last, seqNo)
	if c.width == 0 {
		c.width, c.height = file.Width, file.Height
	}
	if err := s.saveCounters(ctx, tx, c); err != nil {
		return FrameResult{}, err
	}
	return FrameResult{UniqueName: file.UniqueName, SequenceNo: seqNo, TaskID: sess.TaskID}, nil
}

// ReplaceFrameBoxes replaces the human boxes a project gave the frame stored
// as uniqueName (after upload, annotators change them) and updates the
// progress and status of its task.
func (s *Service) ReplaceFrameBoxes(ctx context.Context, projectID, uniqueName string, boxes []Box) (FrameResult, error) {
	return s.ReplaceFrameBoxesAt(ctx, projectID, uniqueName, 0, boxes)
}

// ReplaceFrameBoxesAt is ReplaceFrameBoxes made against the frame's version
// (0: whichever it is): when another edit came first, it changes nothing and
// answers a *Conflict holding the frame as it is now.
func (s *Service) ReplaceFrameBoxesAt(ctx context.Context, projectID, uniqueName string, version int, boxes []Box) (FrameResult, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return FrameResult{}, err
	}
	if err := checkBoxes(p, boxes, 0, 0); err != nil {
		return FrameResult{}, err
	}
	res, err := s.replaceBoxes(ctx, p, frameEdit{version: version}, "f.unique_name = ? AND s.project_seq = ?",
		uniqueName, p.seq)(boxes)
	return res, s.withCurrent(ctx, p, uniqueName, err)
}

// frameEdit qualifies a change of a frame's boxes.
type frameEdit struct {
	version int // the version the edit was made on; 0: any
	// after writes more in the same transaction (suggestion decisions).
	after func(tx *sql.Tx, fileSeq int64) error
}

// staleVersion is returned inside the transaction when the frame moved on.
type staleVersion struct{ have, want int }

func (e staleVersion) Error() string {
	return fmt.Sprintf("the frame is at version %d, not %d: someone else changed it first", e.have, e.want)
}

// withCurrent turns a stale edit into a *Conflict with the frame as it is.
func (s *Service) withCurrent(ctx context.Context, p Project, uniqueName string, err error) error {
	var stale staleVersion
	if !errors.As(err, &stale) {
		return err
	}
	cur, ferr := s.frameState(ctx, p, uniqueName)
	if ferr != nil {
		return ferr
	}
	return &Conflict{Err: errs.New(errs.FailedPrecondition, "version", "%s; its current boxes are in current", stale.Error()),
		Current: cur}
}

// replaceBoxes returns a function that replaces the boxes of the project's
// frame selected by where, checking them against the frame's dimensions;
// the frame is annotated from then on and its version moves.
func (s *Service) replaceBoxes(ctx context.Context, p Project, e frameEdit, where string, args ...any) func([]Box) (FrameResult, error) {
	return func(boxes []Box) (FrameResult, error) {
		var res FrameResult
		err := s.db.Tx(ctx, func(tx *sql.Tx) error {
			var sessionSeq, fileSeq int64
			var width, height, version int
			var annotated bool
			err := tx.QueryRowContext(ctx, `SELECT f.session_seq, f.sequence_no, f.file_seq, f.unique_name, f.width,
				f.height, f.annotated, f.version, s.task_id FROM frame f JOIN upload_session s ON s.seq = f.session_seq
				WHERE `+where, args...).Scan(&sessionSeq, &res.SequenceNo, &fileSeq, &res.UniqueName, &width, &height,
				&annotated, &version, &res.TaskID)
			if errors.Is(err, sql.ErrNoRows) {
				return errs.NotFoundf("frame %q not found in project %s", fmt.Sprint(args[0]), p.ID)
			}
			if err != nil {
				return err
			}
			if e.version != 0 && e.version != version {
				return staleVersion{have: version, want: e.version}
			}
			if err := checkBoxes(p, boxes, width, height); err != nil {
				return err
			}
			if err := lake.ReplaceBoxes(ctx, tx, fileSeq, lake.Human, p.ID, 0, lakeBoxes(boxes)); err != nil {
				return err
			}
			if err := lake.MarkLabelledTx(ctx, tx, fileSeq, p.ID, 0); err != nil { // "No objects" is judged too
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE frame SET box_count = ?, annotated = 1, version = ?, updated_at = ?
				WHERE session_seq = ? AND file_seq = ?`, len(boxes), version+1, millis(s.now()), sessionSeq, fileSeq); err != nil {
				return err
			}
			res.Version = version + 1
			if e.after != nil {
				if err := e.after(tx, fileSeq); err != nil {
					return err
				}
			}
			c, err := loadCounters(ctx, tx, sessionSeq)
			if err != nil {
				return err
			}
			if !annotated {
				c.completed++
			}
			return s.saveCounters(ctx, tx, c) // updatedAt moves, and the status with the first edit
		})
		res.Replaced = true
		return res, err
	}
}

// checkBoxes validates a frame's boxes against the project's labels, what
// they declare (typed attributes, keypoint names) and the image (width and
// height 0 when not known yet); errors name the labels field.
func checkBoxes(p Project, boxes []Box, width, height int) error {
	if len(boxes) > MaxBoxesPerFrame {
		return errs.Invalid("labels", "a frame has at most %d boxes, got %d", MaxBoxesPerFrame, len(boxes))
	}
	for i, b := range boxes {
		where := fmt.Sprintf("labels[%d]", i)
		l, ok := p.label(b.Label)
		if !ok {
			return errs.Invalid("labels", "%s: label %q is not a label of project %s (%s)", where, b.Label, p.ID, p.labelNames())
		}
		if err := lake.CheckBox(where, lake.Box{Label: b.Label, X: b.X, Y: b.Y, W: b.Width, H: b.Height, Geometry: b.Geometry},
			width, height); err != nil {
			var e *errs.Error
			if errors.As(err, &e) {
				c := *e
				c.Field = "labels"
				return &c
			}
			return err
		}
		if err := checkDeclared(where, l, b); err != nil {
			return err
		}
	}
	return nil
}

// lakeBoxes turns a frame's boxes into lake annotations (null attributes: none).
func lakeBoxes(boxes []Box) []lake.Box {
	out := make([]lake.Box, len(boxes))
	for i, b := range boxes {
		attrs := b.Attributes
		if bytes.Equal(bytes.TrimSpace(attrs), []byte("null")) {
			attrs = nil
		}
		out[i] = lake.Box{Label: b.Label, X: b.X, Y: b.Y, W: b.Width, H: b.Height, Attributes: attrs, Geometry: b.Geometry}
	}
	return out
}

// filesDeleted is the lake's delete hook: frames whose files go are dropped
// and their sessions' counters recounted, in the deleting transaction.
func (s *Service) filesDeleted(ctx context.Context, tx *sql.Tx, fileSeqs []int64, d *lake.Deleted) error {
	list := jsonArray(fileSeqs)
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT session_seq FROM frame
		WHERE file_seq IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return err
	}
	var sessions []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			rows.Close()
			return err
		}
		sessions = append(sessions, seq)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(sessions) == 0 {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM frame WHERE file_seq IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	d.Removed.TaskFrames += int(n)
	for _, seq := range sessions {
		c, err := loadCounters(ctx, tx, seq)
		if err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(annotated), 0), coalesce(max(sequence_no), -1)
			FROM frame WHERE session_seq = ?`, seq).Scan(&c.received, &c.completed, &c.last); err != nil {
			return err
		}
		if c.done.Valid { // a task of lake files has no frames still to come
			c.total = max(1, c.received)
		}
		if err := s.saveCounters(ctx, tx, c); err != nil {
			return err
		}
	}
	return nil
}

// jsonArray encodes v for json_each, one bound parameter however long the list.
func jsonArray(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
