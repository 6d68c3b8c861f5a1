package annotate

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/lake"
)

// CreateTask makes a task of the project from lake images (see NewTask).
// Its frames are all there at once. By default they start from the lake's
// human boxes (StartFromLake): frames that get boxes so are annotated and the
// task is in progress (1); with none, or StartFromEmpty, the task is not
// started (0) until its first edit. It completes only when its annotator
// marks it done. A file may be a frame of tasks of other projects, each
// project keeping its own boxes of it; within a project it is a frame of one
// task at most (the project's boxes of a file are one answer), so a file
// already in a task of the project is an AlreadyExists error naming it.
func (s *Service) CreateTask(ctx context.Context, projectID string, nt NewTask) (Task, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return Task{}, err
	}
	if nt.StartFrom == "" {
		nt.StartFrom = StartFromLake
	}
	if nt.StartFrom != StartFromLake && nt.StartFrom != StartFromEmpty {
		return Task{}, errs.Invalid("startFrom", "startFrom is %q or %q, got %q", StartFromLake, StartFromEmpty, nt.StartFrom)
	}
	files, err := s.taskFiles(ctx, nt)
	if err != nil {
		return Task{}, err
	}
	taskID := id.New("tsk")
	name := strings.TrimSpace(nt.Name)
	if name == "" {
		name = "task-" + strings.TrimPrefix(taskID, "tsk_")
	}
	if err := checkTaskName(name); err != nil {
		return Task{}, err
	}
	seqs := make([]int64, len(files))
	for i, f := range files {
		seqs[i] = f.Seq()
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var taken, task string
		err := tx.QueryRowContext(ctx, `SELECT f.unique_name, s.task_id FROM frame f JOIN upload_session s
			ON s.seq = f.session_seq WHERE s.project_seq = ? AND f.file_seq IN (SELECT value FROM json_each(?)) LIMIT 1`,
			p.seq, jsonArray(seqs)).Scan(&taken, &task)
		if err == nil {
			return errs.New(errs.AlreadyExists, "uniqueNames", "file %q is already a frame of task %s of this "+
				"project; a file is a frame of one task per project (its boxes there are the project's): make "+
				"the second task in another project", taken, task)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		now := millis(s.now())
		sessionSeq, err := s.taskSession(ctx, tx, p.seq, taskID, name, lake.ImageCollection, seqs, len(files),
			files[0].Width, files[0].Height)
		if err != nil {
			return err
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO frame (session_seq, sequence_no, file_seq, unique_name, width,
			height, annotated, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for i, f := range files {
			if _, err := ins.ExecContext(ctx, sessionSeq, i, f.Seq(), f.UniqueName, f.Width, f.Height, now, now); err != nil {
				return fmt.Errorf("insert frame: %w", err)
			}
		}
		if nt.StartFrom == StartFromLake {
			return s.startFromLake(ctx, tx, p, sessionSeq, seqs)
		}
		return nil
	})
	if err != nil {
		return Task{}, errs.Prefix(err, "create task")
	}
	return s.Task(ctx, taskID)
}

// startFromLake gives a new task's frames the lake's human boxes (see
// StartFromLake): frames with boxes are annotated, and the task's counters
// say so.
func (s *Service) startFromLake(ctx context.Context, tx *sql.Tx, p Project, sessionSeq int64, seqs []int64) error {
	others := []string{} // not nil: json_each('null') is one NULL row, and NOT IN (NULL) keeps nothing
	rows, err := tx.QueryContext(ctx, `SELECT id FROM project WHERE seq <> ?`, p.seq)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		others = append(others, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	counts, err := lake.TakeOverHumanBoxesTx(ctx, tx, seqs, p.labelList(), others, p.ID)
	if err != nil || len(counts) == 0 {
		return err
	}
	upd, err := tx.PrepareContext(ctx, `UPDATE frame SET annotated = 1, box_count = ? WHERE session_seq = ? AND file_seq = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	for seq, n := range counts {
		if _, err := upd.ExecContext(ctx, n, sessionSeq, seq); err != nil {
			return err
		}
	}
	c, err := loadCounters(ctx, tx, sessionSeq)
	if err != nil {
		return err
	}
	c.completed = len(counts)
	return s.saveCounters(ctx, tx, c)
}

// taskFiles resolves a NewTask's frames: images only, at least one.
func (s *Service) taskFiles(ctx context.Context, nt NewTask) ([]lake.File, error) {
	given := 0
	for _, set := range []bool{len(nt.UniqueNames) > 0, nt.Query != "", nt.CollectionID != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return nil, errs.Invalid("uniqueNames", "give exactly one of uniqueNames, query and collectionId")
	}
	var files []lake.File
	add := func(f lake.File) error {
		if f.Type != lake.Image {
			return errs.Invalid("uniqueNames", "%q is a %s: a task's frames are images", f.UniqueName, f.Type)
		}
		if len(files) == MaxTaskFrames {
			return errs.Invalid("uniqueNames", "a task has at most %d frames", MaxTaskFrames)
		}
		files = append(files, f)
		return nil
	}
	switch {
	case len(nt.UniqueNames) > 0:
		seen := map[string]bool{}
		for _, n := range nt.UniqueNames {
			if seen[n] {
				return nil, errs.Invalid("uniqueNames", "%q is given twice", n)
			}
			seen[n] = true
			f, err := s.lake.File(ctx, n)
			if err != nil {
				return nil, errs.New(errs.NotFound, "uniqueNames", "file %q not found", n)
			}
			if err := add(f); err != nil {
				return nil, err
			}
		}
	default:
		sel := lake.Selection{ItemType: "image", Query: nt.Query, CollectionID: nt.CollectionID}
		if err := s.lake.EachFile(ctx, sel, add); err != nil {
			return nil, err
		}
		if nt.CollectionID != "" { // a video's frames keep their place
			slices.SortStableFunc(files, func(a, b lake.File) int {
				return cmp.Compare(videoIndex(a), videoIndex(b))
			})
		}
	}
	if len(files) == 0 {
		return nil, errs.Invalid("query", "the selection holds no image: a task needs at least one frame")
	}
	return files, nil
}

func videoIndex(f lake.File) int {
	if f.VideoIndex == nil {
		return int(^uint(0) >> 1)
	}
	return *f.VideoIndex
}

func checkTaskName(name string) error {
	switch {
	case len(name) > 200:
		return errs.Invalid("taskName", "taskName is longer than 200 bytes")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errs.Invalid("taskName", "taskName contains control characters")
	}
	return nil
}

// UpdateTask renames a task, marks it done or reopens it. Done needs every
// frame annotated (FailedPrecondition otherwise); an uploaded task then
// follows its annotator's mark too, from then on.
func (s *Service) UpdateTask(ctx context.Context, taskID string, ch TaskChange) (Task, error) {
	if ch.Name != nil {
		if strings.TrimSpace(*ch.Name) == "" {
			return Task{}, errs.Invalid("taskName", "taskName is empty")
		}
		if err := checkTaskName(*ch.Name); err != nil {
			return Task{}, err
		}
	}
	if ch.Status != nil && *ch.Status != Completed && *ch.Status != InProgress {
		return Task{}, errs.Invalid("status", "status must be 2 (mark done) or 1 (reopen), got %d", *ch.Status)
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var seq int64
		err := tx.QueryRowContext(ctx, `SELECT seq FROM upload_session WHERE task_id = ?`, taskID).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return errs.NotFoundf("task %q not found", taskID)
		}
		if err != nil {
			return err
		}
		if ch.Name != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE upload_session SET name = ? WHERE seq = ?`,
				strings.TrimSpace(*ch.Name), seq); err != nil {
				return err
			}
		}
		c, err := loadCounters(ctx, tx, seq)
		if err != nil || ch.Status == nil {
			return err
		}
		if _, jobs, err := jobsStatus(ctx, tx, seq); err != nil {
			return err
		} else if jobs {
			return errs.New(errs.FailedPrecondition, "status", "task %s is cut into jobs: its status follows them "+
				"(completed when every job is accepted)", taskID)
		}
		done := *ch.Status == Completed
		if done && (c.received < c.total || c.completed < c.total) {
			return errs.New(errs.FailedPrecondition, "status", "task %s has %s not annotated yet; annotate them "+
				"(\"no objects\" for an empty one) before marking it done", taskID, frames(c.total-c.completed))
		}
		c.done = sql.NullInt64{Valid: true}
		if done {
			c.done.Int64 = 1
		}
		if _, err := tx.ExecContext(ctx, `UPDATE upload_session SET done = ? WHERE seq = ?`, c.done, seq); err != nil {
			return err
		}
		return s.saveCounters(ctx, tx, c)
	})
	if err != nil {
		return Task{}, err
	}
	return s.Task(ctx, taskID)
}

// TaskWorkspace returns a task with its project's labels and its frames in order.
func (s *Service) TaskWorkspace(ctx context.Context, taskID string) (Workspace, error) {
	t, err := s.Task(ctx, taskID)
	if err != nil {
		return Workspace{}, err
	}
	p, err := s.Project(ctx, t.ProjectID)
	if err != nil {
		return Workspace{}, err
	}
	w := Workspace{Task: t, ProjectID: p.ID, Labels: p.Labels, Frames: []FrameStatus{}}
	var sessionSeq int64
	if err := s.db.R.QueryRowContext(ctx, `SELECT collection_id, seq FROM upload_session WHERE task_id = ?`,
		taskID).Scan(&w.CollectionID, &sessionSeq); err != nil {
		return Workspace{}, err
	}
	if ok, err := s.videoWorkspace(ctx, &w, sessionSeq); ok || err != nil {
		return w, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT f.sequence_no, f.unique_name, f.width, f.height, f.annotated,
		f.box_count, f.version FROM frame f JOIN upload_session s ON s.seq = f.session_seq WHERE s.task_id = ?
		ORDER BY f.sequence_no`, taskID)
	if err != nil {
		return Workspace{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var f FrameStatus
		if err := rows.Scan(&f.SequenceNo, &f.UniqueName, &f.Width, &f.Height, &f.Annotated, &f.BoxCount,
			&f.Version); err != nil {
			return Workspace{}, err
		}
		f.URL = s.lake.URL(lake.File{UniqueName: f.UniqueName})
		w.Frames = append(w.Frames, f)
	}
	return w, rows.Err()
}

// FrameState returns a frame of the project: its human boxes, version and
// the suggestions still open on it.
func (s *Service) FrameState(ctx context.Context, projectID, uniqueName string) (FrameState, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return FrameState{}, err
	}
	return s.frameState(ctx, p, uniqueName)
}

func (s *Service) frameState(ctx context.Context, p Project, uniqueName string) (FrameState, error) {
	st := FrameState{UniqueName: uniqueName, Annotations: json.RawMessage("[]"), Suggestions: []Suggestion{}}
	var fileSeq int64
	err := s.db.R.QueryRowContext(ctx, `SELECT s.task_id, f.sequence_no, f.file_seq, f.width, f.height, f.annotated,
		f.version FROM frame f JOIN upload_session s ON s.seq = f.session_seq WHERE f.unique_name = ? AND s.project_seq = ?`,
		uniqueName, p.seq).Scan(&st.TaskID, &st.SequenceNo, &fileSeq, &st.Width, &st.Height, &st.Annotated, &st.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return FrameState{}, errs.NotFoundf("frame %q not found in project %s", uniqueName, p.ID)
	}
	if err != nil {
		return FrameState{}, err
	}
	human, err := s.lake.BoxesJSON(ctx, lake.BoxQuery{FileSeqs: []int64{fileSeq}, Sources: []lake.Source{lake.Human},
		Operations: []string{p.ID}})
	if err != nil {
		return FrameState{}, err
	}
	if arr, ok := human[fileSeq]; ok {
		st.Annotations = arr
	}
	st.Suggestions, err = s.openSuggestions(ctx, p, fileSeq)
	return st, err
}

// openSuggestions are the machine boxes of a file with one of the project's
// labels that its annotators have neither accepted nor rejected.
func (s *Service) openSuggestions(ctx context.Context, p Project, fileSeq int64) ([]Suggestion, error) {
	labels := make([]string, len(p.Labels))
	for i, l := range p.Labels {
		labels[i] = l.Name
	}
	boxes, err := s.lake.Boxes(ctx, lake.BoxQuery{FileSeqs: []int64{fileSeq}, Sources: []lake.Source{lake.Machine},
		Labels: labels})
	if err != nil || len(boxes) == 0 {
		return []Suggestion{}, err
	}
	decided := map[string]bool{}
	rows, err := s.db.R.QueryContext(ctx, `SELECT annotation_id FROM suggestion_decision WHERE project_seq = ?
		AND file_seq = ?`, p.seq, fileSeq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		decided[id] = true
	}
	out := []Suggestion{}
	for _, b := range boxes {
		if decided[b.ID] {
			continue
		}
		sg := Suggestion{ID: b.ID, Label: b.Label, X: b.X, Y: b.Y, Width: b.W, Height: b.H, Operation: b.Operation}
		if b.Confidence != nil {
			sg.Confidence = *b.Confidence
		}
		out = append(out, sg)
	}
	return out, rows.Err()
}

// DecideSuggestions accepts or rejects open suggestions of a frame (see
// Decision). Accepted ones are added to the frame's human boxes, which
// annotates the frame like any edit; either way they are no longer open.
// An id that is not an open suggestion of the frame is NotFound.
func (s *Service) DecideSuggestions(ctx context.Context, projectID, uniqueName string, d Decision) (FrameResult, error) {
	p, err := s.Project(ctx, projectID)
	if err != nil {
		return FrameResult{}, err
	}
	if len(d.IDs) == 0 && d.MinConfidence == nil {
		return FrameResult{}, errs.Invalid("ids", "give the suggestions' ids or minConfidence")
	}
	st, err := s.frameState(ctx, p, uniqueName)
	if err != nil {
		return FrameResult{}, err
	}
	picked, err := pickSuggestions(st.Suggestions, d)
	if err != nil {
		return FrameResult{}, err
	}
	var boxes []Box
	if err := json.Unmarshal(st.Annotations, &boxes); err != nil {
		return FrameResult{}, err
	}
	for i := range boxes {
		boxes[i].Attributes = normalizedAttrs(boxes[i].Attributes)
	}
	// A rejection writes the boxes back unchanged: one path for versions,
	// counters and the decisions' transaction.
	decision := "rejected"
	if d.Accept {
		decision = "accepted"
		for _, sg := range picked {
			boxes = append(boxes, Box{Label: sg.Label, X: sg.X, Y: sg.Y, Width: sg.Width, Height: sg.Height})
		}
	}
	version := d.Version
	if version == 0 {
		version = st.Version // the boxes read above are the ones rewritten
	}
	after := func(tx *sql.Tx, fileSeq int64) error {
		now := millis(s.now())
		for _, sg := range picked {
			if _, err := tx.ExecContext(ctx, `INSERT INTO suggestion_decision (project_seq, annotation_id, file_seq,
				decision, decided_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET decision = excluded.decision,
				decided_at = excluded.decided_at`, p.seq, sg.ID, fileSeq, decision, now); err != nil {
				return err
			}
		}
		return nil
	}
	// A model's box carries no attributes: accepting it must not need the
	// label's required ones, which the annotator gives in the next edit.
	res, err := s.replaceBoxes(ctx, p.withoutRequired(), frameEdit{version: version, after: after},
		"f.unique_name = ? AND s.project_seq = ?", uniqueName, p.seq)(boxes)
	return res, s.withCurrent(ctx, p, uniqueName, err)
}

// pickSuggestions selects the open suggestions a decision names.
func pickSuggestions(open []Suggestion, d Decision) ([]Suggestion, error) {
	byID := make(map[string]Suggestion, len(open))
	for _, sg := range open {
		byID[sg.ID] = sg
	}
	var picked []Suggestion
	for _, id := range d.IDs {
		sg, ok := byID[id]
		if !ok {
			return nil, errs.New(errs.NotFound, "ids", "%q is not an open suggestion of this frame", id)
		}
		picked = append(picked, sg)
	}
	if d.MinConfidence != nil {
		for _, sg := range open {
			if sg.Confidence >= *d.MinConfidence && !slices.Contains(d.IDs, sg.ID) {
				picked = append(picked, sg)
			}
		}
	}
	return picked, nil
}

// normalizedAttrs turns the stored {} back into no attributes.
func normalizedAttrs(a json.RawMessage) json.RawMessage {
	if s := strings.TrimSpace(string(a)); s == "{}" || s == "null" {
		return nil
	}
	return a
}

// FramePlace is where a file is a frame: its task and its index there.
type FramePlace struct {
	TaskID string `json:"taskId"`
	Index  int    `json:"frameIndex"` // position among the task's frames, from 0
}

// FramePlaces says, for the files of names that are frames of a task, which
// task and where, so a review page can open them in the workspace. A file
// in several tasks (of several projects) is placed in taskID when it is one
// of them, else in the oldest.
func (s *Service) FramePlaces(ctx context.Context, names []string, taskID string) (map[string]FramePlace, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT f.unique_name, s.task_id, (SELECT count(*) FROM frame g
		WHERE g.session_seq = f.session_seq AND g.sequence_no < f.sequence_no) FROM frame f
		JOIN upload_session s ON s.seq = f.session_seq WHERE f.unique_name IN (SELECT value FROM json_each(?))
		ORDER BY s.task_id = ? DESC, s.seq`, jsonArray(names), taskID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]FramePlace{}
	for rows.Next() {
		var name string
		var p FramePlace
		if err := rows.Scan(&name, &p.TaskID, &p.Index); err != nil {
			return nil, err
		}
		if _, ok := out[name]; !ok {
			out[name] = p
		}
	}
	return out, rows.Err()
}

// TaskFileSeqs are the lake files (seqs) of a task's frames.
func (s *Service) TaskFileSeqs(ctx context.Context, taskID string) ([]int64, error) {
	if _, err := s.Task(ctx, taskID); err != nil {
		return nil, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT f.file_seq FROM frame f JOIN upload_session s ON s.seq = f.session_seq
		WHERE s.task_id = ?`, taskID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seqs := []int64{}
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, rows.Err()
}

// taskSession makes the rows a task made from lake files is: a collection
// of its own holding the files (seqs), and its upload session of frames
// frames, done (no frame is uploaded); it answers the session's seq.
func (s *Service) taskSession(ctx context.Context, tx *sql.Tx, projectSeq int64, taskID, name string, typ lake.CollectionType,
	seqs []int64, frames, width, height int) (int64, error) {
	col, err := lake.CreateCollectionTx(ctx, tx, name, typ)
	if errs.Is(err, errs.AlreadyExists) {
		return 0, errs.New(errs.AlreadyExists, "taskName", "a collection named %q exists; a task made from "+
			"lake files gets a collection of its own: choose another taskName", name)
	}
	if err != nil {
		return 0, err
	}
	if err := lake.AddMembersTx(ctx, tx, col.Seq(), seqs); err != nil {
		return 0, err
	}
	now := millis(s.now())
	var sessionSeq int64
	err = tx.QueryRowContext(ctx, `INSERT INTO upload_session (id, task_id, project_seq, collection_id,
		collection_name, total_file_count, received, last_sequence_id, width, height, done, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) RETURNING seq`, id.New("upl"), taskID, projectSeq, col.ID, name,
		frames, frames, frames-1, width, height, now, now).Scan(&sessionSeq)
	return sessionSeq, err
}
