package annotate

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake"
)

// A task may be made from a lake video (docs/tracks.md "Label a lake video
// as a task"): its frames are the video's frame numbers FirstFrame,
// FirstFrame+Every, ... up to LastFrame, decoded where the video lies; no
// media is copied and no frame rows are made. Their shapes are the video's
// tracks of operation = the project's id. Within a project the tasks of one
// video cover ranges that do not overlap, so the project's tracks of a video
// frame are one task's answer, as a file is a frame of one task per project.

// NewVideoTask is a task made from a lake video. FirstFrame and LastFrame
// nil: the whole video; Every 0: every frame.
type NewVideoTask struct {
	Name       string
	Video      string
	FirstFrame *int
	LastFrame  *int
	Every      int
}

// VideoTask is the lake video a task labels and which of its frames.
type VideoTask struct {
	UniqueName string  `json:"uniqueName"`
	FirstFrame int     `json:"firstFrame"`
	LastFrame  int     `json:"lastFrame"`
	Every      int     `json:"every"`
	Frames     int     `json:"frames"`     // sampled: the task's frames
	FrameRate  float64 `json:"frameRate"`  // the video's
	FrameCount int     `json:"frameCount"` // the video's
	Width      int     `json:"width"`
	Height     int     `json:"height"`

	fileSeq, sessionSeq int64
	taskID              string
}

// sampled is how many frames first..last every n holds.
func sampled(first, last, every int) int { return (last-first)/every + 1 }

// Frame is the video frame number of the task's i-th frame.
func (v VideoTask) Frame(i int) int { return v.FirstFrame + i*v.Every }

// CreateVideoTask makes a task of a project from a lake video (see
// NewVideoTask). A file that is not a video, a range outside its frames,
// every < 1, an image project or a range overlapping another task of the
// same video in the project is refused naming the field; nothing is written.
func (s *Service) CreateVideoTask(ctx context.Context, projectID string, nt NewVideoTask) (Task, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return Task{}, err
	}
	if p.ContentType != Video {
		return Task{}, errs.Invalid("video", "project %s labels images (contentType 2): a task made from a lake video "+
			"belongs to a video project (contentType 1)", p.ID)
	}
	v, f, err := s.videoRange(ctx, nt)
	if err != nil {
		return Task{}, err
	}
	taskID := id.New("tsk")
	name := taskNameOr(nt.Name, taskID)
	if err := checkTaskName(name); err != nil {
		return Task{}, err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var other string
		var lo, hi int
		err := tx.QueryRowContext(ctx, `SELECT s.task_id, v.first_frame, v.last_frame FROM video_task v JOIN upload_session s
			ON s.seq = v.session_seq WHERE s.project_seq = ? AND v.file_seq = ? AND v.first_frame <= ? AND v.last_frame >= ?
			LIMIT 1`, p.seq, f.Seq(), v.LastFrame, v.FirstFrame).Scan(&other, &lo, &hi)
		if err == nil {
			return errs.New(errs.AlreadyExists, "firstFrame", "frames %d-%d of %s are task %s's in this project; the "+
				"project's tracks of a frame are one task's answer: choose frames outside %d-%d", v.FirstFrame,
				v.LastFrame, f.UniqueName, other, lo, hi)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		sessionSeq, err := s.taskSession(ctx, tx, p.seq, taskID, name, lake.VideoCollection, []int64{f.Seq()}, v.Frames,
			f.Width, f.Height)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO video_task (session_seq, file_seq, unique_name, first_frame, last_frame,
			every) VALUES (?, ?, ?, ?, ?, ?)`, sessionSeq, f.Seq(), f.UniqueName, v.FirstFrame, v.LastFrame, v.Every)
		return err
	})
	if err != nil {
		return Task{}, errs.Prefix(err, "create task")
	}
	return s.Task(ctx, taskID)
}

// videoRange checks a NewVideoTask against its video.
func (s *Service) videoRange(ctx context.Context, nt NewVideoTask) (VideoTask, lake.File, error) {
	f, err := s.lake.File(ctx, nt.Video)
	if err != nil {
		return VideoTask{}, f, errs.New(errs.NotFound, "video", "video %q not found in the lake", nt.Video)
	}
	if f.Type != lake.Video {
		return VideoTask{}, f, errs.Invalid("video", "%q is a %s: a video task labels a lake video", nt.Video, f.Type)
	}
	if f.FrameCount < 1 {
		return VideoTask{}, f, errs.Invalid("video", "video %q has no known frame count: it cannot be stepped frame by frame", nt.Video)
	}
	v := VideoTask{UniqueName: f.UniqueName, LastFrame: f.FrameCount - 1, Every: 1, FrameRate: f.FrameRate,
		FrameCount: f.FrameCount, Width: f.Width, Height: f.Height}
	if nt.FirstFrame != nil {
		v.FirstFrame = *nt.FirstFrame
	}
	if nt.LastFrame != nil {
		v.LastFrame = *nt.LastFrame
	}
	if nt.Every != 0 {
		v.Every = nt.Every
	}
	switch {
	case v.FirstFrame < 0 || v.FirstFrame >= f.FrameCount:
		return v, f, errs.Invalid("firstFrame", "firstFrame %d is outside video %q's frames 0-%d", v.FirstFrame, nt.Video, f.FrameCount-1)
	case v.LastFrame < v.FirstFrame || v.LastFrame >= f.FrameCount:
		return v, f, errs.Invalid("lastFrame", "lastFrame %d is outside frames %d-%d (firstFrame to video %q's last frame)",
			v.LastFrame, v.FirstFrame, f.FrameCount-1, nt.Video)
	case v.Every < 1:
		return v, f, errs.Invalid("every", "every is 1 or more (1: every frame, N: every Nth), got %d", v.Every)
	}
	if v.Frames = sampled(v.FirstFrame, v.LastFrame, v.Every); v.Frames > MaxTaskFrames {
		return v, f, errs.Invalid("every", "frames %d-%d every %d are %d frames: a task has at most %d",
			v.FirstFrame, v.LastFrame, v.Every, v.Frames, MaxTaskFrames)
	}
	return v, f, nil
}

// taskNameOr is the name given, trimmed, or one made from the task's id.
func taskNameOr(name, taskID string) string {
	if n := strings.TrimSpace(name); n != "" {
		return n
	}
	return "task-" + taskID[len("tsk_"):]
}

// loadVideoTask reads the video range of a task's session; ok is false for
// a task of images.
func (s *Service) loadVideoTask(ctx context.Context, q ctxTx, sessionSeq int64) (v VideoTask, ok bool, err error) {
	err = q.QueryRowContext(ctx, `SELECT v.file_seq, v.unique_name, v.first_frame, v.last_frame, v.every, s.task_id
		FROM video_task v JOIN upload_session s ON s.seq = v.session_seq WHERE v.session_seq = ?`, sessionSeq).Scan(
		&v.fileSeq, &v.UniqueName, &v.FirstFrame, &v.LastFrame, &v.Every, &v.taskID)
	if errors.Is(err, sql.ErrNoRows) {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	v.sessionSeq = sessionSeq
	v.Frames = sampled(v.FirstFrame, v.LastFrame, v.Every)
	if f, err := s.lake.File(ctx, v.UniqueName); err == nil {
		v.FrameRate, v.FrameCount, v.Width, v.Height = f.FrameRate, f.FrameCount, f.Width, f.Height
	}
	return v, true, nil
}

// videoFrameURL is where the web app reads a video task's frame: the
// project's frames route (docs/tracks.md), which checks the reader.
func videoFrameURL(projectID, uniqueName string, frame int) string {
	return "/api/v1/projects/" + url.PathEscape(projectID) + "/videos/" + url.PathEscape(uniqueName) + "/frames/" +
		strconv.Itoa(frame)
}

// videoWorkspace fills a video task's frames: each sampled frame with the
// video's name and its frame number, annotated when a track of the project
// lies on it (from its first keyframe to its last), BoxCount the tracks
// that do.
func (s *Service) videoWorkspace(ctx context.Context, w *Workspace, sessionSeq int64) (bool, error) {
	v, ok, err := s.loadVideoTask(ctx, s.db.R, sessionSeq)
	if err != nil || !ok {
		return ok, err
	}
	w.Video = &v
	spans, err := s.lake.TrackSpans(ctx, v.fileSeq, w.ProjectID, v.FirstFrame, v.LastFrame)
	if err != nil {
		return true, err
	}
	w.Frames = make([]FrameStatus, v.Frames)
	for i := range v.Frames {
		n := v.Frame(i)
		fs := FrameStatus{SequenceNo: i, UniqueName: v.UniqueName, Frame: &n, URL: videoFrameURL(w.ProjectID, v.UniqueName, n),
			Width: v.Width, Height: v.Height, Version: 1}
		for _, sp := range spans {
			if sp[0] <= n && n <= sp[1] {
				fs.BoxCount++
			}
		}
		fs.Annotated = fs.BoxCount > 0
		w.Frames[i] = fs
	}
	return true, nil
}

// ProjectVideo is the video task range of a project's tasks on a lake
// video: NotFound when no task of the project labels it, so the project's
// video routes reach only its own videos.
func (s *Service) ProjectVideo(ctx context.Context, projectID, uniqueName string) ([]VideoTask, error) {
	return s.projectVideo(ctx, s.db.R, projectID, uniqueName)
}

// projectVideo is ProjectVideo on q: the readers' pool or a transaction.
func (s *Service) projectVideo(ctx context.Context, q ctxTx, projectID, uniqueName string) ([]VideoTask, error) {
	p, err := loadProject(ctx, q, "p.id = ?", projectID)
	if err != nil {
		return nil, err
	}
	var out []VideoTask
	err = rowsEach(ctx, q, `SELECT v.session_seq, v.file_seq, v.unique_name, v.first_frame, v.last_frame, v.every,
		s.task_id FROM video_task v JOIN upload_session s ON s.seq = v.session_seq WHERE s.project_seq = ?
		AND v.unique_name = ? ORDER BY v.first_frame`, []any{p.seq, uniqueName}, func(rows *sql.Rows) error {
		var v VideoTask
		err := rows.Scan(&v.sessionSeq, &v.fileSeq, &v.UniqueName, &v.FirstFrame, &v.LastFrame, &v.Every, &v.taskID)
		v.Frames = sampled(v.FirstFrame, v.LastFrame, v.Every)
		out = append(out, v)
		return err
	})
	if err == nil && len(out) == 0 {
		err = errs.New(errs.NotFound, "uniqueName", "video %q is in no task of project %s", uniqueName, p.ID)
	}
	return out, err
}

// videoJobFrames are a video task's sampled frames as planFrames, for
// cutting into jobs: the video's file, the frame's place and number.
func videoJobFrames(v VideoTask) []planFrame {
	fr := make([]planFrame, v.Frames)
	for i := range fr {
		fr[i] = planFrame{fileSeq: v.fileSeq, position: i, frame: v.Frame(i), video: true}
	}
	return fr
}

// videoJobFramesOf lists a video job's frames, with their verdicts.
func (s *Service) videoJobFramesOf(ctx context.Context, v VideoTask, projectID string, jobSeq int64) ([]JobFrame, error) {
	spans, err := s.lake.TrackSpans(ctx, v.fileSeq, projectID, math.MinInt32, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	out := []JobFrame{}
	err = rowsEach(ctx, s.db.R, `SELECT frame, review FROM video_job_frame WHERE job_seq = ? ORDER BY frame`,
		[]any{jobSeq}, func(rows *sql.Rows) error {
			var n int
			var review sql.NullString
			if err := rows.Scan(&n, &review); err != nil {
				return err
			}
			f := JobFrame{FrameStatus: FrameStatus{SequenceNo: (n - v.FirstFrame) / v.Every, UniqueName: v.UniqueName,
				Frame: &n, URL: videoFrameURL(projectID, v.UniqueName, n), Width: v.Width, Height: v.Height, Version: 1},
				Review: nullString(review)}
			for _, sp := range spans {
				if sp[0] <= n && n <= sp[1] {
					f.BoxCount++
				}
			}
			f.Annotated = f.BoxCount > 0
			out = append(out, f)
			return nil
		})
	return out, err
}

// reviewVideoFrame records a verdict on a video job's frame, named by its
// number ("120").
func reviewVideoFrame(ctx context.Context, tx *sql.Tx, j jobRow, name, verdict string) (bool, error) {
	n, err := strconv.Atoi(name)
	if err != nil {
		return false, nil
	}
	res, err := tx.ExecContext(ctx, `UPDATE video_job_frame SET review = ? WHERE job_seq = ? AND frame = ?`, verdict, j.seq, n)
	if err != nil {
		return false, err
	}
	k, _ := res.RowsAffected()
	return k > 0, nil
}

// frameSpan is a stretch of a video a person may write tracks on now.
type frameSpan struct {
	lo, hi int
	jobSeq int64 // the job the span is; 0: a task without jobs, or a curator
}

// TrackEdit is what CheckTrackEdit allows: the jobs the edit is made in,
// which StartTrackEdit marks started once it is written.
type TrackEdit struct {
	jobs []int64
}

// CheckTrackEdit decides whether m may change the project's tracks of a
// video on frames (the keyframes and outside frames an edit adds, moves or
// removes): curators anywhere; others only on frames of the project's
// tasks of the video, and once a task has jobs only inside a job they hold
// while it is in annotation or rejected (its reviewer while in review). A
// frame of their own job in another state is FailedPrecondition naming the
// state; another's job, no job or no task is PermissionDenied.
func (s *Service) CheckTrackEdit(ctx context.Context, projectID, uniqueName string, frames []int, m Member) (TrackEdit, error) {
	return s.checkTrackEdit(ctx, s.db.R, projectID, uniqueName, frames, m)
}

// TrackEditGuard is CheckTrackEdit and StartTrackEdit made one with the
// write (lake.TrackGuard): inside the track write's transaction it asks
// whether m may turn the project's tracks the write replaces into after,
// and marks the jobs it is made in started. A job reassigned, submitted or
// deleted by another request lands wholly before the write (which is then
// refused) or after it, never between the check and the write.
func (s *Service) TrackEditGuard(projectID, uniqueName string, after []lake.Track, m Member) lake.TrackGuard {
	return func(ctx context.Context, tx *sql.Tx, before []lake.Track) error {
		ed, err := s.checkTrackEdit(ctx, tx, projectID, uniqueName, ChangedFrames(before, after), m)
		if err != nil {
			return err
		}
		return s.startTrackEdit(ctx, tx, ed)
	}
}

// FrameEditGuard is TrackEditGuard for a write of given frames (a
// restore's), asked inside the write's transaction: member says who asks,
// read there too, so a role changed while the request waited counts; the
// jobs' rules are asked for them and the jobs marked started, all in tx.
func (s *Service) FrameEditGuard(projectID, uniqueName string, frames []int,
	member func(ctx context.Context) (Member, error)) func(ctx context.Context, tx *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		m, err := member(ctx)
		if err != nil {
			return err
		}
		ed, err := s.checkTrackEdit(ctx, tx, projectID, uniqueName, frames, m)
		if err != nil {
			return err
		}
		return s.startTrackEdit(ctx, tx, ed)
	}
}

func (s *Service) checkTrackEdit(ctx context.Context, q ctxTx, projectID, uniqueName string, frames []int, m Member) (TrackEdit, error) {
	tasks, err := s.projectVideo(ctx, q, projectID, uniqueName)
	if err != nil || m.Curate {
		return TrackEdit{}, err
	}
	var ok []frameSpan
	var ed TrackEdit
next:
	for _, n := range frames {
		for _, sp := range ok {
			if sp.lo <= n && n <= sp.hi {
				continue next
			}
		}
		sp, err := s.editSpan(ctx, q, tasks, n, m)
		if err != nil {
			return TrackEdit{}, err
		}
		ok = append(ok, sp)
		if sp.jobSeq != 0 {
			ed.jobs = append(ed.jobs, sp.jobSeq)
		}
	}
	return ed, nil
}

// EditSpan is the stretch of frames around frame that m may write (see
// CheckTrackEdit): what a propagation started there may reach.
func (s *Service) EditSpan(ctx context.Context, projectID, uniqueName string, frame int, m Member) (lo, hi int, err error) {
	tasks, err := s.ProjectVideo(ctx, projectID, uniqueName)
	if err != nil {
		return 0, 0, err
	}
	if m.Curate {
		return 0, -1, nil // no bound
	}
	sp, err := s.editSpan(ctx, s.db.R, tasks, frame, m)
	return sp.lo, sp.hi, err
}

// editSpan finds the task and job frame n lies in and checks m may write
// there. A video job spans its first sampled frame to the frame before the
// next job's (the task's last frame for the last job).
func (s *Service) editSpan(ctx context.Context, q ctxTx, tasks []VideoTask, n int, m Member) (frameSpan, error) {
	var t *VideoTask
	for i := range tasks {
		if tasks[i].FirstFrame <= n && n <= tasks[i].LastFrame {
			t = &tasks[i]
		}
	}
	if t == nil {
		return frameSpan{}, errs.New(errs.PermissionDenied, "frame", "frame %d of %s is in no task of this project: "+
			"only a curator labels it", n, tasks[0].UniqueName)
	}
	type vjob struct {
		seq                int64
		number             int
		state              JobState
		assignee, reviewer sql.NullString
		lo, hi             int
	}
	var jobs []vjob
	if err := rowsEach(ctx, q, `SELECT j.seq, j.number, j.state, j.assignee, j.reviewer, min(f.frame), max(f.frame)
		FROM label_job j JOIN video_job_frame f ON f.job_seq = j.seq WHERE j.session_seq = ? GROUP BY j.seq
		ORDER BY 6`, []any{t.sessionSeq}, func(rows *sql.Rows) error {
		var j vjob
		err := rows.Scan(&j.seq, &j.number, &j.state, &j.assignee, &j.reviewer, &j.lo, &j.hi)
		jobs = append(jobs, j)
		return err
	}); err != nil {
		return frameSpan{}, err
	}
	if len(jobs) == 0 {
		if !m.Annotate {
			return frameSpan{}, errs.New(errs.PermissionDenied, "frame", "%s may not annotate task %s", m.Name, t.taskID)
		}
		return frameSpan{lo: t.FirstFrame, hi: t.LastFrame}, nil
	}
	for i, j := range jobs {
		j.hi = t.LastFrame
		if i+1 < len(jobs) {
			j.hi = jobs[i+1].lo - 1
		}
		if n < j.lo || n > j.hi {
			continue
		}
		sp := frameSpan{lo: j.lo, hi: j.hi, jobSeq: j.seq}
		holder := "no one"
		if j.assignee.Valid {
			holder = j.assignee.String
		}
		switch {
		case holder == m.Name && m.Annotate && j.state.editable():
			return sp, nil
		case holder == m.Name && m.Annotate:
			return frameSpan{}, errs.New(errs.FailedPrecondition, "state", "frame %d is in your job %d of task %s, which is "+
				"%s: its frames are read-only to its annotator unless a reviewer rejects it", n, j.number, t.taskID, j.state)
		case m.Review && j.state == JobInReview && (!j.reviewer.Valid || j.reviewer.String == m.Name):
			return sp, nil
		}
		return frameSpan{}, errs.New(errs.PermissionDenied, "frame", "frame %d is in job %d of task %s (frames %d-%d), "+
			"assigned to %s: you edit only the frames of jobs assigned to you", n, j.number, t.taskID, j.lo, j.hi, holder)
	}
	return frameSpan{}, errs.New(errs.PermissionDenied, "frame", "frame %d of task %s is in no job; only a curator edits it",
		n, t.taskID)
}

// StartTrackEdit marks the jobs of a written edit started, so their task's
// status follows (docs/team.md "Jobs").
func (s *Service) StartTrackEdit(ctx context.Context, ed TrackEdit) error {
	if len(ed.jobs) == 0 {
		return nil
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error { return s.startTrackEdit(ctx, tx, ed) })
}

func (s *Service) startTrackEdit(ctx context.Context, tx *sql.Tx, ed TrackEdit) error {
	var sessions []int64
	for _, seq := range ed.jobs {
		var session int64
		if err := tx.QueryRowContext(ctx, `UPDATE label_job SET started = 1 WHERE seq = ? RETURNING session_seq`,
			seq).Scan(&session); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		sessions = append(sessions, session)
	}
	for _, session := range sessions {
		if session == 0 {
			continue
		}
		if err := refreshStatus(ctx, s, tx, session); err != nil {
			return fmt.Errorf("task status: %w", err)
		}
	}
	return nil
}

// ChangedFrames lists the frames where two versions of a video's tracks
// differ, track by track (by number): keyframes added, removed or changed,
// outside frames added or removed, and every frame of a track whose label
// changed or that is added or removed whole. What a person changes there
// is what CheckTrackEdit asks them about.
func ChangedFrames(before, after []lake.Track) []int {
	old := map[int]lake.Track{}
	for _, t := range before {
		old[t.Number] = t
	}
	seen, out := map[int]bool{}, []int{}
	add := func(n int) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	all := func(t lake.Track) {
		for _, k := range t.Keyframes {
			add(k.Frame)
		}
		for _, o := range t.Outside {
			add(o)
		}
	}
	for _, t := range after {
		o, had := old[t.Number]
		delete(old, t.Number)
		if !had || o.Label != t.Label {
			all(t)
			all(o)
			continue
		}
		diffKeyframes(o, t, add)
	}
	for _, t := range old {
		all(t)
	}
	return out
}

// diffKeyframes calls add for each frame where tracks a and b differ.
func diffKeyframes(a, b lake.Track, add func(int)) {
	ka, kb := map[int]string{}, map[int]string{}
	for _, k := range a.Keyframes {
		ka[k.Frame] = keyframeText(k)
	}
	for _, k := range b.Keyframes {
		kb[k.Frame] = keyframeText(k)
		if ka[k.Frame] != kb[k.Frame] {
			add(k.Frame)
		}
	}
	for f := range ka {
		if _, ok := kb[f]; !ok {
			add(f)
		}
	}
	oa, ob := map[int]bool{}, map[int]bool{}
	for _, o := range a.Outside {
		oa[o] = true
	}
	for _, o := range b.Outside {
		ob[o] = true
		if !oa[o] {
			add(o)
		}
	}
	for o := range oa {
		if !ob[o] {
			add(o)
		}
	}
}

// keyframeText is what a keyframe is, for comparing: its box, the points
// of another shape and its attributes; not its id, type or area, which a
// client sends back or not, nor the spelling of empty attributes.
func keyframeText(k lake.Box) string {
	g := k.Geometry
	g.Type, g.Area = "", nil
	geo, _ := json.Marshal(g)
	var attrs bytes.Buffer
	if json.Compact(&attrs, k.Attributes) != nil || attrs.String() == "null" || attrs.String() == "{}" {
		attrs.Reset()
	}
	return fmt.Sprintf("%g %g %g %g %s %s", k.X, k.Y, k.W, k.H, geo, attrs.String())
}

// videoCommentJob places a comment on frame of a video of the project's
// video tasks: the video's file and the job holding the frame (the number
// given, which must hold it; nil when the task has no jobs).
func (s *Service) videoCommentJob(ctx context.Context, p Project, uniqueName string, frame, number *int) (int64, any, error) {
	tasks, err := s.ProjectVideo(ctx, p.ID, uniqueName)
	if errs.Is(err, errs.NotFound) {
		return 0, nil, errs.NotFoundf("frame %q not found in project %s", uniqueName, p.ID)
	}
	if err != nil {
		return 0, nil, err
	}
	if frame == nil {
		return 0, nil, errs.Invalid("frame", "%s is a video: give the frame the comment is about", uniqueName)
	}
	for _, t := range tasks {
		if *frame < t.FirstFrame || *frame > t.LastFrame {
			continue
		}
		var seq int64
		var n int
		// The job whose first frame is the last at or before the frame.
		err := s.db.R.QueryRowContext(ctx, `SELECT j.seq, j.number FROM label_job j JOIN video_job_frame f ON f.job_seq = j.seq
			WHERE j.session_seq = ? AND f.frame <= ? GROUP BY j.seq ORDER BY min(f.frame) DESC LIMIT 1`, t.sessionSeq,
			*frame).Scan(&seq, &n)
		switch {
		case errors.Is(err, sql.ErrNoRows) && number == nil:
			return t.fileSeq, nil, nil
		case errors.Is(err, sql.ErrNoRows) || err == nil && number != nil && *number != n:
			return 0, nil, errs.New(errs.NotFound, "job", "no job %v of task %s holds frame %d", deref(number), t.taskID, *frame)
		case err != nil:
			return 0, nil, err
		}
		return t.fileSeq, seq, nil
	}
	return 0, nil, errs.New(errs.NotFound, "frame", "frame %d of %s is in no task of project %s", *frame, uniqueName, p.ID)
}

func deref(n *int) any {
	if n == nil {
		return "at all"
	}
	return *n
}
