package auth

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// SessionOptions bound how long a sign-in lasts.
type SessionOptions struct {
	Idle     time.Duration // ends after this long unused; default DefaultSessionIdle
	Absolute time.Duration // ends this long after sign-in whatever happens; default DefaultSessionAbsolute
}

// Session lengths by default.
const (
	DefaultSessionIdle     = 12 * time.Hour
	DefaultSessionAbsolute = 7 * 24 * time.Hour
)

// Guessing is slowed per name and per address: after freeFailures wrong
// passwords in a row, each next try waits 2^(n-freeFailures) seconds after
// the last failure, at most maxBackoff: about 60 guesses an hour at a name
// once the wait is capped.
const (
	freeFailures = 3
	maxBackoff   = time.Minute
	touchEvery   = time.Minute // a session's last use is written at most this often
)

// Session is a signed-in person: Token goes in the cookie, CSRF in the
// header of every write made with it.
type Session struct {
	Token     string    `json:"-"`
	CSRF      string    `json:"csrfToken"`
	User      User      `json:"user"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// SetSessionOptions sets the session lengths (zero fields take defaults),
// before the keys serve requests.
func (k *Keys) SetSessionOptions(o SessionOptions) {
	if o.Idle <= 0 {
		o.Idle = DefaultSessionIdle
	}
	if o.Absolute <= 0 {
		o.Absolute = DefaultSessionAbsolute
	}
	k.sess = o
}

func (k *Keys) sessionOptions() SessionOptions { return k.sess }

// SignIn checks a name and password from addr and opens a session. A wrong
// name and a wrong password get the same answer in the same time; a person
// or address that failed too often is told to wait, and the failure is
// logged.
func (k *Keys) SignIn(ctx context.Context, name, password, addr string, log *slog.Logger) (Session, error) {
	who := []string{"user:" + strings.ToLower(name), "addr:" + addr}
	if wait, err := k.backoff(ctx, who); err != nil {
		return Session{}, err
	} else if wait > 0 {
		log.Warn("sign-in refused: too many failures", "name", name, "addr", addr, "wait", wait)
		return Session{}, errs.New(errs.TooManyAttempts, "", "too many failed sign-ins: try again in %s", wait.Round(time.Second))
	}
	var stored string
	u, err := scanUser(k.db.Point.QueryRowContext(ctx, `SELECT `+userColumns+`, password FROM user_account WHERE name = ?`, name), &stored)
	if errors.Is(err, sql.ErrNoRows) {
		stored = dummyHash()
	} else if err != nil {
		return Session{}, err
	}
	ok := checkPassword(stored, password) && err == nil
	if !ok || u.DisabledAt != nil {
		if ferr := k.fail(ctx, who); ferr != nil {
			return Session{}, ferr
		}
		log.Warn("sign-in failed", "name", name, "addr", addr)
		return Session{}, errs.New(errs.Unauthenticated, "", "the name or the password is wrong")
	}
	if _, err := k.db.W.ExecContext(ctx, `DELETE FROM login_failure WHERE who = ?`, who[0]); err != nil {
		return Session{}, err
	}
	o, now := k.sessionOptions(), k.now()
	s := Session{Token: id.Token(32), CSRF: id.Token(32), User: u, ExpiresAt: now.Add(o.Absolute).UTC().Truncate(time.Millisecond)}
	_, err = k.db.W.ExecContext(ctx, `INSERT INTO session (token_hash, user_seq, csrf, created_at, last_seen_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, hash(s.Token), u.seq, s.CSRF, now.UnixMilli(), now.UnixMilli(), s.ExpiresAt.UnixMilli())
	return s, err
}

// backoff is how long who must still wait before another try.
func (k *Keys) backoff(ctx context.Context, who []string) (time.Duration, error) {
	var longest time.Duration
	for _, w := range who {
		var n int
		var last int64
		err := k.db.Point.QueryRowContext(ctx, `SELECT failures, last_at FROM login_failure WHERE who = ?`, w).Scan(&n, &last)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n < freeFailures {
			continue
		}
		wait := time.Duration(math.Min(math.Pow(2, float64(n-freeFailures)), maxBackoff.Seconds()) * float64(time.Second))
		if left := time.UnixMilli(last).Add(wait).Sub(k.now()); left > longest {
			longest = left
		}
	}
	return longest, nil
}

func (k *Keys) fail(ctx context.Context, who []string) error {
	for _, w := range who {
		if _, err := k.db.W.ExecContext(ctx, `INSERT INTO login_failure (who, failures, last_at) VALUES (?, 1, ?)
			ON CONFLICT (who) DO UPDATE SET failures = failures + 1, last_at = excluded.last_at`, w, k.now().UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

// SessionUser returns the person and CSRF token of a session cookie's
// token, or an unauthenticated error when it is unknown, ended (idle,
// absolute or signed out) or its person is disabled.
func (k *Keys) SessionUser(ctx context.Context, token string) (User, string, error) {
	gone := errs.New(errs.Unauthenticated, "", "the session has ended: sign in again")
	var csrf string
	var lastSeen, expires int64
	u, err := scanUser(k.db.Point.QueryRowContext(ctx, `SELECT u.seq, u.id, u.name, u.role, u.created_at, u.disabled_at,
		s.csrf, s.last_seen_at, s.expires_at FROM session s JOIN user_account u ON u.seq = s.user_seq WHERE s.token_hash = ?`,
		hash(token)), &csrf, &lastSeen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, "", gone
	}
	if err != nil {
		return User{}, "", err
	}
	now := k.now()
	if u.DisabledAt != nil || !now.Before(time.UnixMilli(expires)) || now.Sub(time.UnixMilli(lastSeen)) >= k.sessionOptions().Idle {
		return User{}, "", gone
	}
	if now.Sub(time.UnixMilli(lastSeen)) >= touchEvery {
		if _, err := k.db.W.ExecContext(ctx, `UPDATE session SET last_seen_at = ? WHERE token_hash = ?`, now.UnixMilli(), hash(token)); err != nil {
			return User{}, "", err
		}
	}
	return u, csrf, nil
}

// SignOut ends a session.
func (k *Keys) SignOut(ctx context.Context, token string) error {
	_, err := k.db.W.ExecContext(ctx, `DELETE FROM session WHERE token_hash = ?`, hash(token))
	return err
}
