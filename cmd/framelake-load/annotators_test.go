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

// TestAnnotatorsAgainstARealServer runs the annotators' load briefly: every
// edit is stored and every stale one refused, so both rows show no error.
func TestAnnotatorsAgainstARealServer(t *testing.T) {
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
	var out bytes.Buffer
	if err := run(ctx, []string{"annotators", "--url", a.BaseURL(), "--key", k.Key, "--secret", secret,
		"--annotators", "3", "--every", "100ms", "--duration", "3s"}, &out); err != nil {
		t.Fatalf("annotators: %v\n%s", err, out.String())
	}
	for _, name := range []string{opEdit, opConflict} {
		row := ""
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), name) {
				row = line
			}
		}
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(row), name))
		if len(f) < 7 || f[1] != "0" || f[0] == "0" {
			t.Errorf("%s: row %q, want some and 0 errors\n%s", name, row, out.String())
		}
	}
}
