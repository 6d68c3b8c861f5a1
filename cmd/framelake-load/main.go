// Command framelake-load measures a framelake server under a mixed load of
// REST calls (lists, queries, counts, details, media fetches, uploads,
// metadata patches, thumbnails, frame annotation edits and find_similar) and
// prints, per operation and in total, the count, errors, latency percentiles
// and requests per second, then the server's goroutines and memory sampled
// idle before, during and after the phases (GET /api/v1/runtime). It talks
// to the server only through the REST API, so it measures any build side by
// side.
//
//	framelake-load lake --data .bench/lake-100k      # build the 100,000-file lake once
//	framelake-load run --url http://127.0.0.1:8080 --key K --secret S --clients 16,64 --duration 60s
//	framelake-load shapes --url http://127.0.0.1:8080 --url http://127.0.0.1:8081 --key K --secret S
//	framelake-load annotators --url http://127.0.0.1:8080 --key K --secret S --annotators 8 --duration 60s
//	framelake-load team --url http://127.0.0.1:8080 --key K --secret S --annotators 20 --every 2s --duration 60s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake/benchlake"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "framelake-load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: framelake-load lake|run|shapes|annotators|team [flags]")
	}
	switch args[0] {
	case "lake":
		return cmdLake(ctx, args[1:], out)
	case "run":
		return cmdRun(ctx, args[1:], out)
	case "shapes":
		return cmdShapes(ctx, args[1:], out)
	case "annotators":
		return cmdAnnotators(ctx, args[1:], out)
	case "team":
		return cmdTeam(ctx, args[1:], out)
	}
	return fmt.Errorf("unknown command %q: use lake, run, shapes, annotators or team", args[0])
}

// cmdLake builds the generated lake the load runs against and creates a
// write key for it, printed as JSON.
func cmdLake(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("lake", flag.ContinueOnError)
	data := fs.String("data", ".bench/lake-100k", "data folder to build (kept when already complete)")
	files := fs.Int("files", 100_000, "files in the lake")
	cameras := fs.Int("cameras", 8, "cameras: metadata.camera values and collections cam-a, cam-b, ...")
	if err := fs.Parse(args); err != nil {
		return err
	}
	t := time.Now()
	spec := benchlake.Spec{Files: *files, Boxes: 3 * *files, Labels: 50, Cameras: *cameras, Media: true}
	if err := benchlake.Ensure(ctx, *data, spec); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "lake %s ready in %s\n", *data, time.Since(t).Round(time.Second))
	a, err := appliance.Open(ctx, appliance.Config{DataDir: *data, JobWorkers: -1})
	if err != nil {
		return err
	}
	defer a.Close()
	k, secret, err := a.Keys.Create(ctx, "load", auth.Write, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "{\"key\":%q,\"secret\":%q}\n", k.Key, secret)
	return nil
}

func cmdRun(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	url := fs.String("url", os.Getenv("FRAMELAKE_URL"), "server (env FRAMELAKE_URL)")
	key := fs.String("key", os.Getenv("FRAMELAKE_KEY"), "write key (env FRAMELAKE_KEY)")
	secret := fs.String("secret", os.Getenv("FRAMELAKE_SECRET"), "its secret (env FRAMELAKE_SECRET)")
	clients := fs.String("clients", "16,64", "concurrent clients of each phase, comma-separated")
	duration := fs.Duration("duration", 60*time.Second, "length of each phase")
	cameras := fs.Int("cameras", 8, "cameras of the lake (as given to lake)")
	seed := fs.Uint64("seed", 1, "seed of the operation mix")
	maxPage := fs.Int("max-page", 0, "list only pages below this (0: any page, as a grid that jumps anywhere)")
	every := fs.Duration("sample", 5*time.Second, "how often to read the server's goroutines and memory (GET /api/v1/runtime)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *key == "" || *secret == "" {
		return errors.New("run needs --url, --key and --secret")
	}
	var phases []int
	for _, s := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("--clients: %q is not a positive number", s)
		}
		phases = append(phases, n)
	}
	l, err := newLoad(ctx, *url, *key, *secret, *cameras)
	if err != nil {
		return err
	}
	l.maxPage = *maxPage
	// Sampled idle before, through every phase, and idle after: growth that
	// outlives the load shows in the last samples.
	s := l.startSampler(ctx, *every)
	time.Sleep(*every)
	for _, n := range phases {
		res := l.phase(ctx, n, *duration, *seed)
		res.print(out, fmt.Sprintf("%s, %d clients, %s", *url, n, *duration))
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	time.Sleep(2 * *every)
	s.print(out)
	return nil
}
