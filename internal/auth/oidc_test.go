package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/framelake/framelake/errs"
)

func TestParseRoleMap(t *testing.T) {
	m, err := ParseRoleMap(" ml-team=curator, labelers=annotator ,qa=reviewer,all=viewer,")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Role{"ml-team": Write, "labelers": Annotator, "qa": Reviewer, "all": Read}
	if len(m) != len(want) {
		t.Fatalf("ParseRoleMap = %v, want %v", m, want)
	}
	for g, r := range want {
		if m[g] != r {
			t.Errorf("group %s: %q, want %q", g, m[g], r)
		}
	}
	for _, bad := range []string{"labelers", "=admin", "labelers=boss"} {
		var e *errs.Error
		if _, err := ParseRoleMap(bad); !errors.As(err, &e) || e.Code != errs.InvalidArgument || !strings.Contains(err.Error(), "oidc-role-map") {
			t.Errorf("ParseRoleMap(%q) = %v, want an invalid oidc-role-map", bad, err)
		}
	}
}

func TestOIDCRoleIsTheHighest(t *testing.T) {
	o, err := NewOIDC(OIDCConfig{Issuer: "https://sso.example", ClientID: "fl", RedirectURL: "https://fl.example/cb",
		RoleMap: map[string]Role{"a": Annotator, "r": Reviewer, "v": Read, "c": Write}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		claim any
		want  Role
	}{
		{[]any{"v", "a"}, Annotator}, {[]any{"a", "v"}, Annotator}, {[]any{"r", "c", "a"}, Write},
		{"r", Reviewer}, {[]any{"x", 3}, ""}, {nil, ""},
	} {
		if got := o.role(c.claim); got != c.want {
			t.Errorf("role(%v) = %q, want %q", c.claim, got, c.want)
		}
	}
}

func TestNewOIDCNeedsAWholeConfig(t *testing.T) {
	if o, err := NewOIDC(OIDCConfig{}); o != nil || err != nil {
		t.Fatalf("no issuer: %v %v, want sign-on off", o, err)
	}
	full := OIDCConfig{Issuer: "https://sso.example", ClientID: "fl", RedirectURL: "https://fl.example/cb", RoleMap: map[string]Role{"g": Read}}
	for field, cut := range map[string]func(*OIDCConfig){
		"oidc-client-id":    func(c *OIDCConfig) { c.ClientID = "" },
		"oidc-redirect-url": func(c *OIDCConfig) { c.RedirectURL = "" },
		"oidc-role-map":     func(c *OIDCConfig) { c.RoleMap = nil },
	} {
		c := full
		cut(&c)
		if _, err := NewOIDC(c); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("without %s: %v", field, err)
		}
	}
}
