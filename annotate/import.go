package annotate

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
)

// ImportProject finds the project an import goes to, by id (prj_...) or by
// name, creating an image project of that name when none has it, and adds
// to its labels, after those it has, the given ones it lacks. It returns the
// labels it added. An import of media without labels creates a project
// without labels: its frames can be reviewed, and a labelled import into it
// later brings the labels (a project made through the API needs labels).
func (s *Service) ImportProject(ctx context.Context, ref string, labels []string) (p Project, created bool, added []string, err error) {
	ref = strings.TrimSpace(ref)
	if strings.HasPrefix(ref, "prj_") {
		p, err = s.Project(ctx, ref)
	} else {
		p, err = s.projectByName(ctx, ref)
		if errs.Is(err, errs.NotFound) {
			np := NewProject{Name: ref, ContentType: Image}
			for _, l := range labels {
				np.Labels = append(np.Labels, Label{Name: l})
			}
			if err := checkNewProject(np, false); err != nil {
				return Project{}, false, nil, err
			}
			p, err = s.insertProject(ctx, np)
			return p, err == nil, labels, err
		}
	}
	if err != nil {
		return Project{}, false, nil, err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) (err error) {
		added, err = addLabels(ctx, tx, p.seq, labels)
		return err
	})
	return p, false, added, err
}

func (s *Service) projectByName(ctx context.Context, name string) (Project, error) {
	var ids []string
	rows, err := s.db.R.QueryContext(ctx, `SELECT id FROM project WHERE name = ? ORDER BY seq`, name)
	if err != nil {
		return Project{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return Project{}, err
		}
		ids = append(ids, id)
	}
	switch {
	case rows.Err() != nil:
		return Project{}, rows.Err()
	case len(ids) == 0:
		return Project{}, errs.NotFoundf("no project is named %q", name)
	case len(ids) > 1:
		return Project{}, errs.Invalid("project", "%d projects are named %q (%s); give the project's id",
			len(ids), name, strings.Join(ids, ", "))
	}
	return s.Project(ctx, ids[0])
}

// addLabels appends to a project's labels those of names it lacks, in order.
func addLabels(ctx context.Context, tx *sql.Tx, projectSeq int64, names []string) ([]string, error) {
	var added []string
	for _, n := range names {
		res, err := tx.ExecContext(ctx, `INSERT INTO project_label (project_seq, name, description, position)
			SELECT ?, ?, '', coalesce(max(position), -1) + 1 FROM project_label WHERE project_seq = ?
			ON CONFLICT DO NOTHING`, projectSeq, n, projectSeq)
		if err != nil {
			return nil, fmt.Errorf("add label %q: %w", n, err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			added = append(added, n)
		}
	}
	return added, nil
}

// ImportFramesTx makes files, just stored in tx into sess's collection, the
// session's next frames in their order, each with boxes[name] as the
// project's human boxes, and counts them in the task: an imported frame is
// annotated, as one uploaded with its labels is. A box's label the project
// lacks is added to it. totalFileCount grows when the frames pass it.
func (s *Service) ImportFramesTx(ctx context.Context, tx *sql.Tx, sess Session, files []lake.File, boxes map[string][]lake.Box) error {
	c, err := loadCounters(ctx, tx, sess.seq)
	if err != nil {
		return err
	}
	var p Project
	if p, err = loadProject(ctx, tx, "p.seq = ?", sess.projectSeq); err != nil {
		return err
	}
	for _, f := range files {
		for _, b := range boxes[f.Name] {
			if !p.hasLabel(b.Label) {
				if _, err := addLabels(ctx, tx, p.seq, []string{b.Label}); err != nil {
					return err
				}
				p.Labels = append(p.Labels, Label{Name: b.Label})
			}
		}
	}
	now := millis(s.now())
	for _, f := range files {
		seqNo := c.last + 1
		if _, err := tx.ExecContext(ctx, `INSERT INTO frame (session_seq, sequence_no, file_seq, unique_name, width,
			height, box_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, sess.seq, seqNo, f.Seq(),
			f.UniqueName, f.Width, f.Height, len(boxes[f.Name]), now, now); err != nil {
			return fmt.Errorf("insert frame %s: %w", f.UniqueName, err)
		}
		if err := lake.ReplaceBoxes(ctx, tx, f.Seq(), lake.Human, p.ID, 0, boxes[f.Name]); err != nil {
			return err
		}
		if err := lake.SetVideoIndexTx(ctx, tx, f.Seq(), seqNo); err != nil {
			return err
		}
		c.received++
		c.completed++
		c.last = seqNo
		c.total = max(c.total, c.received)
		if c.width == 0 {
			c.width, c.height = f.Width, f.Height
		}
	}
	return s.saveCounters(ctx, tx, c)
}
