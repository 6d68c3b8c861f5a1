package auth

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

func openKeys(t *testing.T) *Keys {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "k.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx, "auth", Migrations); err != nil {
		t.Fatal(err)
	}
	return New(db)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestPasswordHashIsArgon2idWithItsParameters(t *testing.T) {
	h, err := hashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %s", h)
	}
	if !checkPassword(h, "correct horse battery") || checkPassword(h, "correct horse batterz") {
		t.Error("the hash does not check its password")
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA"} {
		if checkPassword(bad, "x") {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSignIn: a right password opens a session whose cookie token finds
// the person; a wrong name and a wrong password get the same answer; a
// disabled person is refused, their session ends and their keys stop.
func TestSignIn(t *testing.T) {
	ctx := context.Background()
	k := openKeys(t)
	if _, err := k.CreateUser(ctx, "ana", "short", Write); err == nil || !strings.Contains(err.Error(), "at least 10") {
		t.Errorf("short password: %v", err)
	}
	if _, err := k.CreateUser(ctx, "ana", "a long enough one", Write); err != nil {
		t.Fatal(err)
	}
	if _, err := k.CreateUser(ctx, "ANA", "a long enough one", Read); !errs.Is(err, errs.AlreadyExists) {
		t.Errorf("names are unique whatever their case: %v", err)
	}
	s, err := k.SignIn(ctx, "ana", "a long enough one", "10.0.0.1", quiet)
	if err != nil || s.Token == "" || s.CSRF == "" || s.User.Role != Write {
		t.Fatalf("sign in: %+v %v", s, err)
	}
	if u, csrf, err := k.SessionUser(ctx, s.Token); err != nil || u.Name != "ana" || csrf != s.CSRF {
		t.Errorf("session: %+v %q %v", u, csrf, err)
	}
	_, e1 := k.SignIn(ctx, "ana", "wrong password!", "10.0.0.2", quiet)
	_, e2 := k.SignIn(ctx, "bob", "wrong password!", "10.0.0.3", quiet)
	if e1 == nil || e2 == nil || e1.Error() != e2.Error() {
		t.Errorf("a wrong password and a wrong name answer alike: %v / %v", e1, e2)
	}
	key, secret, err := k.CreateUserKey(ctx, "ana", "ana's script", Admin, 0)
	if err != nil {
		t.Fatal(err)
	}
	if kk, err := k.Verify(ctx, key.Key, secret); err != nil || kk.Role != Write {
		t.Errorf("a person's key acts with their rights (write), not more: %+v %v", kk, err)
	}
	yes := true
	if _, err := k.UpdateUser(ctx, "ana", UserChange{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.SessionUser(ctx, s.Token); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("a disabled person's session still works: %v", err)
	}
	if _, err := k.Verify(ctx, key.Key, secret); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("a disabled person's key still works: %v", err)
	}
	if _, err := k.SignIn(ctx, "ana", "a long enough one", "10.0.0.1", quiet); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("a disabled person signed in: %v", err)
	}
}

// TestSessionsEnd: idle, absolute and signed-out sessions are refused.
func TestSessionsEnd(t *testing.T) {
	ctx := context.Background()
	k := openKeys(t)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	k.now = func() time.Time { return now }
	k.SetSessionOptions(SessionOptions{Idle: time.Hour, Absolute: 3 * time.Hour})
	if _, err := k.CreateUser(ctx, "ana", "a long enough one", Read); err != nil {
		t.Fatal(err)
	}
	sign := func() Session {
		s, err := k.SignIn(ctx, "ana", "a long enough one", "a", quiet)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := sign()
	for range 5 { // used every 50 minutes: idle never ends it, the absolute end does
		now = now.Add(50 * time.Minute)
		_, _, err := k.SessionUser(ctx, s.Token)
		if want := now.Sub(s.ExpiresAt) < 0; (err == nil) != want {
			t.Errorf("at %s: %v", now.Format("15:04"), err)
		}
	}
	s = sign()
	now = now.Add(61 * time.Minute)
	if _, _, err := k.SessionUser(ctx, s.Token); err == nil {
		t.Error("an idle session lived on")
	}
	s = sign()
	if err := k.SignOut(ctx, s.Token); err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.SessionUser(ctx, s.Token); err == nil {
		t.Error("a signed-out session lived on")
	}
}

// TestGuessingSlowsDown: after three failures a name (and an address) waits
// 1, 2, 4 ... seconds, at most a minute, between tries; a success clears the
// name's count.
func TestGuessingSlowsDown(t *testing.T) {
	ctx := context.Background()
	k := openKeys(t)
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	k.now = func() time.Time { return now }
	if _, err := k.CreateUser(ctx, "ana", "a long enough one", Read); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := k.SignIn(ctx, "ana", "guess", "x", quiet); !errs.Is(err, errs.Unauthenticated) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := k.SignIn(ctx, "ana", "a long enough one", "y", quiet); !errs.Is(err, errs.TooManyAttempts) {
		t.Errorf("right away after 3 failures, even the right password waits: %v", err)
	}
	now = now.Add(1100 * time.Millisecond)
	if _, err := k.SignIn(ctx, "ana", "a long enough one", "y", quiet); err != nil {
		t.Errorf("after the wait: %v", err)
	}
	// A scripted guesser against one name: how many tries an hour get through.
	tries := 0
	for end := now.Add(time.Hour); now.Before(end); now = now.Add(time.Second) {
		if _, err := k.SignIn(ctx, "ana", "guess", "z", quiet); !errs.Is(err, errs.TooManyAttempts) {
			tries++
		}
	}
	if tries > 70 {
		t.Errorf("%d guesses an hour got through; the cap of a minute allows about 60", tries)
	}
}

// TestGuessesPerHour is docs/team.md's figure: a guesser that tries again
// the second it is let, for an hour, gets 67 guesses at one name whether it
// keeps its address or takes a new one each try (the name's wait holds),
// and 67 from one address whatever names it rotates through (the address's
// wait holds): 3 free, then waits of 1, 2, 4 ... 32 s (63 s for 6 more),
// then one a minute for the 58 minutes left.
func TestGuessesPerHour(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: an hour of guesses on a fake clock, each a real Argon2id check")
	}
	ctx := context.Background()
	for _, c := range []struct {
		what       string
		name, addr func(i int) string
	}{
		{"one name from one address", func(int) string { return "ana" }, func(int) string { return "a" }},
		{"one name from a new address each try", func(int) string { return "ana" }, func(i int) string { return fmt.Sprint("b", i) }},
		{"a new name each try from one address", func(i int) string { return fmt.Sprint("n", i) }, func(int) string { return "c" }},
	} {
		k := openKeys(t)
		now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		k.now = func() time.Time { return now }
		if _, err := k.CreateUser(ctx, "ana", "a long enough one", Read); err != nil {
			t.Fatal(err)
		}
		guesses := 0
		for i, end := 0, now.Add(time.Hour); now.Before(end); now = now.Add(time.Second) {
			_, err := k.SignIn(ctx, c.name(i), "guess", c.addr(i), quiet)
			if errs.Is(err, errs.Unauthenticated) {
				guesses, i = guesses+1, i+1
			} else if !errs.Is(err, errs.TooManyAttempts) {
				t.Fatal(err)
			}
		}
		if guesses != 67 {
			t.Errorf("%s: %d guesses in an hour, docs/team.md says 67", c.what, guesses)
		}
	}
}
