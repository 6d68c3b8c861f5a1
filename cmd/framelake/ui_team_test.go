package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestWebAppTeam drives three people at once, each in a browser context of
// their own, through the real binary's web app (web/ui/test/team.mjs): the
// admin signs in with the name and password the first start wrote, adds an
// annotator and a reviewer on the people page and cuts a task of two frames
// into a job; the annotator signs in by password, lands on their queue,
// pulls the job with "Next job", draws a box, marks the other frame empty
// and submits; the reviewer takes the job from their queue, comments on the
// box and rejects the job; the annotator, without reloading, sees the job
// come back with the comment pinned on the box, moves the box, resolves the
// comment and submits again; the reviewer accepts. Then the frame's history
// panel lists exactly the annotator's two changes (+1, then +1 -1) and the
// statistics page the day's figures those events make. Sign-out ends the
// session (a reload shows the sign-in form). It fails, never skips, when
// Node or Chromium is missing.
func TestWebAppTeam(t *testing.T) {
	needBrowser(t)
	s := startUIServer(t)
	var first struct{ User, Password string }
	b, err := os.ReadFile(filepath.Join(s.data, "admin-key.json"))
	if err != nil || json.Unmarshal(b, &first) != nil || first.Password == "" {
		t.Fatalf("admin-key.json has no user's password: %v %s", err, b)
	}
	task := s.boxedTask(t, "team", 2, 640, 480, 0, []string{"car", "person"})
	expect := map[string]any{"admin": first.User, "password": first.Password, "task": task}
	s.browserCheck(t, "team.mjs", s.admin, expect, shotsDir(t, "team"))
}
