package auth

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/framelake/framelake/errs"
)

// Member is a person's role in one project: annotator or reviewer. Admins
// and curators act on every project and viewers see every one, so they need
// no membership; a viewer made a member gains the member role there.
type Member struct {
	ProjectID string    `json:"projectId"`
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	UserRole  Role      `json:"userRole"` // the person's own role
	Disabled  bool      `json:"disabled,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// SetMember makes the person named name a member of projectID with role
// (annotator or reviewer; "" takes the person's own role when it is one of
// them), replacing the role they had there. The caller checks the project
// exists: auth does not know projects.
func (k *Keys) SetMember(ctx context.Context, projectID, name string, role Role) (Member, error) {
	if projectID == "" {
		return Member{}, errs.Invalid("projectId", "a project id is required")
	}
	u, err := k.User(ctx, name)
	if err != nil {
		return Member{}, err
	}
	if role == "" {
		role = u.Role
	}
	if role, err = ParseRole(string(role)); err != nil {
		return Member{}, err
	}
	if role.Lakewide() {
		return Member{}, errs.Invalid("role", "a member's role is annotator or reviewer, got %q (%s is %s everywhere)", role, u.Name, u.Role)
	}
	now := k.now().UTC().Truncate(time.Millisecond)
	_, err = k.db.W.ExecContext(ctx, `INSERT INTO project_member (project_id, user_seq, role, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (project_id, user_seq) DO UPDATE SET role = excluded.role`, projectID, u.seq, role, now.UnixMilli())
	if err != nil {
		return Member{}, err
	}
	return k.member(ctx, projectID, u.Name)
}

// RemoveMember ends name's membership of projectID.
func (k *Keys) RemoveMember(ctx context.Context, projectID, name string) error {
	r, err := k.db.W.ExecContext(ctx, `DELETE FROM project_member WHERE project_id = ?
		AND user_seq = (SELECT seq FROM user_account WHERE name = ?)`, projectID, name)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return errs.NotFoundf("%q is not a member of project %s", name, projectID)
	}
	return nil
}

// DeleteProjectMembers removes every membership of a deleted project, so no
// row is left that could grant anything.
func (k *Keys) DeleteProjectMembers(ctx context.Context, projectID string) error {
	_, err := k.db.W.ExecContext(ctx, `DELETE FROM project_member WHERE project_id = ?`, projectID)
	return err
}

const memberQuery = `SELECT m.project_id, u.name, m.role, u.role, u.disabled_at IS NOT NULL, m.created_at
	FROM project_member m JOIN user_account u ON u.seq = m.user_seq`

func scanMember(s interface{ Scan(...any) error }) (Member, error) {
	var m Member
	var created int64
	err := s.Scan(&m.ProjectID, &m.Name, &m.Role, &m.UserRole, &m.Disabled, &created)
	m.CreatedAt = time.UnixMilli(created).UTC()
	return m, err
}

func (k *Keys) member(ctx context.Context, projectID, name string) (Member, error) {
	m, err := scanMember(k.db.Point.QueryRowContext(ctx, memberQuery+` WHERE m.project_id = ? AND u.name = ?`, projectID, name))
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, errs.NotFoundf("%q is not a member of project %s", name, projectID)
	}
	return m, err
}

// Members lists a project's members by name.
func (k *Keys) Members(ctx context.Context, projectID string) ([]Member, error) {
	return k.members(ctx, memberQuery+` WHERE m.project_id = ? ORDER BY u.name`, projectID)
}

// Memberships lists the projects the person named name is a member of.
func (k *Keys) Memberships(ctx context.Context, name string) ([]Member, error) {
	return k.members(ctx, memberQuery+` WHERE u.name = ? ORDER BY m.project_id`, name)
}

func (k *Keys) members(ctx context.Context, q string, args ...any) ([]Member, error) {
	rows, err := k.db.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Member{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ProjectRole is the role the person named name holds in projectID: their
// membership's, or "" when they are not a member or are disabled (a
// disabled person's row grants nothing even before their sessions and keys
// are refused).
func (k *Keys) ProjectRole(ctx context.Context, projectID, name string) (Role, error) {
	m, err := k.member(ctx, projectID, name)
	if errs.Is(err, errs.NotFound) {
		return "", nil
	}
	if err != nil || m.Disabled {
		return "", err
	}
	return m.Role, nil
}
