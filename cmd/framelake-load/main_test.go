package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake/benchlake"
)

// TestLoadAndShapesAgainstARealServer builds a small camera lake, serves it,
// and runs the load and the shapes against it: every operation of the mix
// has its row, none fails (each checks what it got back), and every shape
// answers.
func TestLoadAndShapesAgainstARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a load run against a real server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "lake")
	if err := benchlake.Ensure(ctx, dir, benchlake.Spec{Files: 1600, Labels: 1, Cameras: 8, Media: true}); err != nil {
		t.Fatal(err)
	}
	a, err := appliance.Open(ctx, appliance.Config{DataDir: dir, Addr: "127.0.0.1:0", JobWorkers: -1,
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
	creds := []string{"--url", a.BaseURL(), "--key", k.Key, "--secret", secret}
	var out bytes.Buffer
	if err := run(ctx, append([]string{"run", "--clients", "4", "--duration", "3s", "--sample", "1s"}, creds...), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, o := range append(ops, op{name: "total"}) {
		row := ""
		for _, line := range strings.Split(out.String(), "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), o.name+" "); ok && strings.TrimSpace(rest)[0] >= '0' &&
				strings.TrimSpace(rest)[0] <= '9' {
				row = line
			}
		}
		f := strings.Fields(row)
		if len(f) < 7 || f[len(f)-6] != "0" {
			t.Errorf("%s: row %q, want one with 0 errors\n%s", o.name, row, out.String())
		}
	}
	_, samples, _ := strings.Cut(out.String(), "server runtime, sampled during the run")
	if rows := strings.Split(strings.TrimSpace(samples), "\n"); len(rows) < 4 || !strings.Contains(rows[1], "goroutines") {
		t.Errorf("want the server's runtime sampled idle before, during and after the phase:\n%s", out.String())
	}
	if !strings.Contains(samples, "wait ms") || !strings.Contains(samples, "writer since the server started: ") ||
		strings.Contains(samples, "started: 0 write transactions") {
		t.Errorf("want the writer's transactions, waits and holds under the samples:\n%s", out.String())
	}
	out.Reset()
	if err := run(ctx, append([]string{"shapes", "--rounds", "1"}, creds...), &out); err != nil {
		t.Fatalf("shapes: %v\n%s", err, out.String())
	}
	if n := strings.Count(out.String(), "\n"); n != len(shapes(1600))+1 {
		t.Errorf("shapes printed %d lines, want a header and %d shapes:\n%s", n, len(shapes(1600)), out.String())
	}
}
