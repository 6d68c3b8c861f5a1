package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/crypto/argon2"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// User is a person who signs in with a name and a password.
type User struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       Role       `json:"role"`
	CreatedAt  time.Time  `json:"createdAt"`
	DisabledAt *time.Time `json:"disabledAt,omitempty"`

	seq int64
}

// Argon2id's parameters for new passwords: OWASP's recommended minimum for
// Argon2id (19 MiB, 2 passes, 1 lane), about 40 ms a sign-in on this
// machine. Each stored hash names its own, so raising them later leaves
// old passwords valid.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// Bounds of a password: at least MinPassword runes, at most MaxPassword
// bytes (Argon2id takes any length; the bound keeps a request cheap).
const (
	MinPassword = 10
	MaxPassword = 1024
)

func hashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(sum)), nil
}

// checkPassword compares password with a stored PHC string, with the
// stored parameters.
func checkPassword(stored, password string) bool {
	parts := strings.Split(stored, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHash is checked against when a name does not exist, so a wrong name
// costs as long as a wrong password and timing does not tell them apart. It is
// made at the first sign-in, not at start: an Argon2id hash costs tens of
// milliseconds of CPU and every CLI command would pay it.
var dummyHash = sync.OnceValue(func() string {
	h, _ := hashPassword("framelake: no such user")
	return h
})

func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return errs.Invalid("name", "a user name is 1 to 64 characters")
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-@", r) {
			return errs.Invalid("name", "a user name has letters, digits and . _ - @ only, got %q", name)
		}
	}
	return nil
}

func checkNewPassword(p string) error {
	switch {
	case len([]rune(p)) < MinPassword:
		return errs.Invalid("password", "a password has at least %d characters", MinPassword)
	case len(p) > MaxPassword:
		return errs.Invalid("password", "a password has at most %d bytes", MaxPassword)
	}
	return nil
}

// CreateUser adds a person.
func (k *Keys) CreateUser(ctx context.Context, name, password string, role Role) (User, error) {
	if err := checkName(name); err != nil {
		return User{}, err
	}
	if err := checkNewPassword(password); err != nil {
		return User{}, err
	}
	role, err := ParseRole(string(role))
	if err != nil {
		return User{}, err
	}
	h, err := hashPassword(password)
	if err != nil {
		return User{}, err
	}
	now := k.now().UTC().Truncate(time.Millisecond)
	u := User{ID: id.New("usr"), Name: name, Role: role, CreatedAt: now}
	err = k.db.W.QueryRowContext(ctx, `INSERT INTO user_account (id, name, password, role, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`, u.ID, name, h, role, now.UnixMilli(), now.UnixMilli()).Scan(&u.seq)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return User{}, errs.New(errs.AlreadyExists, "name", "a user named %q exists", name)
	}
	return u, err
}

const userColumns = `seq, id, name, role, created_at, disabled_at`

func scanUser(s interface{ Scan(...any) error }, extra ...any) (User, error) {
	var u User
	var created int64
	var disabled sql.NullInt64
	if err := s.Scan(append([]any{&u.seq, &u.ID, &u.Name, &u.Role, &created, &disabled}, extra...)...); err != nil {
		return User{}, err
	}
	u.CreatedAt, u.DisabledAt = time.UnixMilli(created).UTC(), optTime(disabled)
	return u, nil
}

// User returns the person named name.
func (k *Keys) User(ctx context.Context, name string) (User, error) {
	u, err := scanUser(k.db.Point.QueryRowContext(ctx, `SELECT `+userColumns+` FROM user_account WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, errs.NotFoundf("no user %q", name)
	}
	return u, err
}

// Users lists every person by name.
func (k *Keys) Users(ctx context.Context) ([]User, error) {
	rows, err := k.db.R.QueryContext(ctx, `SELECT `+userColumns+` FROM user_account ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// UserChange is what an admin changes of a person; nil fields stay.
type UserChange struct {
	Role     *Role   `json:"role,omitempty"`
	Disabled *bool   `json:"disabled,omitempty"`
	Password *string `json:"password,omitempty"`
}

// UpdateUser changes a person. Disabling ends their sessions at once (and
// their keys stop working: Verify checks the person); a new password ends
// their sessions too.
func (k *Keys) UpdateUser(ctx context.Context, name string, ch UserChange) (User, error) {
	if ch.Role != nil {
		r, err := ParseRole(string(*ch.Role))
		if err != nil {
			return User{}, err
		}
		ch.Role = &r
	}
	var newHash string
	if ch.Password != nil {
		if err := checkNewPassword(*ch.Password); err != nil {
			return User{}, err
		}
		var err error
		if newHash, err = hashPassword(*ch.Password); err != nil {
			return User{}, err
		}
	}
	u, err := k.User(ctx, name)
	if err != nil {
		return User{}, err
	}
	now := k.now().UnixMilli()
	err = k.db.Tx(ctx, func(tx *sql.Tx) error {
		if ch.Role != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE user_account SET role = ?, updated_at = ? WHERE seq = ?`, *ch.Role, now, u.seq); err != nil {
				return err
			}
		}
		if ch.Disabled != nil {
			var at any
			if *ch.Disabled {
				at = now
			}
			if _, err := tx.ExecContext(ctx, `UPDATE user_account SET disabled_at = ?, updated_at = ? WHERE seq = ?`, at, now, u.seq); err != nil {
				return err
			}
		}
		if newHash != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE user_account SET password = ?, updated_at = ? WHERE seq = ?`, newHash, now, u.seq); err != nil {
				return err
			}
		}
		if newHash != "" || (ch.Disabled != nil && *ch.Disabled) {
			_, err := tx.ExecContext(ctx, `DELETE FROM session WHERE user_seq = ?`, u.seq)
			return err
		}
		return nil
	})
	if err != nil {
		return User{}, err
	}
	return k.User(ctx, name)
}

// CreateUserKey makes an API key that belongs to the person named user and
// acts with their rights: at most role, and their role ("" takes it) when
// they are an annotator or a reviewer. Its secret is returned once.
func (k *Keys) CreateUserKey(ctx context.Context, user, name string, role Role, ttl time.Duration) (Key, string, error) {
	u, err := k.User(ctx, user)
	if err != nil {
		return Key{}, "", err
	}
	if role == "" || !u.Role.Lakewide() {
		role = u.Role
	}
	kk, secret, err := k.create(ctx, name, role, ttl, &u.seq)
	if err == nil {
		kk.Role, kk.User = capRole(kk.Role, u.Role), u.Name
	}
	return kk, secret, err
}
