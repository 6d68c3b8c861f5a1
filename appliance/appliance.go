// Package appliance composes framelake: it opens the data folder (SQLite
// database, media store, URL-signing key), migrates every package's tables,
// starts the job workers and, when given an address, serves the REST API.
// It is the one place that knows every package; Go programs embed framelake
// through it.
package appliance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/curate"
	"github.com/framelake/framelake/dataset"
	"github.com/framelake/framelake/evaluate"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/replica"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/labelimport"
	"github.com/framelake/framelake/labelnext"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/propagate"
	"github.com/framelake/framelake/vector"
	"github.com/framelake/framelake/web"
)

// Version is the framelake version, set at build time with -ldflags "-X ...appliance.Version=...".
var Version = "dev"

// Config says where the data lives and how to serve it.
type Config struct {
	DataDir        string       // data folder; created if missing
	Addr           string       // HTTP listen address, e.g. "127.0.0.1:8080"; "" serves nothing
	BaseURL        string       // public URL prefix for media links; default "http://" + the bound address
	Logger         *slog.Logger // default: text to stderr
	MaxUploadBytes int64        // largest multipart request; default 8 GiB
	// JobWorkers is how many jobs run at once (default 2). Negative starts no
	// workers: command-line tools that open a data folder a server may be
	// using must not resume that server's running jobs.
	JobWorkers int
	// ModelsDir holds the system default model packages `make models` builds
	// (one folder per application); they are registered at Open when set and
	// jobs run. `framelake serve` finds it along a search path
	// (docs/operations.md, "Configuration"); a program embedding framelake names it here.
	ModelsDir string
	// Media is where media lives: "" for what the data folder's database
	// records (DATA/media for a new lake), or an S3-compatible bucket,
	// s3://bucket/prefix?endpoint=...&region=..., with credentials in the
	// AWS environment variables (lake.Options.Media). MediaRedirect makes
	// bucket media links redirect to presigned object URLs.
	Media         string
	MediaRedirect bool
	// Replica, when set, streams the database continuously with Litestream
	// to s3://bucket/prefix?endpoint=...&region=... (credentials as for
	// Media) or file:///folder; `framelake restore --from` brings it back.
	// A commit reaches it within about two ReplicaSyncIntervals (default
	// replica.DefaultSyncInterval, 100ms) and one upload.
	Replica             string
	ReplicaSyncInterval time.Duration
	URLTTL              time.Duration // lifetime of signed media URLs; default 24h
	// MaxPixels is the largest image the lake takes, width times height,
	// read from its header; default lake.DefaultMaxPixels (100 million).
	MaxPixels int
	// ProbeTimeout bounds one ffprobe run on an uploaded video (default
	// 60s), so a file made to hang it is refused; FFprobe names the program
	// (default "ffprobe" on PATH).
	ProbeTimeout time.Duration
	FFprobe      string
	// FacetSample is how many of a selection's newest files the web app's
	// sidebar counts are estimated from when it selects more
	// (lake.Options.FacetSample; default lake.DefaultFacetSample).
	FacetSample int
	// DBMmapSize is how much of the database file is memory-mapped
	// (sqlitedb.Options.MmapSize; default 256 MiB). Mapped pages count in
	// the RSS: a bulk import (import --data) maps less.
	DBMmapSize int64
	// DBCheckpointPages is sqlitedb.Options.CheckpointPages: how far the
	// WAL grows between checkpoints (default 1,000 pages). A bulk import
	// (import --data) checkpoints less often.
	DBCheckpointPages int
	// ArchiveLimits bound what an archive uploaded to POST
	// /api/v1/lake/imports may unpack to (labelimport's defaults when zero).
	ArchiveLimits labelimport.Limits

	// What a client may hold of the server (web.ServerOptions): request
	// headers must arrive within HeaderTimeout (default 10s), an idle
	// keep-alive connection closes after IdleTimeout (60s), a request body
	// must deliver BodyMinBytes in every BodyTimeout (64 KiB in 30s: a
	// minimum rate, so slow large uploads still complete), and at most
	// MaxConns connections (1024, and at most half the open-file limit) are
	// served at once, of which MaxInFlight requests are worked on (default
	// 4 per core, negative: no bound) while the rest wait in order.
	HeaderTimeout time.Duration
	IdleTimeout   time.Duration
	BodyTimeout   time.Duration
	BodyMinBytes  int64
	MaxConns      int
	MaxInFlight   int

	// OIDC configures single sign-on (docs/team.md); off without an Issuer.
	OIDC auth.OIDCConfig
}

// Appliance is an open framelake: its services, usable from Go, and its server.
type Appliance struct {
	Lake     *lake.Lake
	Keys     *auth.Keys
	Jobs     *job.Queue
	Vectors  *vector.Store
	Annotate *annotate.Service
	Analysis *analysis.Service
	Datasets *dataset.Service
	// LabelNext chooses what to label next and scores uniqueness.
	LabelNext *labelnext.Service
	Evaluate  *evaluate.Service
	Curate    *curate.Service
	Propagate *propagate.Service
	Imports   *labelimport.Service
	OIDC      *auth.OIDC // single sign-on; nil when off

	cfg      Config
	db       *sqlitedb.DB
	replica  *replica.Replicator
	listener net.Listener
	log      *slog.Logger

	jobsStarted bool
	lock        *DataLock
}

// Migrate brings db to this build's schema: every package's embedded
// migrations in order, each package's once (Open does it first).
func Migrate(ctx context.Context, db *sqlitedb.DB) error {
	for _, m := range []struct {
		owner string
		fs    fs.FS
	}{{"lake", lake.Migrations}, {"auth", auth.Migrations}, {"job", job.Migrations()},
		{"vector", vector.Migrations}, {"annotate", annotate.Migrations}, {"analysis", analysis.Migrations},
		{"dataset", dataset.Migrations}, {"evaluate", evaluate.Migrations}} {
		if err := db.Migrate(ctx, m.owner, m.fs); err != nil {
			return err
		}
	}
	return nil
}

// Open opens (or creates) the data folder, migrates it, starts the job
// workers, and binds cfg.Addr if set, so a taken port fails here.
func Open(ctx context.Context, cfg Config) (*Appliance, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("appliance: data folder required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	a := &Appliance{cfg: cfg, log: cfg.Logger}
	var err error
	if a.lock, err = lockShared(cfg.DataDir); err != nil {
		return nil, err
	}
	if err := a.open(ctx); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *Appliance) open(ctx context.Context) error {
	path := filepath.Join(a.cfg.DataDir, "framelake.db")
	db, err := sqlitedb.Open(ctx, path, sqlitedb.Options{MmapSize: a.cfg.DBMmapSize, NoAutoCheckpoint: a.cfg.Replica != "",
		CheckpointPages: a.cfg.DBCheckpointPages})
	if err != nil {
		return err
	}
	a.db = db
	if a.cfg.Replica != "" {
		if a.replica, err = replica.Start(ctx, path, a.cfg.Replica,
			replica.Options{Logger: a.log, SyncInterval: a.cfg.ReplicaSyncInterval}); err != nil {
			return err
		}
	}
	if err := Migrate(ctx, db); err != nil {
		return err
	}
	key, err := a.signingKey()
	if err != nil {
		return err
	}
	if a.cfg.Addr != "" {
		if a.listener, err = net.Listen("tcp", a.cfg.Addr); err != nil {
			return fmt.Errorf("listen %s: %w", a.cfg.Addr, err)
		}
		if a.cfg.BaseURL == "" {
			a.cfg.BaseURL = "http://" + a.listener.Addr().String()
		}
	}
	a.Lake, err = lake.Open(ctx, db, lake.Options{MediaDir: filepath.Join(a.cfg.DataDir, "media"), SigningKey: key,
		BaseURL: a.cfg.BaseURL, URLTTL: a.cfg.URLTTL, MaxPixels: a.cfg.MaxPixels, Logger: a.log,
		ProbeTimeout: a.cfg.ProbeTimeout, FFprobe: a.cfg.FFprobe, ThumbDir: filepath.Join(a.cfg.DataDir, "thumbs"),
		Media: a.cfg.Media, MediaRedirect: a.cfg.MediaRedirect, FacetSample: a.cfg.FacetSample})
	if err != nil {
		return err
	}
	a.Annotate = annotate.New(db, a.Lake, annotate.Options{BaseURL: a.cfg.BaseURL})
	a.Keys = auth.New(db)
	if a.OIDC, err = auth.NewOIDC(a.cfg.OIDC); err != nil {
		return err
	}
	if a.Vectors, err = vector.Open(ctx, db, vector.Options{}); err != nil {
		return err
	}
	a.Lake.OnDelete(deleteEmbeddings(a.Vectors))
	a.Lake.ScoreAtIngest(curate.IngestScorer())
	a.Jobs = job.New(db, job.Options{Workers: max(0, a.cfg.JobWorkers), Logger: a.log})
	a.Vectors.HandleProjections(a.Jobs)
	a.Curate = curate.New(a.Lake, a.Vectors, a.Jobs, curate.Options{Logger: a.log})
	a.Analysis, err = analysis.New(ctx, analysis.Deps{Lake: a.Lake, Vectors: a.Vectors, Jobs: a.Jobs},
		analysis.Options{DataDir: a.cfg.DataDir, Logger: a.log})
	if err != nil {
		return err
	}
	a.Propagate = propagate.New(a.Lake, a.Jobs, propagate.Options{Logger: a.log, Models: a.Analysis, Annotate: a.Annotate})
	// Projects and runs are operation_list ids even before they have boxes.
	// Keypoint declarations live on project labels (annotate); datasets and
	// evaluations look them up by label name.
	a.Datasets = dataset.New(db, a.Lake, a.Jobs, dataset.Options{Logger: a.log, Skeletons: a.Annotate.Skeleton}, a.Annotate, a.Analysis)
	a.LabelNext = labelnext.New(a.Lake, a.Vectors, a.Jobs, labelnext.Options{Logger: a.log})
	a.Evaluate = evaluate.New(db, a.Lake, a.Jobs, a.Analysis, evaluate.Options{Logger: a.log, Versions: a.Datasets,
		Skeletons: a.Annotate.Skeleton})
	if a.Imports, err = labelimport.NewService(a.Lake, a.Annotate, a.Jobs, filepath.Join(a.cfg.DataDir, "imports"),
		a.cfg.ArchiveLimits); err != nil {
		return err
	}
	if a.cfg.JobWorkers < 0 {
		return nil
	}
	if a.cfg.ModelsDir != "" {
		if err := a.registerDefaults(ctx, a.cfg.ModelsDir); err != nil {
			return fmt.Errorf("system default models: %w", err)
		}
	}
	a.jobsStarted = true
	return a.Jobs.Start(context.WithoutCancel(ctx))
}

// signingKey reads the data folder's URL-signing key, creating it once.
func (a *Appliance) signingKey() ([]byte, error) {
	path := filepath.Join(a.cfg.DataDir, SigningKeyFile)
	key, err := os.ReadFile(path)
	if err == nil && len(key) >= 32 {
		return key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return newSigningKey(path)
}

// Addr is the bound listen address ("" when not serving).
func (a *Appliance) Addr() string {
	if a.listener == nil {
		return ""
	}
	return a.listener.Addr().String()
}

// BaseURL is the public URL prefix of the server.
func (a *Appliance) BaseURL() string { return a.cfg.BaseURL }

// Handler is the REST API as an http.Handler, for programs that serve it themselves.
func (a *Appliance) Handler() http.Handler {
	return web.New(web.Deps{Lake: a.Lake, Keys: a.Keys, Jobs: a.Jobs, Vectors: a.Vectors, Annotate: a.Annotate,
		Analysis: a.Analysis, Datasets: a.Datasets, LabelNext: a.LabelNext, Evaluate: a.Evaluate, Curate: a.Curate, Propagate: a.Propagate,
		Imports: a.Imports, OIDC: a.OIDC, Logger: a.log},
		web.Options{MaxUploadBytes: a.cfg.MaxUploadBytes, Version: Version})
}

// Serve serves the REST API on the bound address until ctx is done, then
// shuts down gracefully, letting requests in flight finish (up to 30 s).
func (a *Appliance) Serve(ctx context.Context) error {
	if a.listener == nil {
		return errors.New("appliance: no address to serve on (Config.Addr is empty)")
	}
	opt := web.ServerOptions{ReadHeaderTimeout: a.cfg.HeaderTimeout, IdleTimeout: a.cfg.IdleTimeout,
		BodyTimeout: a.cfg.BodyTimeout, BodyMinBytes: a.cfg.BodyMinBytes, MaxConns: a.cfg.MaxConns,
		MaxInFlight: a.cfg.MaxInFlight, ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	srv, ln := web.NewServer(a.Handler(), a.listener, opt)
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- srv.Shutdown(sctx)
	}()
	a.log.Info("serving", "addr", a.listener.Addr().String(), "data", a.cfg.DataDir, "version", Version,
		"max_conns", opt.EffectiveMaxConns(), "max_inflight", opt.EffectiveMaxInFlight())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-done
}

// Close stops the job workers (running jobs resume at the next Open) and
// closes the database.
func (a *Appliance) Close() error {
	var errList []error
	if a.jobsStarted {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		errList = append(errList, a.Jobs.Stop(ctx))
		cancel()
	}
	if a.listener != nil {
		a.listener.Close()
	}
	errList = append(errList, a.Analysis.Close()) // nil-safe; after the jobs that use its workers
	if a.Vectors != nil {
		errList = append(errList, a.Vectors.Close())
	}
	if a.db != nil {
		errList = append(errList, a.db.Close())
	}
	// After the database: Litestream must outlive the connections writing
	// it, and uploads what they committed last.
	if a.replica != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		errList = append(errList, a.replica.Close(ctx))
		cancel()
	}
	a.lock.Release()
	return errors.Join(errList...)
}

// ReplicaPositions are the newest transaction Litestream has read from the
// WAL and the newest it has uploaded (0, 0 without Config.Replica); the gap
// is what a crash now would lose.
func (a *Appliance) ReplicaPositions() (local, replicated uint64) {
	if a.replica == nil {
		return 0, 0
	}
	return a.replica.Positions()
}
