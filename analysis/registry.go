package analysis

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/id"
)

// RegisterRequest registers a model package.
type RegisterRequest struct {
	Name        string
	Application string    // auto_tagging (or autotagging), auto_annotation, embedding, segmentation, tracking
	Package     io.Reader // the package folder as .tar.gz
	CreatedBy   string
	// Replace installs the package in place of a registered model of the same
	// name and application, keeping its endpoint and default flag; without it
	// a taken name is already_exists.
	Replace bool
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// CheckName validates a model name: letters, digits, '.', '_', '-', at most
// 100, neither "default" (which names an application's system default in
// requests) nor the names of the shipped defaults (DefaultName).
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return errs.Invalid("model_name", "model_name %q must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	if strings.EqualFold(name, DefaultModel) || isDefaultName(name) {
		return errs.Invalid("model_name", "model_name %q is reserved for the system default models", name)
	}
	return nil
}

func isDefaultName(name string) bool {
	for _, app := range []Application{AutoTagging, AutoAnnotation, Embedding, Segmentation, Tracking} {
		if strings.EqualFold(name, DefaultName(app)) {
			return true
		}
	}
	return false
}

// Register unpacks, checks and installs a package, then records it. The
// package is usable (and listed) only once everything succeeded; a failure
// leaves nothing behind, and a failed replacement leaves the old package.
func (s *Service) Register(ctx context.Context, req RegisterRequest) (Model, error) {
	if err := CheckName(req.Name); err != nil {
		return Model{}, err
	}
	return s.register(ctx, req, "")
}

// InstallDefault registers the package pkg writes as app's shipped system
// default, DefaultName(app), unless that model was built from source (a
// hash of the package's files) already; a different build replaces it. The
// model becomes the application's default when it has none, so a user's
// choice of default (PATCH systemDefault) survives restarts.
func (s *Service) InstallDefault(ctx context.Context, app Application, source string, pkg func(io.Writer) error) (installed bool, err error) {
	name := DefaultName(app)
	if m, err := s.Model(ctx, name); err == nil && m.source == source {
		return false, s.defaultIfNone(ctx, m)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(pkg(pw)) }()
	m, err := s.register(ctx, RegisterRequest{Name: name, Application: string(app), Package: pr,
		CreatedBy: "framelake", Replace: true}, source)
	pr.CloseWithError(err)
	if err != nil {
		return false, err
	}
	return true, s.defaultIfNone(ctx, m)
}

func (s *Service) defaultIfNone(ctx context.Context, m Model) error {
	if _, found, err := s.defaultOf(ctx, m.Application); found || err != nil {
		return err
	}
	on := true
	_, err := s.UpdateModel(ctx, m.Name, ModelUpdate{SystemDefault: &on})
	return err
}

func (s *Service) register(ctx context.Context, req RegisterRequest, source string) (Model, error) {
	app, err := ParseApplication(req.Application)
	if err != nil {
		return Model{}, err
	}
	if req.Package == nil {
		return Model{}, errs.Invalid("package", "package is required: the model folder as .tar.gz")
	}
	s.regMu.Lock()
	defer s.regMu.Unlock()
	old, err := s.Model(ctx, req.Name)
	switch {
	case err == nil && !req.Replace:
		return Model{}, errs.New(errs.AlreadyExists, "model_name", "model %q is already registered; "+
			"send replace=true to install this package in its place, or delete it first", req.Name)
	case err == nil && old.Application != app:
		return Model{}, errs.Invalid("application", "model %q is an %s model; its replacement must be one too (delete it to register an %s model under this name)",
			req.Name, old.Application, app)
	case err != nil && !errs.Is(err, errs.NotFound):
		return Model{}, err
	}
	m := Model{ID: id.New("mod"), Name: req.Name, Application: app, CreatedBy: req.CreatedBy, source: source,
		Endpoint: old.Endpoint, SystemDefault: old.SystemDefault}
	m.dir = filepath.Join(s.opt.DataDir, "models", m.ID)
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(m.dir)
		}
	}()
	if m.PackageBytes, m.Labels, err = s.installPackage(ctx, m, req.Package); err != nil {
		return Model{}, err
	}
	if err := s.insertModel(ctx, &m, old.ID); err != nil {
		return Model{}, err
	}
	ok = true
	if old.ID != "" {
		// Runs already working with the old package may fail on their next item.
		s.pool.drop(old.ID)
		os.RemoveAll(old.dir)
	}
	s.log.Info("model registered", "model", m.Name, "application", m.Application, "bytes", m.PackageBytes,
		"replaced", old.ID != "")
	return m, nil
}

// installPackage unpacks into m.dir/package, checks the layout and makes the venv.
func (s *Service) installPackage(ctx context.Context, m Model, pkg io.Reader) (int64, []string, error) {
	raw := filepath.Join(m.dir, "unpacked")
	if err := os.MkdirAll(raw, 0o755); err != nil {
		return 0, nil, err
	}
	n, err := unpack(pkg, raw, unpackLimits{bytes: s.opt.MaxPackageBytes, files: s.opt.MaxPackageFiles})
	if err != nil {
		return n, nil, err
	}
	root, err := packageRoot(raw)
	if err != nil {
		return n, nil, err
	}
	if err := os.Rename(root, m.PackageDir()); err != nil {
		return n, nil, err
	}
	os.RemoveAll(raw)
	labels, err := checkLayout(m.PackageDir(), m.Application)
	if err != nil {
		return n, nil, err
	}
	return n, labels, s.makeVenv(ctx, m)
}

// checkLayout checks the folders and files docs/spec/interface.md 2.7 requires and
// reads the labels of an auto_tagging package.
func checkLayout(dir string, app Application) ([]string, error) {
	need := "code/inference.py and code/requirements.txt"
	if app == AutoTagging {
		need = "code/inference.py, code/requirements.txt, label_list.yaml and a .pt model file"
	}
	for _, f := range []string{"code/inference.py", "code/requirements.txt"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || !fi.Mode().IsRegular() {
			return nil, errs.Invalid("package", "the package has no %s (an %s package needs %s)", f, app, need)
		}
	}
	if app != AutoTagging {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "label_list.yaml"))
	if errors.Is(err, os.ErrNotExist) {
		b, err = os.ReadFile(filepath.Join(dir, "label_list.yml"))
	}
	if err != nil {
		return nil, errs.Invalid("package", "the package has no label_list.yaml (an auto_tagging package needs %s)", need)
	}
	labels, err := parseLabels(b)
	if err != nil {
		return nil, err
	}
	var pt bool
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".pt") {
			pt = true
			return filepath.SkipAll
		}
		return nil
	})
	if !pt {
		return nil, errs.Invalid("package", "the package has no .pt model file (an auto_tagging package needs %s)", need)
	}
	return labels, nil
}

// makeVenv creates the package's virtual environment with the system site
// packages and installs code/requirements.txt when it names anything.
func (s *Service) makeVenv(ctx context.Context, m Model) error {
	reqs := filepath.Join(m.PackageDir(), "code", "requirements.txt")
	needPip, err := hasRequirements(reqs)
	if err != nil {
		return err
	}
	// Without pip: copying pip into every venv (ensurepip) took 24 s on a
	// busy machine; the interpreter's own pip installs into the venv instead.
	venv := filepath.Join(m.dir, "venv")
	if out, err := s.command(ctx, time.Minute, s.opt.Python, "-m", "venv", "--system-site-packages", "--without-pip", venv); err != nil {
		return errs.New(errs.FailedPrecondition, "", "creating the virtual environment with %s failed (on Debian: apt-get install python3-venv): %v\n%s",
			s.opt.Python, err, lastLines(out, 10))
	}
	if !needPip {
		return nil
	}
	pip, err := s.pipCommand(ctx, m.venvPython())
	if err != nil {
		return err
	}
	// Fail fast offline: pip's default is 5 retries with back-off per
	// requirement and a 15 s socket timeout, about 12 s per unreachable index.
	args := append(pip, "install", "--disable-pip-version-check", "--no-input", "--no-warn-script-location",
		"--retries", "0", "--timeout", "10", "-r", reqs)
	if s.opt.PipFindLinks != "" {
		args = append(args, "--no-index", "--find-links", s.opt.PipFindLinks)
	} else if s.opt.PipIndexURL != "" {
		args = append(args, "--index-url", s.opt.PipIndexURL)
	}
	if out, err := s.command(ctx, s.opt.InstallTimeout, args[0], args[1:]...); err != nil {
		s.log.Warn("pip install failed", "model", m.Name, "error", err, "output", lastLines(out, 40))
		return errs.Invalid("package", "installing code/requirements.txt failed: %s", pipFailure(out, err))
	}
	return nil
}

// pipCommand returns the command that runs pip for the venv of python:
// the interpreter's pip when it can target another environment (--python,
// pip 22.3 and later; asked once), else the venv's own pip, installed with
// ensurepip.
func (s *Service) pipCommand(ctx context.Context, python string) ([]string, error) {
	s.pipOnce.Do(func() {
		// Not the request's context: a client hanging up must not decide this for good.
		out, err := s.command(context.WithoutCancel(ctx), time.Minute, s.opt.Python, "-m", "pip", "--python", python, "--version")
		s.pipTargets = err == nil
		if err != nil {
			s.log.Info("the interpreter's pip cannot install into a venv; each venv gets its own (ensurepip)", "output", lastLines(out, 3))
		}
	})
	if s.pipTargets {
		return []string{s.opt.Python, "-m", "pip", "--python", python}, nil
	}
	if out, err := s.command(ctx, 5*time.Minute, python, "-m", "ensurepip", "--default-pip"); err != nil {
		return nil, errs.New(errs.FailedPrecondition, "", "installing pip into the virtual environment failed "+
			"(on Debian: apt-get install python3-pip): %v: %s", err, lastLines(out, 3))
	}
	return []string{python, "-m", "pip"}, nil
}

// pipFailure says in one line why pip failed: the requirement it could not
// install when it names one, else its last error line.
func pipFailure(out string, err error) string {
	var last string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if r, ok := strings.CutPrefix(line, "ERROR: No matching distribution found for "); ok {
			return fmt.Sprintf("no installable distribution of requirement %q was found "+
				"(is the package index reachable? FRAMELAKE_PIP_INDEX_URL or FRAMELAKE_PIP_FIND_LINKS choose another)", r)
		}
		if strings.HasPrefix(line, "ERROR: ") {
			last = strings.TrimPrefix(line, "ERROR: ")
		}
	}
	if last == "" || strings.Contains(err.Error(), "stopped after") {
		return err.Error()
	}
	return last
}

// hasRequirements reports whether a requirements file names anything; an
// empty one must not call pip (offline labs have no index).
func hasRequirements(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return true, nil
		}
	}
	return false, nil
}

// command runs a setup command with a clean environment and returns its output.
func (s *Service) command(ctx context.Context, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + s.opt.DataDir, "LANG=C.UTF-8", "PYTHONNOUSERSITE=1",
		"TMPDIR=" + os.TempDir()}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"PIP_CERT", "SSL_CERT_FILE", "PIP_TRUSTED_HOST"} {
		if v := s.opt.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("stopped after %s", timeout)
	}
	return string(out), err
}

// insertModel records m, in place of the model replaced (its id) when not "".
func (s *Service) insertModel(ctx context.Context, m *Model, replaced string) error {
	labels, _ := json.Marshal(m.Labels)
	if m.Labels == nil {
		labels = []byte("[]")
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	m.CreatedAt, m.UpdatedAt = now, now
	rel, _ := filepath.Rel(filepath.Join(s.opt.DataDir, "models"), m.dir)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM model WHERE id = ?`, replaced); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO model (id, name, application, dir, labels, endpoint, system_default,
			package_bytes, source, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.Name, m.Application, rel, string(labels), m.Endpoint, m.SystemDefault, m.PackageBytes, m.source,
			m.CreatedBy, now.UnixMilli(), now.UnixMilli())
		return err
	})
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return errs.New(errs.AlreadyExists, "model_name", "model %q is already registered", m.Name)
	}
	return err
}

const modelColumns = `id, name, application, dir, labels, endpoint, system_default, package_bytes, source,
	created_by, created_at, updated_at`

func (s *Service) scanModel(sc interface{ Scan(...any) error }) (Model, error) {
	var m Model
	var labels, dir string
	var created, updated int64
	if err := sc.Scan(&m.ID, &m.Name, &m.Application, &dir, &labels, &m.Endpoint, &m.SystemDefault, &m.PackageBytes,
		&m.source, &m.CreatedBy, &created, &updated); err != nil {
		return m, err
	}
	m.dir = filepath.Join(s.opt.DataDir, "models", dir)
	if err := json.Unmarshal([]byte(labels), &m.Labels); err != nil {
		return m, fmt.Errorf("model %s labels: %w", m.Name, err)
	}
	m.CreatedAt, m.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return m, nil
}

// Model returns a registered model by name.
func (s *Service) Model(ctx context.Context, name string) (Model, error) {
	m, err := s.scanModel(s.db.R.QueryRowContext(ctx, `SELECT `+modelColumns+` FROM model WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return m, errs.NotFoundf("model %q is not registered", name)
	}
	return m, err
}

// Models lists the registered models by name.
func (s *Service) Models(ctx context.Context) ([]Model, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT `+modelColumns+` FROM model ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Model{}
	for rows.Next() {
		m, err := s.scanModel(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// systemDefault returns the default model of app, or a 400 saying how to
// install one.
func (s *Service) systemDefault(ctx context.Context, app Application) (Model, error) {
	m, found, err := s.defaultOf(ctx, app)
	if err == nil && !found {
		err = errs.Invalid("model_name", "no default %s model is installed: run `make models` and restart the server "+
			"(it looks in %s), or register a model with application %s and pass its name as model_name", app, s.opt.ModelsSearch, app)
	}
	return m, err
}

func (s *Service) defaultOf(ctx context.Context, app Application) (Model, bool, error) {
	m, err := s.scanModel(s.db.R.QueryRowContext(ctx, `SELECT `+modelColumns+` FROM model
		WHERE application = ? AND system_default = 1`, app))
	if errors.Is(err, sql.ErrNoRows) {
		return m, false, nil
	}
	return m, err == nil, err
}

// ModelUpdate changes a model's settings; nil fields stay as they are.
type ModelUpdate struct {
	Endpoint      *string // SageMaker-compatible endpoint for inference_platform aws; "" clears it
	SystemDefault *bool   // make it (or stop it being) its application's default
}

// UpdateModel changes a model's endpoint or default flag.
func (s *Service) UpdateModel(ctx context.Context, name string, u ModelUpdate) (Model, error) {
	m, err := s.Model(ctx, name)
	if err != nil {
		return m, err
	}
	if u.Endpoint != nil {
		if err := checkEndpoint("endpoint", *u.Endpoint); err != nil {
			return m, err
		}
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		now := time.Now().UnixMilli()
		if u.Endpoint != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE model SET endpoint = ?, updated_at = ? WHERE id = ?`, *u.Endpoint, now, m.ID); err != nil {
				return err
			}
		}
		if u.SystemDefault != nil && *u.SystemDefault {
			if _, err := tx.ExecContext(ctx, `UPDATE model SET system_default = 0 WHERE application = ?`, m.Application); err != nil {
				return err
			}
		}
		if u.SystemDefault != nil {
			_, err := tx.ExecContext(ctx, `UPDATE model SET system_default = ?, updated_at = ? WHERE id = ?`, *u.SystemDefault, now, m.ID)
			return err
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	return s.Model(ctx, name)
}

// checkEndpoint checks an endpoint field: "", one URL, or several separated
// by commas (a pool, see endpointPool).
func checkEndpoint(field, e string) error {
	for _, one := range splitEndpoints(e) {
		u, err := url.Parse(one)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errs.Invalid(field, "endpoint %q must be an http or https URL such as http://gpu-host:8080, "+
				"or several separated by commas", one)
		}
	}
	return nil
}

// DeleteModel unregisters a model, stops its worker and removes its files.
// Tags, boxes and vectors its runs wrote stay.
func (s *Service) DeleteModel(ctx context.Context, name string) error {
	m, err := s.Model(ctx, name)
	if err != nil {
		return err
	}
	if err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM model WHERE id = ?`, m.ID)
		return err
	}); err != nil {
		return err
	}
	s.pool.drop(m.ID)
	return os.RemoveAll(m.dir)
}
