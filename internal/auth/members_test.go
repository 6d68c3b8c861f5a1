package auth

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

// TestRolesAndMembers: the team's roles parse in both spellings, a member
// holds one role per project, a disabled member's row grants nothing, and
// a person's key acts with the person's role.
func TestRolesAndMembers(t *testing.T) {
	ctx := context.Background()
	for in, want := range map[string]Role{"curator": Write, "write": Write, "viewer": Read, "read": Read,
		"annotator": Annotator, "reviewer": Reviewer, "admin": Admin} {
		if got, err := ParseRole(in); err != nil || got != want {
			t.Errorf("ParseRole(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseRole("owner"); err == nil || !strings.Contains(err.Error(), "annotator") {
		t.Errorf("owner: %v", err)
	}
	if Annotator.Allows(Read) || Reviewer.Allows(Read) || !Write.Allows(Annotator) || Read.Allows(Annotator) {
		t.Error("annotators and reviewers have no lake-wide read; curators include them")
	}
	k := openKeys(t)
	if _, err := k.CreateUser(ctx, "ann", "a long enough one", "annotator"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.CreateUser(ctx, "cur", "a long enough one", "curator"); err != nil {
		t.Fatal(err)
	}
	if u, _ := k.User(ctx, "cur"); u.Role != Write {
		t.Errorf("a curator is stored and answered as write: %q", u.Role)
	}
	m, err := k.SetMember(ctx, "prj_a", "ann", "")
	if err != nil || m.Role != Annotator || m.ProjectID != "prj_a" || m.Name != "ann" {
		t.Fatalf("member: %+v %v", m, err)
	}
	if _, err := k.SetMember(ctx, "prj_a", "cur", Write); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("a member as curator: %v", err)
	}
	if _, err := k.SetMember(ctx, "prj_a", "nobody", Annotator); !errs.Is(err, errs.NotFound) {
		t.Errorf("a member of no account: %v", err)
	}
	if _, err := k.SetMember(ctx, "prj_b", "ann", Reviewer); err != nil {
		t.Fatal(err)
	}
	for pid, want := range map[string]Role{"prj_a": Annotator, "prj_b": Reviewer, "prj_c": ""} {
		if got, err := k.ProjectRole(ctx, pid, "ann"); err != nil || got != want {
			t.Errorf("ann in %s: %q %v, want %q", pid, got, err, want)
		}
	}
	// An annotator's key is theirs, whatever role it was asked for.
	key, secret, err := k.CreateUserKey(ctx, "ann", "script", Admin, 0)
	if err != nil || key.Role != Annotator || key.User != "ann" {
		t.Fatalf("key: %+v %v", key, err)
	}
	if got, err := k.Verify(ctx, key.Key, secret); err != nil || got.Role != Annotator || got.User != "ann" {
		t.Errorf("verify: %+v %v", got, err)
	}
	if list, err := k.List(ctx); err != nil || len(list) != 1 || list[0].User != "ann" {
		t.Errorf("keys list the person each belongs to: %+v %v", list, err)
	}
	if _, _, err := k.Create(ctx, "nobody's", Annotator, 0); !errs.Is(err, errs.InvalidArgument) {
		t.Errorf("an annotator key of no person: %v", err)
	}
	off := true
	if _, err := k.UpdateUser(ctx, "ann", UserChange{Disabled: &off}); err != nil {
		t.Fatal(err)
	}
	if got, err := k.ProjectRole(ctx, "prj_a", "ann"); err != nil || got != "" {
		t.Errorf("a disabled member: %q %v", got, err)
	}
	if _, err := k.Verify(ctx, key.Key, secret); !errs.Is(err, errs.Unauthenticated) {
		t.Errorf("a disabled member's key: %v", err)
	}
	if err := k.RemoveMember(ctx, "prj_b", "ann"); err != nil {
		t.Fatal(err)
	}
	if err := k.RemoveMember(ctx, "prj_b", "ann"); !errs.Is(err, errs.NotFound) {
		t.Errorf("removed twice: %v", err)
	}
	if err := k.DeleteProjectMembers(ctx, "prj_a"); err != nil {
		t.Fatal(err)
	}
	if ms, err := k.Memberships(ctx, "ann"); err != nil || len(ms) != 0 {
		t.Errorf("after the project went: %+v %v", ms, err)
	}
}

// TestMigrationKeepsPeopleKeysAndSessions: a database made before roles
// (migrations 001-002) keeps its people, keys and live sessions through 003,
// which rebuilds their tables, and its foreign keys still hold.
func TestMigrationKeepsPeopleKeysAndSessions(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "k.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := fstest.MapFS{}
	for _, n := range []string{"001_init.sql", "002_users.sql"} {
		b, err := fs.ReadFile(Migrations, n)
		if err != nil {
			t.Fatal(err)
		}
		old[n] = &fstest.MapFile{Data: b}
	}
	if err := db.Migrate(ctx, "auth", old); err != nil {
		t.Fatal(err)
	}
	k := New(db)
	if _, err := k.CreateUser(ctx, "ana", "a long enough one", Write); err != nil {
		t.Fatal(err)
	}
	own, ownSecret, _ := k.CreateUserKey(ctx, "ana", "ana's", Write, 0)
	plain, plainSecret, _ := k.Create(ctx, "ci", Read, 0)
	s, err := k.SignIn(ctx, "ana", "a long enough one", "x", quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, "auth", Migrations); err != nil {
		t.Fatal(err)
	}
	if got, err := k.Verify(ctx, own.Key, ownSecret); err != nil || got.Role != Write || got.User != "ana" {
		t.Errorf("ana's key after 003: %+v %v", got, err)
	}
	if got, err := k.Verify(ctx, plain.Key, plainSecret); err != nil || got.Role != Read {
		t.Errorf("a plain key after 003: %+v %v", got, err)
	}
	if u, _, err := k.SessionUser(ctx, s.Token); err != nil || u.Name != "ana" {
		t.Errorf("ana's session after 003: %+v %v", u, err)
	}
	rows, err := db.R.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Error("foreign keys broken after 003")
	}
	rows.Close()
	if _, err := db.W.ExecContext(ctx, `INSERT INTO session (token_hash, user_seq, csrf, created_at, last_seen_at, expires_at)
		VALUES ('x', 999, 'c', 0, 0, 0)`); err == nil {
		t.Error("a session of no person was stored: session's foreign key is gone")
	}
}
