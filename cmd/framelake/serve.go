package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/vips"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/lake"
)

func cmdServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f := serveFlagSet(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *f.facetSample < 1 {
		return fmt.Errorf("--facet-sample must be at least 1, got %d", *f.facetSample)
	}
	if *f.cpuProfile != "" {
		stop, err := startCPUProfile(*f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	log, err := newLogger(*f.logFormat)
	if err != nil {
		return err
	}
	slog.SetDefault(log) // Litestream (serve --replica) logs some of its work there
	cfg, err := f.config(log)
	if err != nil {
		return err
	}
	a, err := appliance.Open(ctx, cfg)
	if err != nil {
		return err
	}
	if path, err := a.EnsureAdminKey(ctx); err != nil {
		a.Close()
		return err
	} else if path != "" {
		log.Info("created an admin API key on first start; its secret is in a file only you can read",
			"read_it_with", "cat "+path)
	}
	// Shutting down can take a while (requests in flight, running jobs): say it began.
	context.AfterFunc(ctx, func() { log.Info("stopping: finishing requests in flight and pausing jobs") })
	if err := errors.Join(a.Serve(ctx), a.Close()); err != nil {
		log.Error("stopped with an error", "err", err)
		return err
	}
	log.Info("stopped; running jobs resume at the next start", "data", cfg.DataDir)
	return nil
}

// serveFlags are serve's flags, each defaulting to its environment variable.
type serveFlags struct {
	data, addr, base, logFormat, upload, models, media, replica, pixels      *string
	headerTimeout, idleTimeout, bodyRate, maxConns, probeTimeout, cpuProfile *string
	maxInflight                                                              *string
	oidc                                                                     oidcFlags
	redirect                                                                 *bool
	facetSample                                                              *int
	limits                                                                   labelimport.Limits
}

// serveFlagSet defines serve's flags on fs.
func serveFlagSet(fs *flag.FlagSet) *serveFlags {
	f := &serveFlags{}
	f.data = fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA)")
	f.addr = fs.String("addr", envOr("FRAMELAKE_ADDR", "127.0.0.1:8080"), "listen address (env FRAMELAKE_ADDR)")
	f.base = fs.String("base-url", os.Getenv("FRAMELAKE_BASE_URL"), "public URL prefix of media links (env FRAMELAKE_BASE_URL; default http://ADDR)")
	f.logFormat = fs.String("log-format", envOr("FRAMELAKE_LOG_FORMAT", "text"), "log format: text or json (env FRAMELAKE_LOG_FORMAT)")
	f.upload = fs.String("max-upload", envOr("FRAMELAKE_MAX_UPLOAD", "8GiB"), "largest upload request (env FRAMELAKE_MAX_UPLOAD)")
	f.models = fs.String("models", "", "folder of the system default models that make models builds (env "+
		"FRAMELAKE_MODELS_DIR; default: the first that holds them of DATA/models, REPO/build/models for REPO/bin/framelake, "+
		"models beside the binary)")
	f.media = fs.String("media", os.Getenv("FRAMELAKE_MEDIA"), "where media lives: local (DATA/media) or "+
		"s3://bucket/prefix?endpoint=URL&region=R, credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY "+
		"(env FRAMELAKE_MEDIA; default: what the lake records, local for a new one)")
	f.redirect = fs.Bool("media-redirect", os.Getenv("FRAMELAKE_MEDIA_REDIRECT") == "1",
		"bucket media links redirect to presigned object URLs (env FRAMELAKE_MEDIA_REDIRECT=1)")
	f.replica = fs.String("replica", os.Getenv("FRAMELAKE_REPLICA"), "stream the database with Litestream to "+
		"s3://bucket/prefix?endpoint=URL&region=R (credentials as --media) or file:///folder; "+
		"`framelake restore --from URL` brings it back (env FRAMELAKE_REPLICA)")
	f.pixels = maxPixelsFlag(fs)
	f.headerTimeout = fs.String("header-timeout", envOr("FRAMELAKE_HEADER_TIMEOUT", "10s"), "longest time to send a request's headers")
	f.idleTimeout = fs.String("idle-timeout", envOr("FRAMELAKE_IDLE_TIMEOUT", "60s"), "close keep-alive connections idle this long")
	f.bodyRate = fs.String("body-min-rate", envOr("FRAMELAKE_BODY_MIN_RATE", "64KiB/30s"), "cut request bodies slower than this")
	f.maxConns = fs.String("max-conns", envOr("FRAMELAKE_MAX_CONNS", "1024"), "most connections served at once")
	f.maxInflight = fs.String("max-inflight", envOr("FRAMELAKE_MAX_INFLIGHT", "auto"),
		"most requests worked on at once, the rest queued in order: a number, auto (4 per core) or off")
	f.probeTimeout = fs.String("probe-timeout", envOr("FRAMELAKE_PROBE_TIMEOUT", "60s"),
		"longest ffprobe run on an uploaded video; a video that takes longer is refused as unreadable")
	f.facetSample = fs.Int("facet-sample", int(envInt64("FRAMELAKE_FACET_SAMPLE", lake.DefaultFacetSample)),
		"the web app's sidebar estimates the counts of a selection of more files from its newest this many "+
			"(env FRAMELAKE_FACET_SAMPLE): more is closer, fewer is faster")
	f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile of the server to this file until it stops (for go tool pprof)")
	archiveLimitFlags(fs, &f.limits)
	f.oidc.define(fs)
	return f
}

// config is the appliance's configuration the flags give; it logs which
// models folder it found.
func (f *serveFlags) config(log *slog.Logger) (appliance.Config, error) {
	maxPixels, err := parsePixels(*f.pixels)
	if err != nil {
		return appliance.Config{}, err
	}
	maxUpload, err := parseBytes(*f.upload)
	if err != nil {
		return appliance.Config{}, fmt.Errorf("--max-upload: %w", err)
	}
	modelsDir, foundBy, searched := findModels(*f.models, *f.data)
	if modelsDir != "" {
		log.Info("system default models", "folder", modelsDir, "found_by", foundBy)
	} else {
		log.Warn("no system default models found; analysis without a model_name fails until `make models` builds them",
			"searched", strings.Join(searched, ", "))
	}
	cfg := appliance.Config{DataDir: *f.data, Addr: *f.addr, BaseURL: *f.base, Logger: log,
		MaxUploadBytes: maxUpload, ModelsDir: modelsDir, MaxPixels: maxPixels, ArchiveLimits: f.limits,
		Media: *f.media, MediaRedirect: *f.redirect, Replica: *f.replica, FacetSample: *f.facetSample}
	if err := serverLimits(&cfg, *f.headerTimeout, *f.idleTimeout, *f.bodyRate, *f.maxConns, *f.maxInflight); err != nil {
		return cfg, err
	}
	if cfg.ProbeTimeout, err = time.ParseDuration(*f.probeTimeout); err != nil || cfg.ProbeTimeout <= 0 {
		return cfg, fmt.Errorf("--probe-timeout: bad duration %q: use e.g. 60s", *f.probeTimeout)
	}
	cfg.OIDC, err = f.oidc.config()
	return cfg, err
}

// findModels picks the folder of the system default models: the one named by
// --models or FRAMELAKE_MODELS_DIR as given, else the first of these that
// holds them: DATA/models, the build/models that `make models` fills in the
// repository the binary was built in (bin/framelake there), and a models
// folder beside the binary (an unpacked release). It says how the folder was
// found, or, when none was, where it looked.
func findModels(flagDir, dataDir string) (dir, foundBy string, searched []string) {
	if flagDir != "" {
		return flagDir, "--models", nil
	}
	if env := os.Getenv("FRAMELAKE_MODELS_DIR"); env != "" {
		return env, "FRAMELAKE_MODELS_DIR", nil
	}
	type place struct{ dir, name string }
	places := []place{{filepath.Join(dataDir, "models"), "the data folder"}}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			if repo := repoOf(filepath.Dir(exe)); repo != "" {
				places = append(places, place{filepath.Join(repo, "build", "models"), "the binary's repository"})
			}
			places = append(places, place{filepath.Join(filepath.Dir(exe), "models"), "beside the binary"})
		}
	}
	for _, p := range places {
		if appliance.HasDefaultModels(p.dir) {
			abs, _ := filepath.Abs(p.dir)
			return abs, p.name, nil
		}
		searched = append(searched, p.dir)
	}
	return "", "", searched
}

// repoOf is the framelake source tree that dir is in (the binary of `make
// build` sits in its bin/), or "".
func repoOf(dir string) string {
	for ; ; dir = filepath.Dir(dir) {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(b), "module github.com/framelake/framelake\n") {
			return dir
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

func newLogger(format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, nil)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, got %q", format)
}

func cmdVersion(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	fmt.Printf("framelake %s (%s, libvips %s)\n", appliance.Version, runtime.Version(), vips.Version())
	return nil
}

// parse parses flags that may come before or after positional arguments and
// checks that exactly want positional arguments remain (-1: any number).
func parse(fs *flag.FlagSet, args []string, want int) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if want >= 0 && len(pos) != want {
		return fmt.Errorf("want %d argument(s), got %d: %s", want, len(pos), strings.Join(pos, " "))
	}
	return fs.Parse(pos) // leaves the positional arguments in fs.Args()
}

// parseDuration also accepts days: "30d".
func parseDuration(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("bad duration %q: use e.g. 30d or 12h", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad duration %q: use e.g. 30d or 12h", s)
	}
	return v, nil
}

// serverLimits sets what a client may hold of the server from serve's flags.
func serverLimits(cfg *appliance.Config, header, idle, bodyRate, maxConns, maxInflight string) error {
	var err error
	if cfg.HeaderTimeout, err = time.ParseDuration(header); err != nil || cfg.HeaderTimeout <= 0 {
		return fmt.Errorf("--header-timeout: bad duration %q: use e.g. 10s", header)
	}
	if cfg.IdleTimeout, err = time.ParseDuration(idle); err != nil || cfg.IdleTimeout <= 0 {
		return fmt.Errorf("--idle-timeout: bad duration %q: use e.g. 60s", idle)
	}
	if cfg.BodyMinBytes, cfg.BodyTimeout, err = parseRate(bodyRate); err != nil {
		return fmt.Errorf("--body-min-rate: %w", err)
	}
	if cfg.MaxConns, err = strconv.Atoi(maxConns); err != nil || cfg.MaxConns <= 0 {
		return fmt.Errorf("--max-conns: want a positive number, got %q", maxConns)
	}
	switch maxInflight {
	case "auto":
	case "off":
		cfg.MaxInFlight = -1
	default:
		if cfg.MaxInFlight, err = strconv.Atoi(maxInflight); err != nil || cfg.MaxInFlight <= 0 {
			return fmt.Errorf("--max-inflight: want a positive number, auto or off, got %q", maxInflight)
		}
	}
	return nil
}

// parseRate reads a minimum rate like 64KiB/30s: a size per duration.
func parseRate(s string) (int64, time.Duration, error) {
	size, per, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("bad rate %q: use e.g. 64KiB/30s", s)
	}
	n, err := parseBytes(size)
	if err != nil {
		return 0, 0, err
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return 0, 0, fmt.Errorf("bad rate %q: use e.g. 64KiB/30s", s)
	}
	return n, d, nil
}

// parseBytes reads sizes like 512MiB, 8GiB, 100MB or a plain byte count.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("bad size %q", s)
			}
			return v * u.mult, nil
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q: use e.g. 8GiB", s)
	}
	return v, nil
}
