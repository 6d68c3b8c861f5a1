package annotate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// CreateProject creates a project with its labels.
func (s *Service) CreateProject(ctx context.Context, np NewProject) (Project, error) {
	if err := checkNewProject(np, true); err != nil {
		return Project{}, err
	}
	return s.insertProject(ctx, np)
}

func (s *Service) insertProject(ctx context.Context, np NewProject) (Project, error) {
	now := s.now().UTC().Truncate(1e6)
	p := Project{ID: id.New("prj"), Name: strings.TrimSpace(np.Name), ContentType: np.ContentType,
		Labels: make([]Label, len(np.Labels)), CreatedAt: now}
	for i, l := range np.Labels {
		l.Name = strings.TrimSpace(l.Name)
		p.Labels[i] = l
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `INSERT INTO project (id, name, content_type, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?) RETURNING seq`, p.ID, p.Name, p.ContentType, millis(now), millis(now)).Scan(&p.seq); err != nil {
			return err
		}
		where := func(i int) string { return fmt.Sprintf("labels[%d]", i) }
		if err := checkSkeletonsTx(ctx, tx, p.seq, where, p.Labels); err != nil {
			return err
		}
		for i, l := range p.Labels {
			decl, err := l.declarationJSON()
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO project_label (project_seq, name, description, position,
				declaration) VALUES (?, ?, ?, ?, ?)`, p.seq, l.Name, l.Description, i, decl); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Project{}, errs.Prefix(err, "create project")
	}
	return p, nil
}

// checkNewProject refuses a project that is not well formed; one without
// labels only when needLabels.
func checkNewProject(np NewProject, needLabels bool) error {
	switch {
	case strings.TrimSpace(np.Name) == "":
		return errs.Invalid("projectName", "projectName is required")
	case len(np.Name) > 200:
		return errs.Invalid("projectName", "projectName is longer than 200 bytes")
	case strings.IndexFunc(np.Name, unicode.IsControl) >= 0:
		return errs.Invalid("projectName", "projectName contains control characters")
	case np.ContentType != Video && np.ContentType != Image:
		return errs.Invalid("contentType", "contentType must be 1 (video) or 2 (image), got %d", np.ContentType)
	case len(np.Labels) == 0 && needLabels:
		return errs.Invalid("labels", "labels is required: give at least one label")
	case len(np.Labels) > 10000:
		return errs.Invalid("labels", "a project has at most 10000 labels")
	}
	seen := make(map[string]bool, len(np.Labels))
	for i, l := range np.Labels {
		if err := checkLabel(fmt.Sprintf("labels[%d]", i), l, seen); err != nil {
			return err
		}
	}
	return nil
}

// checkLabel refuses a label that is not well formed, or whose name is in
// seen (then adds it); where names it in messages.
func checkLabel(where string, l Label, seen map[string]bool) error {
	name := strings.TrimSpace(l.Name)
	switch {
	case name == "":
		return errs.Invalid("labels", "%s: labelName is empty", where)
	case len(name) > 200:
		return errs.Invalid("labels", "%s: labelName is longer than 200 bytes", where)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errs.Invalid("labels", "%s: labelName contains control characters", where)
	case seen[name]:
		return errs.Invalid("labels", "%s: label %q is given twice; label names are unique in a project", where, name)
	case len(l.Description) > 10000:
		return errs.Invalid("labels", "%s: labelDescription is longer than 10000 bytes", where)
	}
	if seen != nil {
		seen[name] = true
	}
	return checkDeclaration(where, l)
}

// Project returns the project with id. It reads on the point-lookup pool:
// a frame edit starts here, and on the reader pool it waited behind
// listings for a connection (see sqlitedb.DB.Point).
func (s *Service) Project(ctx context.Context, projectID string) (Project, error) {
	return loadProject(ctx, s.db.Point, "p.id = ?", projectID)
}

// loadProject reads a project and its labels, on the reader pool or in a tx.
func loadProject(ctx context.Context, q ctxTx, where string, arg any) (Project, error) {
	var p Project
	var created int64
	err := q.QueryRowContext(ctx, `SELECT p.seq, p.id, p.name, p.content_type, p.created_at FROM project p
		WHERE `+where, arg).Scan(&p.seq, &p.ID, &p.Name, &p.ContentType, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Project{}, errs.NotFoundf("project %q not found", fmt.Sprint(arg))
	}
	if err != nil {
		return Project{}, err
	}
	p.CreatedAt = fromMillis(created)
	rows, err := q.QueryContext(ctx, `SELECT name, description, declaration FROM project_label WHERE project_seq = ?
		ORDER BY position`, p.seq)
	if err != nil {
		return Project{}, err
	}
	defer rows.Close()
	p.Labels = []Label{}
	for rows.Next() {
		var l Label
		var decl sql.NullString
		if err := rows.Scan(&l.Name, &l.Description, &decl); err != nil {
			return Project{}, err
		}
		if err := l.setDeclaration(decl); err != nil {
			return Project{}, err
		}
		p.Labels = append(p.Labels, l)
	}
	return p, rows.Err()
}
