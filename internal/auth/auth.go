// Package auth keeps who may do what in framelake: API keys (a public key id
// and a secret shown once, a role, optional expiry, revocation), the people
// who sign in (users.go, sessions.go), their roles, and which projects the
// annotators and reviewers among them belong to (members.go).
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
	"github.com/framelake/framelake/internal/sqlitedb"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the api_key table's schema files.
var Migrations, _ = fs.Sub(migrations, "migrations")

// Role is what a person or a key may do (docs/team.md "Roles"). Admin,
// Write (the curator) and Read (the viewer) act on the whole lake; an
// Annotator and a Reviewer act only in the projects they are members of
// (project_member), and have no lake-wide read at all.
type Role string

const (
	Admin     Role = "admin"     // everything, including people and model registration
	Write     Role = "write"     // the curator: read and change the lake, datasets, models, evaluations, projects
	Read      Role = "read"      // the viewer: read only, everywhere
	Annotator Role = "annotator" // the tasks of their projects (jobs assigned to them)
	Reviewer  Role = "reviewer"  // review the tasks of their projects
)

// Curator and Viewer are the team's names (issue 35) for Write and Read.
// Roles are stored and answered as write and read, the spelling existing
// keys, scripts and the web app know; both spellings are accepted.
const (
	Curator = Write
	Viewer  = Read
)

// ParseRole checks a role name, accepting curator for write and viewer for
// read.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case Admin, Write, Read, Annotator, Reviewer:
		return r, nil
	case "curator":
		return Write, nil
	case "viewer":
		return Read, nil
	}
	return "", errs.Invalid("role", "role must be admin, curator (write), annotator, reviewer or viewer (read), got %q", s)
}

// Lakewide reports whether r acts on the whole lake (admin, curator,
// viewer) rather than only in the projects its person is a member of.
func (r Role) Lakewide() bool { return r == Admin || r == Write || r == Read }

// Allows reports whether r includes need. Annotators and reviewers include
// only themselves: what they may do depends on the project, which
// projectAccess (web) asks of Member.
func (r Role) Allows(need Role) bool {
	rank := map[Role]int{Read: 1, Write: 2, Admin: 3}
	if !need.Lakewide() {
		return r == need || rank[r] >= rank[Write]
	}
	return rank[r] >= rank[need]
}

// capRole is what a person's key acts as: the person's role when it is a
// project role (a key cannot lift an annotator to the lake), else the lower
// of the key's and the person's.
func capRole(key, user Role) Role {
	switch {
	case !user.Lakewide():
		return user
	case !key.Lakewide() || user.Allows(key):
		return key
	}
	return user
}

// Key is an API key without its secret.
type Key struct {
	ID        string     `json:"id"`
	Key       string     `json:"key"`
	Name      string     `json:"name"`
	Role      Role       `json:"role"`
	User      string     `json:"user,omitempty"` // the person the key belongs to, "" for a key of its own
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// Keys is the key store.
type Keys struct {
	db   *sqlitedb.DB
	now  func() time.Time
	sess SessionOptions
}

// New returns the key store of a migrated database.
func New(db *sqlitedb.DB) *Keys {
	return &Keys{db: db, now: time.Now, sess: SessionOptions{Idle: DefaultSessionIdle, Absolute: DefaultSessionAbsolute}}
}

// Create makes a key; the secret is returned once and never stored.
// ttl 0 means the key does not expire.
func (k *Keys) Create(ctx context.Context, name string, role Role, ttl time.Duration) (Key, string, error) {
	return k.create(ctx, name, role, ttl, nil)
}

// create makes a key, a person's when userSeq is set.
func (k *Keys) create(ctx context.Context, name string, role Role, ttl time.Duration, userSeq *int64) (Key, string, error) {
	if strings.TrimSpace(name) == "" {
		return Key{}, "", errs.Invalid("name", "key name is empty")
	}
	role, err := ParseRole(string(role))
	if err != nil {
		return Key{}, "", err
	}
	if userSeq == nil && !role.Lakewide() {
		// Membership is a person's: a key of nobody could never be a member.
		return Key{}, "", errs.Invalid("role", "an %s key belongs to a person: make it for them (framelake users key NAME)", role)
	}
	if ttl < 0 {
		return Key{}, "", errs.Invalid("expires", "expiry must be in the future")
	}
	now := k.now().UTC().Truncate(time.Millisecond)
	key := Key{ID: id.New("key"), Key: "fl" + id.Token(10), Name: name, Role: role, CreatedAt: now}
	secret := id.Token(32)
	var exp *int64
	if ttl > 0 {
		t := now.Add(ttl)
		key.ExpiresAt = &t
		ms := t.UnixMilli()
		exp = &ms
	}
	_, err = k.db.W.ExecContext(ctx, `INSERT INTO api_key (id, key, name, role, secret_hash, created_at, expires_at, user_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, key.ID, key.Key, name, role, hash(secret), now.UnixMilli(), exp, userSeq)
	if err != nil {
		return Key{}, "", err
	}
	return key, secret, nil
}

func hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// Verify returns the key for a key/secret pair, or an unauthenticated error
// that does not say which part was wrong.
func (k *Keys) Verify(ctx context.Context, key, secret string) (Key, error) {
	bad := errs.New(errs.Unauthenticated, "", "invalid api key or secret")
	if key == "" || secret == "" {
		return Key{}, errs.New(errs.Unauthenticated, "", "api key and secret required: headers key and secret, or HTTP Basic")
	}
	var stored string
	var userName, userRole sql.NullString
	var userDisabled sql.NullInt64
	kk, err := k.scan(k.db.Point.QueryRowContext(ctx, `SELECT `+keyColumns+`, secret_hash, u.name, u.role, u.disabled_at
		FROM api_key LEFT JOIN user_account u ON u.seq = api_key.user_seq WHERE key = ?`, key), &stored, &userName, &userRole, &userDisabled)
	if errors.Is(err, sql.ErrNoRows) {
		return Key{}, bad
	}
	if err != nil {
		return Key{}, err
	}
	if subtle.ConstantTimeCompare([]byte(stored), []byte(hash(secret))) != 1 {
		return Key{}, bad
	}
	if kk.RevokedAt != nil {
		return Key{}, errs.New(errs.Unauthenticated, "", "api key %s is revoked", key)
	}
	if kk.ExpiresAt != nil && !k.now().Before(*kk.ExpiresAt) {
		return Key{}, errs.New(errs.Unauthenticated, "", "api key %s expired", key)
	}
	// A person's key acts with their rights: never more than theirs, and
	// not at all once they are disabled.
	if userDisabled.Valid {
		return Key{}, errs.New(errs.Unauthenticated, "", "api key %s belongs to a disabled user", key)
	}
	if userRole.Valid {
		kk.Role, kk.User = capRole(kk.Role, Role(userRole.String)), userName.String
	}
	return kk, nil
}

const keyColumns = `api_key.id, key, api_key.name, api_key.role, api_key.created_at, expires_at, revoked_at`

func (k *Keys) scan(s interface{ Scan(...any) error }, extra ...any) (Key, error) {
	var kk Key
	var created int64
	var exp, rev sql.NullInt64
	if err := s.Scan(append([]any{&kk.ID, &kk.Key, &kk.Name, &kk.Role, &created, &exp, &rev}, extra...)...); err != nil {
		return Key{}, err
	}
	kk.CreatedAt = time.UnixMilli(created).UTC()
	kk.ExpiresAt, kk.RevokedAt = optTime(exp), optTime(rev)
	return kk, nil
}

func optTime(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMilli(v.Int64).UTC()
	return &t
}

// List returns every key, newest first, with the person each belongs to.
func (k *Keys) List(ctx context.Context) ([]Key, error) {
	rows, err := k.db.R.QueryContext(ctx, `SELECT `+keyColumns+`, coalesce(u.name, '')
		FROM api_key LEFT JOIN user_account u ON u.seq = api_key.user_seq ORDER BY api_key.created_at DESC, api_key.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Key
	for rows.Next() {
		var user string
		kk, err := k.scan(rows, &user)
		if err != nil {
			return nil, err
		}
		kk.User = user
		out = append(out, kk)
	}
	return out, rows.Err()
}

// Revoke revokes the key with this key string or id.
func (k *Keys) Revoke(ctx context.Context, keyOrID string) error {
	r, err := k.db.W.ExecContext(ctx, `UPDATE api_key SET revoked_at = ? WHERE (key = ? OR id = ?) AND revoked_at IS NULL`,
		k.now().UnixMilli(), keyOrID, keyOrID)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return errs.NotFoundf("no active api key %q", keyOrID)
	}
	return nil
}

// Count returns how many keys exist, revoked ones included.
func (k *Keys) Count(ctx context.Context) (int, error) {
	var n int
	err := k.db.R.QueryRowContext(ctx, `SELECT count(*) FROM api_key`).Scan(&n)
	return n, err
}
