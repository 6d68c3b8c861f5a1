package annotate

import (
	"context"
	"database/sql"
	"math"
)

// ListProjects pages through the projects in the order they were created (a
// new project lands on the last page, so paging is stable), each with its
// labels and its tasks' counts, and counts them all.
func (s *Service) ListProjects(ctx context.Context, q ProjectQuery) ([]ProjectSummary, int, error) {
	size, err := pageSize(q.PageIndex, q.PageSize, DefaultProjectPageSize, MaxProjectPageSize)
	if err != nil {
		return nil, 0, err
	}
	var total int
	if err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM project`).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT p.seq, p.id, p.name, p.content_type, p.created_at,
			count(s.seq), coalesce(sum(s.total_file_count), 0), coalesce(sum(s.received), 0),
			coalesce(sum(s.completed_frames), 0), coalesce(sum(s.status = 2), 0)
		FROM (SELECT * FROM project ORDER BY seq LIMIT ? OFFSET ?) p
		LEFT JOIN upload_session s ON s.project_seq = p.seq
		GROUP BY p.seq ORDER BY p.seq`, size, q.PageIndex*size)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list := []ProjectSummary{}
	bySeq := map[int64]int{}
	for rows.Next() {
		var p ProjectSummary
		var created int64
		if err := rows.Scan(&p.seq, &p.ID, &p.Name, &p.ContentType, &created, &p.TaskCount, &p.FrameCount,
			&p.UploadedFrames, &p.CompletedFrames, &p.CompletedTasks); err != nil {
			return nil, 0, err
		}
		p.CreatedAt, p.Labels = fromMillis(created), []Label{}
		if p.FrameCount > 0 {
			p.Progress = math.Round(float64(p.CompletedFrames)*10000/float64(p.FrameCount)) / 100
		}
		bySeq[p.seq] = len(list)
		list = append(list, p)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return list, total, s.pageLabels(ctx, list, bySeq)
}

// pageLabels fills in the labels of a page of projects with one query.
func (s *Service) pageLabels(ctx context.Context, list []ProjectSummary, bySeq map[int64]int) error {
	if len(list) == 0 {
		return nil
	}
	seqs := make([]int64, len(list))
	for i, p := range list {
		seqs[i] = p.seq
	}
	rows, err := s.db.R.QueryContext(ctx, `SELECT project_seq, name, description, declaration FROM project_label
		WHERE project_seq IN (SELECT value FROM json_each(?)) ORDER BY project_seq, position`, jsonArray(seqs))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var l Label
		var decl sql.NullString
		if err := rows.Scan(&seq, &l.Name, &l.Description, &decl); err != nil {
			return err
		}
		if err := l.setDeclaration(decl); err != nil {
			return err
		}
		p := &list[bySeq[seq]]
		p.Labels = append(p.Labels, l)
	}
	return rows.Err()
}
