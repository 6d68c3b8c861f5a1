package main_test

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// TestSignInWithPassword walks a person's session as an attacker would
// try it: the cookie's flags, a write without the CSRF token (from another
// origin or not), a fixed session id, sign-out, a disabled person's live
// session, and a guesser slowed down.
func TestSignInWithPassword(t *testing.T) {
	s := startUIServer(t)
	if s.admin["user"] != "admin" || len(s.admin["password"]) < 10 {
		t.Fatalf("the first start leaves no admin name and password: %v", s.admin)
	}
	signIn := func(name, password string, cookie string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", s.base+"/api/v1/session", strings.NewReader(`{"name": "`+name+`", "password": "`+password+`"}`))
		req.Header.Set("Content-Type", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", "framelake_session="+cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			CSRF string `json:"csrfToken"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		return resp, body.CSRF
	}
	withCookie := func(method, path, cookie, csrf, origin string) int {
		req, _ := http.NewRequest(method, s.base+path, strings.NewReader(`{"a": 1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", "framelake_session="+cookie)
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	resp, csrf := signIn("admin", s.admin["password"], "attacker-chosen")
	var token string
	for _, c := range resp.Cookies() {
		if c.Name == "framelake_session" {
			token = c.Value
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
				t.Errorf("cookie flags: %+v (HttpOnly, SameSite=Strict, Path /; Secure only over TLS)", c)
			}
		}
	}
	if resp.StatusCode != 200 || token == "" || token == "attacker-chosen" || csrf == "" {
		t.Fatalf("sign in: %d, token %q, csrf %q", resp.StatusCode, token, csrf)
	}
	if got := withCookie("GET", "/api/v1/lake/items", "attacker-chosen", "", ""); got != 401 {
		t.Errorf("a session id the attacker chose: %d", got)
	}
	if got := withCookie("GET", "/api/v1/lake/items", token, "", ""); got != 200 {
		t.Errorf("read with the cookie: %d", got)
	}
	patch := "/api/v1/lake/files/nothere/metadata"
	if got := withCookie("PATCH", patch, token, "", "http://evil.example"); got != 403 {
		t.Errorf("a write from another origin without the token: %d, want 403", got)
	}
	if got := withCookie("PATCH", patch, token, "not-the-token", ""); got != 403 {
		t.Errorf("a write with a wrong token: %d, want 403", got)
	}
	if got := withCookie("PATCH", patch, token, csrf, ""); got != 404 {
		t.Errorf("a write with the token: %d, want past authorization (404: no such file)", got)
	}

	// An admin adds a viewer; the viewer reads but may not write; disabled,
	// their live session ends at once.
	s.call(t, s.admin, "POST", "/api/v1/users", "application/json",
		strings.NewReader(`{"name": "vera", "password": "vera's long password", "role": "read"}`), nil)
	resp, vcsrf := signIn("vera", "vera's long password", "")
	vtoken := ""
	for _, c := range resp.Cookies() {
		if c.Name == "framelake_session" {
			vtoken = c.Value
		}
	}
	if got := withCookie("GET", "/api/v1/lake/items", vtoken, "", ""); got != 200 {
		t.Errorf("the viewer reads: %d", got)
	}
	if got := withCookie("PATCH", patch, vtoken, vcsrf, ""); got != 403 {
		t.Errorf("the viewer writes: %d, want 403", got)
	}
	s.call(t, s.admin, "PATCH", "/api/v1/users/vera", "application/json", strings.NewReader(`{"disabled": true}`), nil)
	if got := withCookie("GET", "/api/v1/lake/items", vtoken, "", ""); got != 401 {
		t.Errorf("a disabled person's live session: %d, want 401", got)
	}

	// Sign-out ends the session on the server, not only in the browser.
	if got := withCookie("DELETE", "/api/v1/session", token, csrf, ""); got != 204 {
		t.Errorf("sign out: %d", got)
	}
	if got := withCookie("GET", "/api/v1/lake/items", token, "", ""); got != 401 {
		t.Errorf("after sign-out the old cookie: %d, want 401", got)
	}

	// Guessing: three wrong passwords, then even the right one waits (429),
	// and a wrong name answers as a wrong password does.
	codes := []int{}
	for _, p := range []string{"guess one", "guess two", "guess three", s.admin["password"]} {
		r, _ := signIn("admin", p, "")
		codes = append(codes, r.StatusCode)
	}
	if codes[0] != 401 || codes[2] != 401 || codes[3] != 429 {
		t.Errorf("sign-ins while guessing: %v, want 401 x3 then 429", codes)
	}
}

// TestUsersCommand: an admin manages people from the command line, the
// password read from standard input, never a flag.
func TestUsersCommand(t *testing.T) {
	data := t.TempDir()
	users := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"users"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := users("a long password\n", "create", "--data", data, "--role", "write", "ana"); err != nil ||
		!strings.Contains(out, "ana: write, active") {
		t.Fatalf("create: %v %s", err, out)
	}
	if out, err := users("", "create", "--data", data, "bob"); err == nil || !strings.Contains(out, "give the password on standard input") {
		t.Errorf("create without a password: %v %s", err, out)
	}
	if out, err := users("short\n", "create", "--data", data, "bob"); err == nil || !strings.Contains(out, "at least 10") {
		t.Errorf("a short password: %v %s", err, out)
	}
	if out, err := users("", "disable", "--data", data, "ana"); err != nil || !strings.Contains(out, "ana: write, disabled") {
		t.Errorf("disable: %v %s", err, out)
	}
	if out, err := users("", "list", "--data", data); err != nil || !strings.Contains(out, "ana") || !strings.Contains(out, "disabled") {
		t.Errorf("list: %v %s", err, out)
	}
}
