package annotate

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"slices"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/lake/shape"
)

const taskColumns = `s.task_id, s.id, s.collection_name, s.total_file_count, s.received, s.completed_frames,
	s.width, s.height, s.status, s.created_at, s.updated_at, s.completed_at, coalesce(s.name, s.collection_name)`

// scanTask reads taskColumns into a task of project p.
func (s *Service) scanTask(sc interface{ Scan(...any) error }, p Project) (Task, error) {
	t := Task{ProjectID: p.ID, ProjectName: p.Name, ContentType: p.ContentType}
	var created, updated int64
	var completed sql.NullInt64
	if err := sc.Scan(&t.ID, &t.UploadID, &t.VideoName, &t.FrameCount, &t.UploadedFrames, &t.CompletedFrames,
		&t.VideoResolutionWidth, &t.VideoResolutionHeight, &t.Status, &created, &updated, &completed, &t.TaskName); err != nil {
		return Task{}, err
	}
	t.CreatedAt, t.UpdatedAt, t.CompletedAt = fromMillis(created), fromMillis(updated), optMillis(completed)
	if t.FrameCount > 0 {
		t.Progress = math.Round(float64(t.CompletedFrames)*10000/float64(t.FrameCount)) / 100
	}
	t.IsDownloadEnable = t.Status == Completed // its annotations are final
	t.DownLoadURL = s.opt.BaseURL + "/api/v1/projects/" + url.PathEscape(p.ID) + "/annotations?taskList=" +
		url.QueryEscape(t.ID)
	return t, nil
}

// Task returns the task with id. It reads on the point-lookup pool: every
// frame edit answers its task, and on the reader pool that read waited
// behind listings for a connection.
func (s *Service) Task(ctx context.Context, taskID string) (Task, error) {
	var projectSeq int64
	err := s.db.Point.QueryRowContext(ctx, `SELECT project_seq FROM upload_session WHERE task_id = ?`, taskID).Scan(&projectSeq)
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, errs.NotFoundf("task %q not found", taskID)
	}
	if err != nil {
		return Task{}, err
	}
	p, err := loadProject(ctx, s.db.Point, "p.seq = ?", projectSeq)
	if err != nil {
		return Task{}, err
	}
	return s.scanTask(s.db.Point.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM upload_session s WHERE s.task_id = ?`,
		taskID), p)
}

// Tasks pages through a project's tasks in the order their sessions were
// initialized (a new task lands on the last page, so paging is stable), and
// counts them all.
func (s *Service) Tasks(ctx context.Context, q TaskQuery) ([]Task, int, error) {
	size, err := pageSize(q.PageIndex, q.PageSize, DefaultTaskPageSize, MaxTaskPageSize)
	if err != nil {
		return nil, 0, err
	}
	p, err := s.Project(ctx, q.ProjectID)
	if err != nil {
		return nil, 0, err
	}
	var total int
	if err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM upload_session WHERE project_seq = ?`,
		p.seq).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+taskColumns+` FROM upload_session s WHERE s.project_seq = ?
		ORDER BY s.seq LIMIT ? OFFSET ?`, p.seq, size, q.PageIndex*size)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	tasks := []Task{}
	for rows.Next() {
		t, err := s.scanTask(rows, p)
		if err != nil {
			return nil, 0, err
		}
		tasks = append(tasks, t)
	}
	return tasks, total, rows.Err()
}

// pageSize checks paging: a size over max is an error, not a clamp; 0 is def.
func pageSize(index, size, def, max int) (int, error) {
	switch {
	case index < 0:
		return 0, errs.Invalid("pageIndex", "pageIndex must be at least 0")
	case index > math.MaxInt32:
		return 0, errs.Invalid("pageIndex", "pageIndex must be at most %d", math.MaxInt32)
	case size < 0:
		return 0, errs.Invalid("pageSize", "pageSize must be at least 1")
	case size == 0:
		return def, nil
	case size > max:
		return 0, errs.Invalid("pageSize", "pageSize must be at most %d", max)
	}
	return size, nil
}

// Download returns a page of a project's tasks with every frame received and
// the project's human boxes on them, frames in sequence order. Labels
// filters the boxes (frames without a matching box are still listed), TaskIDs
// the tasks; a label not in the project is InvalidArgument and a task not in
// it NotFound.
func (s *Service) Download(ctx context.Context, q DownloadQuery) (Download, error) {
	size, err := pageSize(q.PageIndex, q.PageSize, DefaultDownloadPageSize, MaxDownloadPageSize)
	if err != nil {
		return Download{}, err
	}
	p, err := s.Project(ctx, q.ProjectID)
	if err != nil {
		return Download{}, err
	}
	for _, l := range q.Labels {
		if !p.hasLabel(l) {
			return Download{}, errs.Invalid("labels", "label %q is not a label of project %s (%s)", l, p.ID, p.labelNames())
		}
	}
	d := Download{PageIndex: q.PageIndex, PageSize: size, Data: []TaskFrames{},
		MetaData: DownloadMeta{ProjectID: p.ID, ProjectName: p.Name, ContentType: p.ContentType, Labels: p.Labels}}
	filter, args := `s.project_seq = ?`, []any{p.seq}
	if len(q.TaskIDs) > 0 {
		if err := s.checkTasks(ctx, p, q.TaskIDs); err != nil {
			return Download{}, err
		}
		filter += ` AND s.task_id IN (SELECT value FROM json_each(?))`
		args = append(args, jsonArray(q.TaskIDs))
	}
	if err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM upload_session s WHERE `+filter,
		args...).Scan(&d.TaskCount); err != nil {
		return Download{}, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT s.seq, s.task_id, s.collection_name FROM upload_session s
		WHERE `+filter+` ORDER BY s.seq LIMIT ? OFFSET ?`, append(args, size, q.PageIndex*size)...)
	if err != nil {
		return Download{}, err
	}
	var seqs []int64
	for rows.Next() {
		var seq int64
		var t TaskFrames
		if err := rows.Scan(&seq, &t.TaskID, &t.TaskName); err != nil {
			rows.Close()
			return Download{}, err
		}
		t.Frames = []FrameAnnotations{}
		seqs = append(seqs, seq)
		d.Data = append(d.Data, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Download{}, err
	}
	return d, s.fillFrames(ctx, p, q.Labels, seqs, d.Data)
}

// checkTasks fails with NotFound naming the first id that is not a task of p.
func (s *Service) checkTasks(ctx context.Context, p Project, ids []string) error {
	rows, err := s.db.R.QueryContext(ctx, `SELECT task_id FROM upload_session WHERE project_seq = ?
		AND task_id IN (SELECT value FROM json_each(?))`, p.seq, jsonArray(ids))
	if err != nil {
		return err
	}
	defer rows.Close()
	found := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		found[id] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		if !found[id] {
			return errs.NotFoundf("task %q not found in project %s", id, p.ID)
		}
	}
	return nil
}

// fillFrames adds the frames of the sessions seqs (parallel to data) with
// their boxes: one query for the frames, one for all their boxes.
func (s *Service) fillFrames(ctx context.Context, p Project, labels []string, seqs []int64, data []TaskFrames) error {
	if len(seqs) == 0 {
		return nil
	}
	index := make(map[int64]int, len(seqs))
	for i, seq := range seqs {
		index[seq] = i
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT session_seq, sequence_no, file_seq, unique_name, width, height
		FROM frame WHERE session_seq IN (SELECT value FROM json_each(?)) ORDER BY session_seq, sequence_no`,
		jsonArray(seqs))
	if err != nil {
		return err
	}
	type at struct{ task, frame int }
	where := map[int64]at{}
	var files []int64
	for rows.Next() {
		var sessionSeq, fileSeq int64
		var fa FrameAnnotations
		if err := rows.Scan(&sessionSeq, &fa.FrameID, &fileSeq, &fa.UniqueName, &fa.Width, &fa.Height); err != nil {
			rows.Close()
			return err
		}
		fa.URL = s.lake.URL(lake.File{UniqueName: fa.UniqueName})
		fa.Annotations, fa.Shapes = json.RawMessage("[]"), json.RawMessage("[]")
		t := &data[index[sessionSeq]]
		where[fileSeq] = at{index[sessionSeq], len(t.Frames)}
		t.Frames = append(t.Frames, fa)
		files = append(files, fileSeq)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	q := lake.BoxQuery{FileSeqs: files, Labels: labels, Sources: []lake.Source{lake.Human}, Operations: []string{p.ID},
		Types: []shape.Type{shape.Box}}
	boxes, err := s.lake.BoxesJSON(ctx, q)
	if err != nil {
		return err
	}
	q.Types = slices.DeleteFunc(slices.Clone(shape.Types), func(t shape.Type) bool { return t == shape.Box })
	shapes, err := s.lake.BoxesJSON(ctx, q)
	if err != nil {
		return err
	}
	for seq, w := range where {
		fr := &data[w.task].Frames[w.frame]
		if arr, ok := boxes[seq]; ok {
			fr.Annotations = arr
		}
		if arr, ok := shapes[seq]; ok {
			fr.Shapes = arr
		}
	}
	return nil
}
