// Package analysis is framelake's automatic analysis: a registry of model
// packages (docs/spec/interface.md 2.7), the runner that executes them, and the jobs
// that run a model over lake files and store what it saw: tags and machine
// boxes (auto_tagging, auto_annotation) or embedding vectors (embedding).
//
// Registry. A package arrives as a .tar.gz, is unpacked defensively (no
// absolute paths, no "..", no links leaving the folder, size and count
// limits), checked against its application's layout and kept under
// <data>/models/<model id>/package, with a virtual environment beside it
// (venv, with system site packages, so Debian's python3-torch and friends
// are visible) into which code/requirements.txt is installed, inside the
// request, with pip failing fast (no retries) and within InstallTimeout. The
// model table makes registrations outlive restarts. A name is taken until the
// model is deleted or replaced (RegisterRequest.Replace). The shipped system
// defaults are ordinary models named DefaultName(app), default-embedding for
// instance, installed by InstallDefault; "default" in a request means the
// application's current default, and an embedding model's vectors are stored
// under its own name, so one name works in listings, runs and the embedding
// functions alike.
//
// Runner. The seam is Runner: a local one keeps one long-lived Python worker
// per model (model_fn runs once) speaking a length-framed protocol over
// stdin/stdout (worker/worker.py, embedded and written out at start); a
// remote one calls a SageMaker-compatible endpoint (POST /invocations, GET
// /ping). InvocationHandler serves any Runner over that same HTTP protocol,
// which is what `framelake model serve` does, so both paths share one test
// suite and a model can move to a GPU host. Workers get a clean environment,
// a per-call timeout, a restart after a crash, an idle shutdown and a limit
// on how many live at once; the tail of their stderr goes into errors.
//
// Runs. Each client function validates its parameters, then enqueues an
// analysis job and inserts its run row in one transaction and returns at
// once. The job selects files (a collection or the lake, with query and
// filter), sends each image (resized to input_resolution) or sampled video
// frame to the model, keeps detections at or above confidence_threshold,
// maps boxes back to original pixels and writes tags, boxes or vectors in
// batches. Prompts an auto_annotation model reports it cannot look for (its
// answer's "unsupported") are kept on the run and the job result, so "not
// found" can be told from "not searched for". The run id is the operation of everything it writes, so datasets
// can name runs in operation_list; re-running a job (after a crash) replaces
// rather than duplicates its output.
package analysis

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/vector"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations are the package's numbered schema files, applied with
// db.Migrate(ctx, "analysis", analysis.Migrations).
var Migrations, _ = fs.Sub(migrations, "migrations")

//go:embed worker/worker.py
var workerScript []byte

// Application is what a model package is for.
type Application string

const (
	AutoTagging    Application = "auto_tagging"
	AutoAnnotation Application = "auto_annotation"
	Embedding      Application = "embedding"
	Segmentation   Application = "segmentation" // promptable masks for the workspace (segment.go)
	Tracking       Application = "tracking"     // follows a video track's object frame by frame (track.go)
)

// ParseApplication accepts the five names and the "autotagging" spelling of
// the interface's usage example.
func ParseApplication(s string) (Application, error) {
	switch s {
	case "auto_tagging", "autotagging":
		return AutoTagging, nil
	case "auto_annotation", "autoannotation":
		return AutoAnnotation, nil
	case "embedding":
		return Embedding, nil
	case "segmentation":
		return Segmentation, nil
	case "tracking":
		return Tracking, nil
	}
	return "", errs.Invalid("application", "application %q is not one of %s", s, applicationNames)
}

// applicationNames lists the applications for errors.
const applicationNames = "auto_tagging, auto_annotation, embedding, segmentation, tracking"

// Inference platforms.
const (
	Local  = "local"
	AWS    = "aws"
	UseEnv = "use_env"
)

// JobType is the job type of analysis runs.
const JobType = "analysis"

// DefaultModel names the system default model of an application in requests.
const DefaultModel = "default"

// DefaultName is the name the shipped system default model of app is
// registered, listed, run and stores its vectors under: default-embedding,
// default-auto-tagging, default-auto-annotation. It stays the same across
// rebuilds of the package, so scripts can name it.
func DefaultName(app Application) string {
	return "default-" + strings.ReplaceAll(string(app), "_", "-")
}

// Model is a registered model package.
type Model struct {
	ID            string      `json:"id"`
	Name          string      `json:"modelName"`
	Application   Application `json:"application"`
	Labels        []string    `json:"labels,omitempty"` // label_list.yaml of auto_tagging packages
	Endpoint      string      `json:"endpoint,omitempty"`
	SystemDefault bool        `json:"systemDefault"`
	PackageBytes  int64       `json:"packageBytes"`
	CreatedBy     string      `json:"createdBy,omitempty"`
	CreatedAt     time.Time   `json:"createdAt"`
	UpdatedAt     time.Time   `json:"updatedAt"`

	dir    string // absolute folder holding package/ and venv/
	source string // shipped defaults: hash of the files the package was built from
}

// PackageDir is the unpacked package (the model_dir given to model_fn).
func (m Model) PackageDir() string { return filepath.Join(m.dir, "package") }

func (m Model) venvPython() string { return filepath.Join(m.dir, "venv", "bin", "python") }

// Prompt is one text prompt of an auto_annotation run; boxes the model finds
// for it are stored under Label.
type Prompt struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// RunRequest asks for an analysis run. Exactly one of CollectionID and
// ContentType is set.
type RunRequest struct {
	Application         Application
	Model               string       // registered name; "" or "default" = the application's system default
	CollectionID        string       // files of this collection
	ContentType         string       // or the whole lake's files of this type: image or video
	InputResolution     []int        // (width, height) the model receives; default (300, 300)
	ConfidenceThreshold *float64     // 0..1, default 0.5; detections below it are dropped
	Query               string       // narrows the files, as in lake listings
	Filter              *lake.Filter // narrows the files
	Platform            string       // local, aws or use_env (default)
	Prompts             []Prompt     // auto_annotation only: at least one
	VideoFPS            float64      // video frames sampled per second; 0 = Options.VideoFPS
	CreatedBy           string       // api key or user, recorded on the run
}

// Run is one analysis run and what it wrote.
type Run struct {
	ID          string      `json:"runId"`
	JobID       string      `json:"jobId"`
	Model       string      `json:"modelName"`
	VectorModel string      `json:"vectorModel,omitempty"`
	Application Application `json:"application"`
	Platform    string      `json:"inferencePlatform"`
	Params      RunParams   `json:"params"`
	Status      job.Status  `json:"status"`
	Error       string      `json:"error,omitempty"`
	Counts      Counts      `json:"counts"`
	// Unsupported are the labels of the prompts an auto_annotation model said
	// it cannot look for (in prompt order): no box for them means nothing.
	Unsupported []string   `json:"unsupported,omitempty"`
	CreatedAt   time.Time  `json:"createdAt"`
	FinishedAt  *time.Time `json:"finishedAt"`
}

// RunParams are the parameters a run was started with, as stored.
type RunParams struct {
	ModelName           string       `json:"model_name"`
	CollectionID        string       `json:"collection_id,omitempty"`
	ContentType         string       `json:"content_type,omitempty"`
	InputResolution     []int        `json:"input_resolution"`
	ConfidenceThreshold float64      `json:"confidence_threshold"`
	Query               string       `json:"query,omitempty"`
	Filter              *lake.Filter `json:"filter,omitempty"`
	InferencePlatform   string       `json:"inference_platform"`
	Prompts             []Prompt     `json:"prompts,omitempty"`
	VideoFPS            float64      `json:"video_fps"`
	CreatedBy           string       `json:"created_by,omitempty"`
}

// Counts say what a run did; they are the job's result too.
type Counts struct {
	Items      int64 `json:"items"`      // files analysed
	Frames     int64 `json:"frames"`     // images and video frames sent to the model
	Tags       int64 `json:"tags"`       // file tags written
	Boxes      int64 `json:"boxes"`      // machine boxes written
	Embeddings int64 `json:"embeddings"` // vectors written
	Skipped    int64 `json:"skipped"`    // files that could not be read (see the job result)
}

// Options configure a Service. Zero values take the defaults noted, many of
// them from the environment so an installed appliance is configured there.
type Options struct {
	DataDir string // required: models live in DataDir/models
	// ModelsSearch says where the server looks for the packages `make
	// models` builds, for the error of a request for a default model when
	// none is installed.
	ModelsSearch string
	// Python is the interpreter venvs are made from: FRAMELAKE_PYTHON, else
	// /usr/bin/python3 when it exists (Debian's, which sees python3-torch),
	// else python3 on PATH.
	Python string
	// PipIndexURL (FRAMELAKE_PIP_INDEX_URL) replaces PyPI; PipFindLinks
	// (FRAMELAKE_PIP_FIND_LINKS) is a folder of wheels installed from with
	// --no-index, for offline labs.
	PipIndexURL, PipFindLinks string
	InstallTimeout            time.Duration       // pip install, inside register_model's request; FRAMELAKE_PIP_TIMEOUT, default 10 min
	StartTimeout              time.Duration       // import plus model_fn; default 5 min
	CallTimeout               time.Duration       // one input_fn+predict_fn+output_fn; FRAMELAKE_MODEL_TIMEOUT, default 60 s
	IdleTimeout               time.Duration       // a worker unused this long is stopped; default 10 min
	MaxWorkers                int                 // Python workers alive at once; default 2
	MaxPackageBytes           int64               // unpacked package size; default 16 GiB
	MaxPackageFiles           int                 // files in a package; default 100000
	VideoFPS                  float64             // video frames sampled per second; FRAMELAKE_VIDEO_FPS, default 1
	Endpoint                  string              // SageMaker-compatible endpoint of models without their own; FRAMELAKE_INFERENCE_ENDPOINT
	FFmpeg                    string              // default ffmpeg on PATH
	Getenv                    func(string) string // default os.Getenv; read at each run for use_env
	Logger                    *slog.Logger
}

// Deps are the services runs read from and write to.
type Deps struct {
	Lake    *lake.Lake
	Vectors *vector.Store // may be nil: embedding runs are then refused
	Jobs    *job.Queue    // analysis handlers are registered on it; it must not be started yet
}

// Service registers models and runs them. It is safe for concurrent use.
type Service struct {
	db      *sqlitedb.DB
	lake    *lake.Lake
	vectors *vector.Store
	jobs    *job.Queue
	opt     Options
	log     *slog.Logger
	script  string // worker.py written out under the data folder
	pool    *pool

	regMu sync.Mutex // one registration unpacks at a time (disk and CPU)

	pipOnce    sync.Once
	pipTargets bool // the interpreter's pip installs into a venv (pip --python)
}

// New opens the registry on a database whose analysis migrations are applied
// and registers the analysis job handler on d.Jobs. The caller owns the data
// folder: package folders that no model names, left by a crash, are removed.
func New(ctx context.Context, d Deps, opt Options) (*Service, error) {
	if opt.DataDir == "" || d.Lake == nil || d.Jobs == nil {
		return nil, errors.New("analysis: data folder, lake and job queue required")
	}
	opt.defaults()
	// Workers run in their package folder: every path they get must be absolute.
	abs, err := filepath.Abs(opt.DataDir)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	opt.DataDir = abs
	s := &Service{db: d.Lake.DB(), lake: d.Lake, vectors: d.Vectors, jobs: d.Jobs, opt: opt,
		log: opt.Logger.With("component", "analysis")}
	dir := filepath.Join(opt.DataDir, "models")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	// Written at every start, so an upgrade of the binary upgrades the worker.
	s.script = filepath.Join(dir, "worker.py")
	if err := writeFileAtomic(s.script, workerScript, 0o644); err != nil {
		return nil, fmt.Errorf("analysis: write worker: %w", err)
	}
	var n int
	if err := s.db.R.QueryRowContext(ctx, `SELECT count(*) FROM model`).Scan(&n); err != nil {
		return nil, fmt.Errorf("analysis: open (are the analysis migrations applied?): %w", err)
	}
	if err := s.removeOrphanModelDirs(ctx); err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	s.pool = newPool(opt, s.log, s.script)
	d.Jobs.Handle(JobType, s.runJob)
	return s, nil
}

// Close stops every Python worker.
func (s *Service) Close() error {
	if s == nil || s.pool == nil {
		return nil
	}
	return s.pool.close()
}

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	env := o.Getenv
	if o.Python == "" {
		o.Python = env("FRAMELAKE_PYTHON")
	}
	if o.Python == "" {
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			o.Python = "/usr/bin/python3"
		} else if p, err := exec.LookPath("python3"); err == nil {
			o.Python = p
		} else {
			o.Python = "python3"
		}
	}
	o.PipIndexURL = or(o.PipIndexURL, env("FRAMELAKE_PIP_INDEX_URL"))
	o.PipFindLinks = or(o.PipFindLinks, env("FRAMELAKE_PIP_FIND_LINKS"))
	o.Endpoint = or(o.Endpoint, env("FRAMELAKE_INFERENCE_ENDPOINT"))
	o.ModelsSearch = or(o.ModelsSearch, "--models, $FRAMELAKE_MODELS_DIR, <data>/models, "+
		"build/models of the binary's repository, a models folder beside the binary")
	if o.CallTimeout <= 0 {
		o.CallTimeout = time.Minute
		if d, err := time.ParseDuration(env("FRAMELAKE_MODEL_TIMEOUT")); err == nil && d > 0 {
			o.CallTimeout = d
		}
	}
	if o.VideoFPS <= 0 {
		o.VideoFPS = 1
		if f, err := strconv.ParseFloat(env("FRAMELAKE_VIDEO_FPS"), 64); err == nil && f > 0 {
			o.VideoFPS = f
		}
	}
	if d, err := time.ParseDuration(env("FRAMELAKE_PIP_TIMEOUT")); err == nil && o.InstallTimeout <= 0 {
		o.InstallTimeout = d
	}
	o.InstallTimeout = orDur(o.InstallTimeout, 10*time.Minute)
	o.StartTimeout = orDur(o.StartTimeout, 5*time.Minute)
	o.IdleTimeout = orDur(o.IdleTimeout, 10*time.Minute)
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = 2
	}
	if o.MaxPackageBytes <= 0 {
		o.MaxPackageBytes = 16 << 30
	}
	if o.MaxPackageFiles <= 0 {
		o.MaxPackageFiles = 100000
	}
	if o.FFmpeg == "" {
		o.FFmpeg, _ = exec.LookPath("ffmpeg")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// writeFileAtomic writes b to path through a temp file and a rename.
func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
