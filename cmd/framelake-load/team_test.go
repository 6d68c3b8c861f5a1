package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
)

// TestTeamAgainstARealServer runs the team's load briefly, with the key and
// as people: annotators' edits stored and stale ones refused, the
// reviewer's pages and the curator's queries answered, every row with
// requests and no error.
func TestTeamAgainstARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a load run against a real server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := appliance.Open(ctx, appliance.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx) }()
	defer func() { cancel(); <-done; a.Close() }()
	k, secret, err := a.Keys.Create(ctx, "load", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	admin, adminSecret, err := a.Keys.Create(ctx, "admin", auth.Admin, 0)
	if err != nil {
		t.Fatal(err)
	}
	// With --people the annotators are annotator accounts signed in by
	// session, each saving only the frames of the job they hold.
	for _, args := range [][]string{{"--key", k.Key, "--secret", secret}, {"--key", admin.Key, "--secret", adminSecret, "--people"}} {
		var out bytes.Buffer
		if err := run(ctx, append([]string{"team", "--url", a.BaseURL(), "--annotators", "3", "--every", "100ms", "--page",
			"30ms", "--duration", "3s"}, args...), &out); err != nil {
			t.Fatalf("team %v: %v\n%s", args, err, out.String())
		}
		for _, name := range teamOps {
			row := ""
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), name) {
					row = line
				}
			}
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(row), name))
			if len(f) < 7 || f[1] != "0" || f[0] == "0" {
				t.Errorf("%v %s: row %q, want some and 0 errors\n%s", args, name, row, out.String())
			}
		}
	}
}
