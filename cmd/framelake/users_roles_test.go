package main_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/appliance"
)

// TestUsersRolesAndMembers: the team's roles from the command line, a
// project's members made, listed and ended, a person's key that acts as
// them, and bad input refused with what is wrong.
func TestUsersRolesAndMembers(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()
	a, err := appliance.Open(ctx, appliance.Config{DataDir: data, JobWorkers: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Annotate.CreateProject(ctx, annotate.NewProject{Name: "streets", ContentType: annotate.Image,
		Labels: []annotate.Label{{Name: "car"}}})
	a.Close()
	if err != nil {
		t.Fatal(err)
	}
	users := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"users"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	steps := []struct {
		stdin string
		args  []string
		ok    bool
		want  string
	}{
		{"a long password\n", []string{"create", "--data", data, "--role", "annotator", "ann"}, true, "ann: annotator, active"},
		{"a long password\n", []string{"create", "--data", data, "--role", "curator", "cur"}, true, "cur: write, active"},
		{"a long password\n", []string{"create", "--data", data, "--role", "owner", "own"}, false, "role must be admin, curator"},
		{"", []string{"member", "--data", data, "--project", p.ID, "ann"}, true, "ann: annotator of " + p.ID},
		{"", []string{"member", "--data", data, "--project", p.ID, "--role", "reviewer", "cur"}, true, "cur: reviewer of " + p.ID},
		{"", []string{"member", "--data", data, "--project", "prj_nothere", "ann"}, false, "prj_nothere"},
		{"", []string{"member", "--data", data, "ann"}, false, "needs --project"},
		{"", []string{"member", "--data", data, "--project", p.ID, "--role", "admin", "ann"}, false, "annotator or reviewer"},
		{"", []string{"members", "--data", data, "--project", p.ID}, true, "ann   annotator"},
		{"", []string{"unmember", "--data", data, "--project", p.ID, "cur"}, true, "cur: no longer a member"},
		{"", []string{"unmember", "--data", data, "--project", p.ID, "cur"}, false, "not a member"},
		{"", []string{"role", "--data", data, "--role", "reviewer", "ann"}, true, "ann: reviewer, active"},
	}
	for _, s := range steps {
		out, err := users(s.stdin, s.args...)
		if (err == nil) != s.ok || !strings.Contains(out, s.want) {
			t.Errorf("users %s: %v %q, want ok=%v and %q", strings.Join(s.args, " "), err, out, s.ok, s.want)
		}
	}
	out, err := users("", "key", "--data", data, "--json", "ann")
	var k struct{ Key, Secret, User, Role string }
	if err != nil || json.Unmarshal([]byte(out), &k) != nil || k.User != "ann" || k.Role != "reviewer" || k.Secret == "" {
		t.Errorf("a person's key: %v %s", err, out)
	}
}
