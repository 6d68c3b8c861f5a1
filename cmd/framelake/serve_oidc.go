package main

import (
	"flag"
	"os"

	"github.com/framelake/framelake/internal/auth"
)

// oidcFlags configure single sign-on (docs/team.md "Single sign-on"); it is
// off unless --oidc-issuer is given.
type oidcFlags struct {
	issuer, clientID, secret, redirect, groups, roleMap, postLogout *string
}

func (f *oidcFlags) define(fs *flag.FlagSet) {
	f.issuer = fs.String("oidc-issuer", os.Getenv("FRAMELAKE_OIDC_ISSUER"),
		"single sign-on: the OpenID provider's issuer URL; off when empty (env FRAMELAKE_OIDC_ISSUER)")
	f.clientID = fs.String("oidc-client-id", os.Getenv("FRAMELAKE_OIDC_CLIENT_ID"), "framelake's client id at the provider (env FRAMELAKE_OIDC_CLIENT_ID)")
	f.secret = fs.String("oidc-client-secret", "", "the client's secret; prefer env FRAMELAKE_OIDC_CLIENT_SECRET (a flag shows in ps)")
	f.redirect = fs.String("oidc-redirect-url", os.Getenv("FRAMELAKE_OIDC_REDIRECT_URL"),
		"https://HOST/api/v1/session/oidc/callback, as registered at the provider (env FRAMELAKE_OIDC_REDIRECT_URL)")
	f.groups = fs.String("oidc-groups-claim", envOr("FRAMELAKE_OIDC_GROUPS_CLAIM", "groups"), "the ID token claim listing a person's groups (env FRAMELAKE_OIDC_GROUPS_CLAIM)")
	f.roleMap = fs.String("oidc-role-map", os.Getenv("FRAMELAKE_OIDC_ROLE_MAP"),
		"group=role,group=role: a person's role is the highest of their mapped groups; in none, they are refused (env FRAMELAKE_OIDC_ROLE_MAP)")
	f.postLogout = fs.String("oidc-post-logout-url", os.Getenv("FRAMELAKE_OIDC_POST_LOGOUT_URL"),
		"where the provider sends the browser after signing out there (https://HOST/, registered at the provider); empty: the provider's own page (env FRAMELAKE_OIDC_POST_LOGOUT_URL)")
}

// config is the sign-on configuration; auth.NewOIDC checks it is whole.
func (f *oidcFlags) config() (auth.OIDCConfig, error) {
	c := auth.OIDCConfig{Issuer: *f.issuer, ClientID: *f.clientID, ClientSecret: *f.secret, RedirectURL: *f.redirect, GroupsClaim: *f.groups,
		PostLogoutURL: *f.postLogout}
	if c.ClientSecret == "" {
		c.ClientSecret = os.Getenv("FRAMELAKE_OIDC_CLIENT_SECRET")
	}
	if *f.roleMap != "" {
		m, err := auth.ParseRoleMap(*f.roleMap)
		if err != nil {
			return c, err
		}
		c.RoleMap = m
	}
	return c, nil
}
