package appliance_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/auth"
)

// cred is a key and secret a hostile request is sent with ("" sends none).
type cred struct{ key, secret string }

// creds are the keys of the hostile suites: one per role, and keys that must
// be refused however right their secret.
type creds struct {
	admin, write, read            cred
	wrongSecret, expired, revoked cred
}

func (e *env) creds(t *testing.T) creds {
	t.Helper()
	ctx := context.Background()
	mk := func(name string, role auth.Role, ttl time.Duration) cred {
		k, s, err := e.a.Keys.Create(ctx, name, role, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return cred{k.Key, s}
	}
	c := creds{admin: mk("h-admin", auth.Admin, 0), write: mk("h-write", auth.Write, 0), read: mk("h-read", auth.Read, 0)}
	c.wrongSecret = cred{c.admin.key, c.admin.secret + "x"}
	c.expired = mk("h-expired", auth.Admin, time.Millisecond)
	c.revoked = mk("h-revoked", auth.Admin, 0)
	if err := e.a.Keys.Revoke(ctx, c.revoked.key); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // past the expired key's millisecond
	return c
}

// hostile sends a request and returns its status and body; every refusal's
// body is checked for what must never reach a client (noLeak).
func (e *env) hostile(t *testing.T, c cred, method, path, ctype string, body io.Reader) (int, []byte) {
	t.Helper()
	status, _, b := e.sendAs(t, c, method, path, ctype, body)
	return status, b
}

// sendAs is hostile with the response headers.
func (e *env) sendAs(t *testing.T, c cred, method, path, ctype string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("key", c.key)
		req.Header.Set("secret", c.secret)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		e.noLeak(t, method+" "+path, b)
	}
	return resp.StatusCode, resp.Header, b
}

// noLeak fails when an error body names a server path, SQL or a stack trace.
func (e *env) noLeak(t *testing.T, what string, body []byte) {
	t.Helper()
	s := string(body)
	for _, bad := range []string{e.dir, "/tmp/", "sqlite", "SELECT", "goroutine ", ".go:"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s: error body leaks %q: %.300s", what, bad, s)
		}
	}
}
