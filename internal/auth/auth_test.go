package auth

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/sqlitedb"
)

func TestKeys(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "k.db"), sqlitedb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx, "auth", Migrations); err != nil {
		t.Fatal(err)
	}
	keys := New(db)
	k, secret, err := keys.Create(ctx, "ci", Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := keys.Verify(ctx, k.Key, secret); err != nil || got.Role != Write {
		t.Fatalf("verify: %+v %v", got, err)
	}
	var stored string
	db.R.QueryRow("SELECT secret_hash FROM api_key").Scan(&stored)
	if stored == secret || len(stored) != 64 {
		t.Fatal("secret not stored hashed")
	}
	short, ssecret, _ := keys.Create(ctx, "short", Read, time.Hour)
	keys.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	cases := []struct{ key, secret, why string }{
		{k.Key, "wrong", "wrong secret"},
		{"flnope", secret, "unknown key"},
		{"", "", "missing"},
		{short.Key, ssecret, "expired"},
	}
	for _, c := range cases {
		if _, err := keys.Verify(ctx, c.key, c.secret); errs.CodeOf(err) != errs.Unauthenticated {
			t.Errorf("%s: %v", c.why, err)
		}
	}
	if err := keys.Revoke(ctx, k.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Verify(ctx, k.Key, secret); errs.CodeOf(err) != errs.Unauthenticated {
		t.Errorf("revoked key accepted: %v", err)
	}
	if err := keys.Revoke(ctx, k.Key); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("double revoke: %v", err)
	}
	if _, _, err := keys.Create(ctx, "x", Role("root"), 0); errs.CodeOf(err) != errs.InvalidArgument {
		t.Errorf("bad role: %v", err)
	}
	if !Admin.Allows(Write) || Read.Allows(Write) || !Write.Allows(Read) {
		t.Error("role order")
	}
	if list, _ := keys.List(ctx); len(list) != 2 {
		t.Errorf("list: %d keys", len(list))
	}
}
