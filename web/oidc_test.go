package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	zoidc "github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
)

// groupsStorage is zitadel's example provider storage with what a company
// provider puts in its ID tokens: preferred_username and a groups claim.
type groupsStorage struct {
	*storage.Storage
	users  storage.UserStore
	groups map[string][]string // user id → groups
	ended  *endedSessions
}

// endedSessions records the provider's logouts: "user id/client id".
type endedSessions struct {
	mu   sync.Mutex
	list []string
}

func (s groupsStorage) TerminateSession(ctx context.Context, userID, clientID string) error {
	s.ended.mu.Lock()
	s.ended.list = append(s.ended.list, userID+"/"+clientID)
	s.ended.mu.Unlock()
	return s.Storage.TerminateSession(ctx, userID, clientID)
}

// userinfoGroupsStorage is a provider that puts the groups in its userinfo
// answer only, not in its ID tokens.
type userinfoGroupsStorage struct{ groupsStorage }

func (s userinfoGroupsStorage) SetUserinfoFromRequest(ctx context.Context, ui *zoidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	if u := s.users.GetUserByID(req.GetSubject()); u != nil {
		ui.PreferredUsername = u.Username
	}
	return nil
}

func (s userinfoGroupsStorage) SetUserinfoFromToken(ctx context.Context, ui *zoidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, ui, tokenID, subject, origin); err != nil {
		return err
	}
	ui.AppendClaims("groups", s.groups[ui.Subject])
	return nil
}

func (s groupsStorage) SetUserinfoFromRequest(ctx context.Context, ui *zoidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	// The example's own claims first: sub among them (without it the ID
	// token's subject would be empty).
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	if u := s.users.GetUserByID(req.GetSubject()); u != nil {
		ui.PreferredUsername = u.Username
	}
	ui.AppendClaims("groups", s.groups[req.GetSubject()])
	return nil
}

// startOP serves a real OpenID provider (zitadel's certified library and
// its example login form) on loopback with two web clients: framelake
// (redirecting to callback) and "other"; with userinfoGroups, its ID
// tokens carry no groups, its userinfo answers do. ended records its
// logouts.
func startOP(t *testing.T, callback string, userinfoGroups bool) (issuer string, ended *endedSessions) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer = "http://" + ln.Addr().String()
	storage.RegisterClients(storage.WebClient("framelake", "fl-secret", callback),
		storage.WebClient("other", "other-secret", "http://127.0.0.1:1/other-callback"))
	users := storage.NewUserStore(issuer) // id1 "test-user@127.0.0.1", id2 "test-user2"; password verysecure
	ended = &endedSessions{}
	st := groupsStorage{Storage: storage.NewStorage(users), users: users,
		groups: map[string][]string{"id1": {"strangers"}, "id2": {"labelers", "visitors"}}, ended: ended}
	var opStorage exampleop.Storage = st
	if userinfoGroups {
		opStorage = userinfoGroupsStorage{st}
	}
	srv := &http.Server{Handler: exampleop.SetupServer(issuer, opStorage, nil, false), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return issuer, ended
}

// startSSO serves an appliance with single sign-on at a provider.
func startSSO(t *testing.T) (base, issuer string, a *appliance.Appliance) {
	t.Helper()
	base, issuer, a, _ = startSSOWith(t, false)
	return base, issuer, a
}

// startSSOWith is startSSO at a provider that gives groups in its userinfo
// answers only (userinfoGroups), answering the provider's logouts too.
func startSSOWith(t *testing.T, userinfoGroups bool) (base, issuer string, a *appliance.Appliance, ended *endedSessions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := appliance.Open(ctx, appliance.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", JobWorkers: -1})
	if err != nil {
		t.Fatal(err)
	}
	base = "http://" + a.Addr()
	issuer, ended = startOP(t, base+"/api/v1/session/oidc/callback", userinfoGroups)
	// The redirect URL names the port the appliance got: configured here,
	// between Open and Serve, as serve does from its flags in Open.
	a.OIDC, err = auth.NewOIDC(auth.OIDCConfig{Issuer: issuer, ClientID: "framelake", ClientSecret: "fl-secret",
		RedirectURL: base + "/api/v1/session/oidc/callback",
		RoleMap:     map[string]auth.Role{"labelers": auth.Annotator, "visitors": auth.Viewer}})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-served; a.Close() })
	return base, issuer, a, ended
}

var authRequestID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// ssoLogin starts a sign-in at from with a browser-like client (a cookie
// jar, redirects followed), fills the provider's login form, and returns
// the last answer.
func ssoLogin(t *testing.T, c *http.Client, from, user string) *http.Response {
	t.Helper()
	res, err := c.Get(from)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := authRequestID.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no login form at %s: %d %s", res.Request.URL, res.StatusCode, page)
	}
	form := url.Values{"id": {string(m[1])}, "username": {user}, "password": {"verysecure"}}
	login := res.Request.URL.ResolveReference(&url.URL{Path: "/login/username"})
	res, err = c.PostForm(login.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

func sessionCookieOf(t *testing.T, c *http.Client, base string) string {
	u, _ := url.Parse(base)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "framelake_session" {
			return ck.Value
		}
	}
	return ""
}

func getSession(t *testing.T, c *http.Client, base string) (int, map[string]any) {
	t.Helper()
	res, err := c.Get(base + "/api/v1/session")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func TestOIDCSignIn(t *testing.T) {
	base, _, a := startSSO(t)

	res, err := http.Get(base + "/api/v1/session/sso")
	if err != nil {
		t.Fatal(err)
	}
	var sso map[string]any
	json.NewDecoder(res.Body).Decode(&sso)
	res.Body.Close()
	if sso["oidc"] != true || sso["signInUrl"] != "/api/v1/session/oidc" || sso["signOutUrl"] != "/api/v1/session/oidc/logout" {
		t.Fatalf("GET /session/sso = %v", sso)
	}

	c := browser(t)
	res = ssoLogin(t, c, base+"/api/v1/session/oidc", "test-user2")
	res.Body.Close()
	if res.Request.URL.String() != base+"/" {
		t.Fatalf("after sign-on the browser is at %s (%d), want %s/", res.Request.URL, res.StatusCode, base)
	}
	first := sessionCookieOf(t, c, base)
	if first == "" {
		t.Fatal("no session cookie after sign-on")
	}
	code, body := getSession(t, c, base)
	user, _ := body["user"].(map[string]any)
	if code != http.StatusOK || user["name"] != "test-user2" || user["role"] != "annotator" {
		t.Fatalf("GET /session = %d %v; want test-user2, annotator (the highest of labelers=annotator, visitors=viewer)", code, body)
	}

	// A second sign-on is a new session; the first stays valid.
	res = ssoLogin(t, c, base+"/api/v1/session/oidc", "test-user2")
	res.Body.Close()
	if second := sessionCookieOf(t, c, base); second == "" || second == first {
		t.Fatalf("second sign-on kept the session %q", second)
	}
	if _, _, err := a.Keys.SessionUser(context.Background(), first); err != nil {
		t.Fatalf("the first session ended: %v", err)
	}

	// A disabled person is refused, with a 403 that says so.
	yes := true
	if _, err := a.Keys.UpdateUser(context.Background(), "test-user2", auth.UserChange{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	res = ssoLogin(t, browser(t), base+"/api/v1/session/oidc", "test-user2")
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(msg), "disabled") {
		t.Fatalf("disabled person: %d %s", res.StatusCode, msg)
	}
}

func TestOIDCRefusals(t *testing.T) {
	base, issuer, a := startSSO(t)

	// In no mapped group: 403 naming the claim.
	c := browser(t)
	res := ssoLogin(t, c, base+"/api/v1/session/oidc", "test-user@127.0.0.1")
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(msg), "no group") || sessionCookieOf(t, c, base) != "" {
		t.Fatalf("person in no mapped group: %d %s", res.StatusCode, msg)
	}

	// A forged state (the browser's sign-in cookie is real) is refused
	// before any code is exchanged.
	c = browser(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Get(base + "/api/v1/session/oidc")
	if err != nil || res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), issuer) {
		t.Fatalf("start: %v %v", res, err)
	}
	res.Body.Close()
	res, err = c.Get(base + "/api/v1/session/oidc/callback?state=forged&code=whatever")
	if err != nil {
		t.Fatal(err)
	}
	msg, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(string(msg), "state") || sessionCookieOf(t, c, base) != "" {
		t.Fatalf("forged state: %d %s", res.StatusCode, msg)
	}

	// A password account of the same name is not taken over by sign-on.
	if _, err := a.Keys.CreateUser(context.Background(), "test-user2", "a long password", auth.Admin); err != nil {
		t.Fatal(err)
	}
	res = ssoLogin(t, browser(t), base+"/api/v1/session/oidc", "test-user2")
	msg, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(msg), "password") {
		t.Fatalf("sign-on onto a password account: %d %s", res.StatusCode, msg)
	}

	// An ID token the provider issued to another client (signed, fresh,
	// right nonce) is refused for its audience.
	ctx := context.Background()
	p, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		t.Fatal(err)
	}
	other := oauth2.Config{ClientID: "other", ClientSecret: "other-secret", Endpoint: p.Endpoint(),
		RedirectURL: "http://127.0.0.1:1/other-callback", Scopes: []string{oidc.ScopeOpenID}}
	c = browser(t)
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == "/other-callback" {
			return http.ErrUseLastResponse
		}
		return nil
	}
	res = ssoLogin(t, c, other.AuthCodeURL("st", oidc.Nonce("n-other")), "test-user2")
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("other client's login: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	tok, err := other.Exchange(ctx, loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if _, err := p.Verifier(&oidc.Config{ClientID: "other"}).Verify(ctx, raw); err != nil {
		t.Fatalf("the other client's own token does not verify for it: %v", err)
	}
	if _, err := a.OIDC.Verify(ctx, raw, "n-other"); err == nil || !strings.Contains(err.Error(), "audience") {
		t.Fatalf("framelake took another client's ID token: %v", err)
	}
}

// TestOIDCUserinfoGroups: a provider whose ID tokens carry no groups
// claim, but whose userinfo answers do: the person's role comes from the
// userinfo answer, and a person in no mapped group there is still refused.
func TestOIDCUserinfoGroups(t *testing.T) {
	base, _, _, _ := startSSOWith(t, true)
	c := browser(t)
	res := ssoLogin(t, c, base+"/api/v1/session/oidc", "test-user2")
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	code, body := getSession(t, c, base)
	user, _ := body["user"].(map[string]any)
	if code != http.StatusOK || user["name"] != "test-user2" || user["role"] != "annotator" {
		t.Fatalf("sign-on with groups in userinfo only: %d %s; session %d %v", res.StatusCode, msg, code, body)
	}
	res = ssoLogin(t, browser(t), base+"/api/v1/session/oidc", "test-user@127.0.0.1")
	msg, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(msg), "no group") {
		t.Fatalf("in no mapped group (userinfo): %d %s", res.StatusCode, msg)
	}
}

// TestOIDCLogout: signing out through /session/oidc/logout ends the
// framelake session and then the provider's (its end_session_endpoint,
// with the ID token as hint: the provider ends the session of that user
// for framelake, and shows its signed-out page); a browser with nothing
// to end is a 401.
func TestOIDCLogout(t *testing.T) {
	base, issuer, a, ended := startSSOWith(t, false)
	c := browser(t)
	res := ssoLogin(t, c, base+"/api/v1/session/oidc", "test-user2")
	res.Body.Close()
	token := sessionCookieOf(t, c, base)
	if token == "" {
		t.Fatal("no session after sign-on")
	}
	res, err := c.Get(base + "/api/v1/session/oidc/logout")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Request.URL.String() != issuer+"/logged-out" {
		t.Fatalf("after logout the browser is at %s (%d %s), want the provider's %s/logged-out", res.Request.URL, res.StatusCode, page, issuer)
	}
	ended.mu.Lock()
	got := strings.Join(ended.list, ",")
	ended.mu.Unlock()
	if got != "id2/framelake" {
		t.Errorf("the provider ended sessions %q, want id2/framelake (test-user2's, by the ID token hint)", got)
	}
	if _, _, err := a.Keys.SessionUser(context.Background(), token); err == nil {
		t.Error("the framelake session outlived the logout")
	}
	if code, _ := getSession(t, c, base); code != http.StatusUnauthorized {
		t.Errorf("GET /session after logout: %d, want 401", code)
	}
	res, err = c.Get(base + "/api/v1/session/oidc/logout")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a second logout: %d, want 401 (nothing to end)", res.StatusCode)
	}
}
