package auth

// Single sign-on with OpenID Connect (docs/team.md "Single sign-on"): the
// relying party's half that needs no HTTP server: the provider's address
// for a sign-in, the code's exchange and the ID token's checks, and the
// person and session that come of it. web/oidc.go holds the routes.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// OIDCConfig configures sign-in through an OpenID provider; an empty
// Issuer turns it off.
type OIDCConfig struct {
	Issuer       string          // the provider's issuer URL, as its discovery document names it
	ClientID     string          // framelake's client id at the provider
	ClientSecret string          // and its secret
	RedirectURL  string          // https://<framelake>/api/v1/session/oidc/callback, registered at the provider
	GroupsClaim  string          // the ID token claim listing the person's groups; default "groups"
	RoleMap      map[string]Role // group → role; a person in none of them is refused
	// PostLogoutURL is where the provider sends the browser after its own
	// logout (registered at the provider); "" sends none, and the
	// provider shows its own page.
	PostLogoutURL string
}

// ParseRoleMap reads "group=role,group=role" (roles as ParseRole takes
// them: curator and viewer too).
func ParseRoleMap(s string) (map[string]Role, error) {
	m := map[string]Role{}
	for _, pair := range strings.Split(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		g, r, ok := strings.Cut(pair, "=")
		g = strings.TrimSpace(g)
		if !ok || g == "" {
			return nil, errs.Invalid("oidc-role-map", "--oidc-role-map: each entry is group=role, got %q", pair)
		}
		role, err := ParseRole(strings.TrimSpace(r))
		if err != nil {
			return nil, errs.Invalid("oidc-role-map", "--oidc-role-map: group %q: %v", g, err)
		}
		m[g] = role
	}
	return m, nil
}

// roleRank orders roles for a person in several mapped groups: the
// highest wins. The viewer ranks lowest: it changes nothing anywhere.
var roleRank = map[Role]int{Read: 1, Annotator: 2, Reviewer: 3, Write: 4, Admin: 5}

// OIDC is a configured relying party. The provider's discovery document
// is fetched on first use (and again after a failure), so framelake starts
// while the provider is down and signs in once it is up.
type OIDC struct {
	cfg OIDCConfig

	mu       sync.Mutex
	provider *oidc.Provider
}

// NewOIDC checks cfg; nil, nil when no issuer is given (sign-on off).
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" {
		return nil, nil
	}
	switch {
	case cfg.ClientID == "":
		return nil, errs.Invalid("oidc-client-id", "single sign-on needs --oidc-client-id with --oidc-issuer")
	case cfg.RedirectURL == "":
		return nil, errs.Invalid("oidc-redirect-url", "single sign-on needs --oidc-redirect-url (…/api/v1/session/oidc/callback)")
	case len(cfg.RoleMap) == 0:
		return nil, errs.Invalid("oidc-role-map", "single sign-on needs --oidc-role-map group=role[,group=role]: without it nobody may sign in")
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	return &OIDC{cfg: cfg}, nil
}

func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, errs.New(errs.Unavailable, "", "the sign-on provider %s does not answer: %v", o.cfg.Issuer, err)
	}
	o.provider = p
	return p, nil
}

func (o *OIDC) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, RedirectURL: o.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "profile", "email"}}
}

// OIDCStart is one sign-in under way: what the browser keeps (in a
// short-lived cookie) between leaving for the provider and coming back.
type OIDCStart struct {
	State    string // echoed by the provider: ties the callback to this browser
	Nonce    string // inside the ID token: ties the token to this sign-in
	Verifier string // PKCE: only this sign-in can exchange the code
}

// NewOIDCStart makes fresh random values for a sign-in.
func NewOIDCStart() OIDCStart {
	return OIDCStart{State: id.Token(24), Nonce: id.Token(24), Verifier: oauth2.GenerateVerifier()}
}

// AuthURL is the provider's address to send the browser to.
func (o *OIDC) AuthURL(ctx context.Context, st OIDCStart) (string, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return "", err
	}
	return o.oauth(p).AuthCodeURL(st.State, oidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)), nil
}

// OIDCIdentity is who the provider vouched for.
type OIDCIdentity struct {
	Issuer, Subject string
	Name            string // preferred_username, else email, else sub
	Role            Role   // the highest role of the person's mapped groups
	IDToken         string // the raw ID token: the hint of a logout at the provider (LogoutURL)
}

// Exchange trades the callback's code for tokens and checks the ID token:
// signature (the provider's keys), issuer, audience (our client id),
// expiry, and the nonce of this sign-in. When the ID token has no groups
// claim, the groups are read from the provider's userinfo endpoint with
// the access token (many providers put them only there), for the same
// subject.
func (o *OIDC) Exchange(ctx context.Context, code string, st OIDCStart) (OIDCIdentity, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return OIDCIdentity{}, err
	}
	tok, err := o.oauth(p).Exchange(ctx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return OIDCIdentity{}, errs.New(errs.Unauthenticated, "", "the sign-on provider refused the code: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return OIDCIdentity{}, errs.New(errs.Unauthenticated, "", "the sign-on provider sent no ID token")
	}
	who, claims, err := o.verify(ctx, p, raw, st.Nonce)
	if err != nil {
		return who, err
	}
	who.IDToken = raw
	groups, ok := claims[o.cfg.GroupsClaim]
	if !ok {
		if groups, err = o.userinfoGroups(ctx, p, tok, who.Subject); err != nil {
			return who, err
		}
	}
	return o.withRole(who, groups)
}

// userinfoGroups reads the groups claim from the provider's userinfo
// endpoint, which must answer for the ID token's subject (OpenID Connect
// Core 5.3.2: else the answer may be another person's).
func (o *OIDC) userinfoGroups(ctx context.Context, p *oidc.Provider, tok *oauth2.Token, subject string) (any, error) {
	ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return nil, errs.New(errs.Unauthenticated, "", "the ID token has no %q claim and the provider's userinfo endpoint "+
			"did not give it: %v", o.cfg.GroupsClaim, err)
	}
	if ui.Subject != subject {
		return nil, errs.New(errs.Unauthenticated, "", "the provider's userinfo answered for subject %q, not the ID token's %q",
			ui.Subject, subject)
	}
	var claims map[string]any
	if err := ui.Claims(&claims); err != nil {
		return nil, errs.New(errs.Unauthenticated, "", "the provider's userinfo claims: %v", err)
	}
	return claims[o.cfg.GroupsClaim], nil
}

// Verify checks a raw ID token (see Exchange) and reads the person and
// role from it (from the token alone: it has no access token for the
// userinfo endpoint).
func (o *OIDC) Verify(ctx context.Context, raw, nonce string) (OIDCIdentity, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return OIDCIdentity{}, err
	}
	who, claims, err := o.verify(ctx, p, raw, nonce)
	if err != nil {
		return who, err
	}
	return o.withRole(who, claims[o.cfg.GroupsClaim])
}

// verify checks a raw ID token and reads the person and its claims.
func (o *OIDC) verify(ctx context.Context, p *oidc.Provider, raw, nonce string) (OIDCIdentity, map[string]any, error) {
	idt, err := p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID}).Verify(ctx, raw)
	if err != nil {
		return OIDCIdentity{}, nil, errs.New(errs.Unauthenticated, "", "the ID token is not valid: %v", err)
	}
	if nonce == "" || idt.Nonce != nonce {
		return OIDCIdentity{}, nil, errs.New(errs.Unauthenticated, "", "the ID token was not issued for this sign-in (nonce)")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return OIDCIdentity{}, nil, errs.New(errs.Unauthenticated, "", "the ID token's claims: %v", err)
	}
	who := OIDCIdentity{Issuer: idt.Issuer, Subject: idt.Subject}
	for _, c := range []string{"preferred_username", "email"} {
		if s, _ := claims[c].(string); s != "" {
			who.Name = s
			break
		}
	}
	if who.Name == "" {
		who.Name = idt.Subject
	}
	return who, claims, nil
}

// withRole sets who's role from their groups, refusing a person in no
// mapped group.
func (o *OIDC) withRole(who OIDCIdentity, groups any) (OIDCIdentity, error) {
	if who.Role = o.role(groups); who.Role == "" {
		return who, errs.New(errs.PermissionDenied, "", "%s signed in at the provider but is in no group framelake maps to a role (claim %q): ask an admin",
			who.Name, o.cfg.GroupsClaim)
	}
	return who, nil
}

// LogoutURL is the provider's address that ends the person's session
// there (OpenID Connect RP-Initiated Logout): its end_session_endpoint
// with the ID token as hint, our client id and, when configured, where to
// come back to; "" when the provider advertises no such endpoint.
func (o *OIDC) LogoutURL(ctx context.Context, idToken string) (string, error) {
	p, err := o.discover(ctx)
	if err != nil {
		return "", err
	}
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := p.Claims(&meta); err != nil || meta.EndSession == "" {
		return "", nil
	}
	u, err := url.Parse(meta.EndSession)
	if err != nil {
		return "", errs.New(errs.Unavailable, "", "the sign-on provider's end_session_endpoint %q: %v", meta.EndSession, err)
	}
	q := u.Query()
	q.Set("client_id", o.cfg.ClientID)
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	if o.cfg.PostLogoutURL != "" {
		q.Set("post_logout_redirect_uri", o.cfg.PostLogoutURL)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// role is the highest mapped role of the groups claim ("" when none): a
// list of strings, or one string.
func (o *OIDC) role(claim any) Role {
	var groups []string
	switch v := claim.(type) {
	case string:
		groups = []string{v}
	case []any:
		for _, g := range v {
			if s, ok := g.(string); ok {
				groups = append(groups, s)
			}
		}
	}
	var best Role
	for _, g := range groups {
		if r, ok := o.cfg.RoleMap[g]; ok && roleRank[r] > roleRank[best] {
			best = r
		}
	}
	return best
}

// oidcMarker stands in the password column of a person made by sign-on:
// it is no password hash (so no password signs them in) and it binds the
// name to the provider's subject, so another account of the provider
// that comes to carry the same name is refused rather than let in.
func oidcMarker(issuer, subject string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + subject))
	return "oidc:" + hex.EncodeToString(sum[:])
}

// SignInOIDC finds or creates the person the provider vouched for, sets
// their role from their groups (every sign-in: the provider's groups are
// the truth), refuses a disabled person, and opens a new session as
// SignIn does.
func (k *Keys) SignInOIDC(ctx context.Context, who OIDCIdentity) (Session, error) {
	if err := checkName(who.Name); err != nil {
		return Session{}, err
	}
	marker := oidcMarker(who.Issuer, who.Subject)
	var stored string
	u, err := scanUser(k.db.Point.QueryRowContext(ctx, `SELECT `+userColumns+`, password FROM user_account WHERE name = ?`, who.Name), &stored)
	now := k.now().UTC().Truncate(time.Millisecond)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		u = User{ID: id.New("usr"), Name: who.Name, Role: who.Role, CreatedAt: now}
		err = k.db.W.QueryRowContext(ctx, `INSERT INTO user_account (id, name, password, role, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`, u.ID, u.Name, marker, u.Role, now.UnixMilli(), now.UnixMilli()).Scan(&u.seq)
		if err != nil {
			return Session{}, err
		}
	case err != nil:
		return Session{}, err
	case stored != marker:
		return Session{}, errs.New(errs.PermissionDenied, "", "the framelake account %q is not this sign-on account's (it signs in with a password, or is another provider subject's)", who.Name)
	case u.DisabledAt != nil:
		return Session{}, errs.New(errs.PermissionDenied, "", "the account %q is disabled", who.Name)
	case u.Role != who.Role:
		if _, err := k.db.W.ExecContext(ctx, `UPDATE user_account SET role = ?, updated_at = ? WHERE seq = ?`, who.Role, now.UnixMilli(), u.seq); err != nil {
			return Session{}, err
		}
		u.Role = who.Role
	}
	o := k.sessionOptions()
	s := Session{Token: id.Token(32), CSRF: id.Token(32), User: u, ExpiresAt: now.Add(o.Absolute).Truncate(time.Millisecond)}
	_, err = k.db.W.ExecContext(ctx, `INSERT INTO session (token_hash, user_seq, csrf, created_at, last_seen_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, hash(s.Token), u.seq, s.CSRF, now.UnixMilli(), now.UnixMilli(), s.ExpiresAt.UnixMilli())
	if err != nil {
		return Session{}, fmt.Errorf("open session: %w", err)
	}
	return s, nil
}
