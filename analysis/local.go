package analysis

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Frame limits of the worker protocol.
const (
	maxMetaBytes = 16 << 20
	maxBodyBytes = 512 << 20
)

// frameMeta is the JSON header of a worker's message.
type frameMeta struct {
	OK          bool   `json:"ok"`
	Ready       bool   `json:"ready"`
	Python      string `json:"python"`
	ContentType string `json:"content_type"`
	Stage       string `json:"stage"`
	Error       string `json:"error"`
	Traceback   string `json:"traceback"`
}

func writeFrame(w *bufio.Writer, meta, body []byte) error {
	var h [8]byte
	binary.BigEndian.PutUint32(h[:4], uint32(len(meta)))
	binary.BigEndian.PutUint32(h[4:], uint32(len(body)))
	w.Write(h[:])
	w.Write(meta)
	w.Write(body)
	return w.Flush()
}

func readFrame(r *bufio.Reader) (frameMeta, []byte, error) {
	var m frameMeta
	var h [8]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return m, nil, err
	}
	ml, bl := binary.BigEndian.Uint32(h[:4]), binary.BigEndian.Uint32(h[4:])
	if ml > maxMetaBytes || bl > maxBodyBytes {
		return m, nil, fmt.Errorf("worker frame of %d+%d bytes is over the limit", ml, bl)
	}
	buf := make([]byte, int(ml)+int(bl))
	if _, err := io.ReadFull(r, buf); err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(buf[:ml], &m); err != nil {
		return m, nil, fmt.Errorf("worker frame header: %w", err)
	}
	return m, buf[ml:], nil
}

// process is one running worker.
type process struct {
	cmd    *exec.Cmd
	in     io.Closer
	w      *bufio.Writer
	r      *bufio.Reader
	stderr *tail
	exited chan struct{} // closed once the process has exited
	why    atomic.Value  // string: why framelake killed it ("timeout", "cancelled", "stopped")
}

func (p *process) kill(why string) {
	p.why.CompareAndSwap(nil, why)
	// The worker leads its own process group: children it forked die too.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

func (p *process) reason() string {
	s, _ := p.why.Load().(string)
	return s
}

// call sends one request and reads the answer, killing the worker when
// timeout passes or ctx ends first.
func (p *process) call(ctx context.Context, timeout time.Duration, meta, body []byte) (frameMeta, []byte, error) {
	t := time.AfterFunc(timeout, func() { p.kill("timeout") })
	stop := context.AfterFunc(ctx, func() { p.kill("cancelled") })
	defer stop()
	defer t.Stop()
	if err := writeFrame(p.w, meta, body); err != nil {
		return frameMeta{}, nil, err
	}
	return readFrame(p.r)
}

// localRunner runs a model in a Python worker it starts on first use and
// again after a crash. Calls are serialized: one worker answers one at a time.
type localRunner struct {
	pool  *pool
	model Model
	sem   chan struct{} // held for a call, a start or a stop

	mu       sync.Mutex // guards proc and lastUsed
	proc     *process
	lastUsed time.Time
}

func (r *localRunner) lock(ctx context.Context) error {
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *localRunner) unlock() { <-r.sem }

func (r *localRunner) Ping(ctx context.Context) error {
	if err := r.lock(ctx); err != nil {
		return err
	}
	defer r.unlock()
	p, err := r.ensure(ctx)
	if err != nil {
		return err
	}
	_, _, err = r.exchange(ctx, p, []byte(`{"op":"ping"}`), nil)
	return err
}

func (r *localRunner) Invoke(ctx context.Context, req Request) (Response, error) {
	if err := r.lock(ctx); err != nil {
		return Response{}, err
	}
	defer r.unlock()
	meta, err := json.Marshal(map[string]string{"op": "invoke", "content_type": req.ContentType,
		"accept": or(req.Accept, "application/json")})
	if err != nil {
		return Response{}, err
	}
	for attempt := 0; ; attempt++ {
		p, err := r.ensure(ctx)
		if err != nil {
			return Response{}, err
		}
		m, body, err := r.exchange(ctx, p, meta, req.Body)
		var me *ModelError
		if errors.As(err, &me) && me.Stage == "crashed" && attempt == 0 {
			// Once: a worker killed from outside (the OOM killer) should not
			// fail a long run; a package that kills itself fails the second time.
			r.pool.log.Warn("model worker crashed; restarting it", "model", r.model.Name, "error", me.Msg)
			continue
		}
		if err != nil {
			return Response{}, err
		}
		return Response{Body: body, ContentType: m.ContentType}, nil
	}
}

// exchange makes one call on p and turns failures into ModelErrors.
func (r *localRunner) exchange(ctx context.Context, p *process, meta, body []byte) (frameMeta, []byte, error) {
	m, out, err := p.call(ctx, r.pool.opt.CallTimeout, meta, body)
	r.mu.Lock()
	r.lastUsed = time.Now()
	r.mu.Unlock()
	if err == nil && !m.OK {
		return m, nil, &ModelError{Model: r.model.Name, Stage: m.Stage,
			Msg: fmt.Sprintf("%s raised %s", m.Stage, lastLines(m.Error, 1)), Tail: lastLines(m.Traceback, 12)}
	}
	if err == nil {
		return m, out, nil
	}
	p.kill("broken")
	r.forget(p)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
	switch p.reason() {
	case "timeout":
		return m, nil, &ModelError{Model: r.model.Name, Stage: "timeout", Tail: lastLines(p.stderr.String(), 12),
			Msg: fmt.Sprintf("no answer within %s; the worker was stopped and will restart", r.pool.opt.CallTimeout)}
	case "cancelled":
		return m, nil, ctx.Err()
	}
	return m, nil, &ModelError{Model: r.model.Name, Stage: "crashed", Tail: lastLines(p.stderr.String(), 12),
		Msg: fmt.Sprintf("the Python worker died (%s)", exitStatus(p.cmd))}
}

func exitStatus(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "broken pipe"
	}
	return cmd.ProcessState.String()
}

// forget drops p as the current worker.
func (r *localRunner) forget(p *process) {
	r.mu.Lock()
	if r.proc == p {
		r.proc = nil
	}
	r.mu.Unlock()
}

// ensure returns the running worker, starting one if needed. The caller holds sem.
func (r *localRunner) ensure(ctx context.Context) (*process, error) {
	r.mu.Lock()
	p := r.proc
	r.mu.Unlock()
	if p != nil {
		select {
		case <-p.exited:
			r.forget(p)
		default:
			return p, nil
		}
	}
	if err := r.pool.acquire(ctx, r); err != nil {
		return nil, err
	}
	p, err := r.start(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.proc, r.lastUsed = p, time.Now()
	r.mu.Unlock()
	return p, nil
}

// start launches a worker (holding a pool slot, released when it exits) and
// waits for model_fn.
func (r *localRunner) start(ctx context.Context) (*process, error) {
	py := r.model.venvPython()
	if _, err := os.Stat(py); err != nil {
		r.pool.release()
		return nil, &ModelError{Model: r.model.Name, Stage: "start",
			Msg: "the model's virtual environment is missing (" + py + "); register the model again"}
	}
	cmd := exec.Command(py, r.pool.script, r.model.PackageDir())
	cmd.Dir = r.model.PackageDir()
	cmd.Env = workerEnv(r.model, r.pool.opt.Getenv)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &process{cmd: cmd, stderr: &tail{max: 64 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		r.pool.release()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.pool.release()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		r.pool.release()
		return nil, fmt.Errorf("start python worker: %w", err)
	}
	p.in, p.w, p.r = in, bufio.NewWriterSize(in, 64<<10), bufio.NewReaderSize(out, 64<<10)
	go func() {
		defer r.pool.release()
		_ = cmd.Wait()
		close(p.exited)
	}()
	t := time.AfterFunc(r.pool.opt.StartTimeout, func() { p.kill("timeout") })
	stop := context.AfterFunc(ctx, func() { p.kill("cancelled") })
	m, _, err := readFrame(p.r)
	stop()
	t.Stop()
	if err == nil && m.OK && m.Ready {
		r.pool.log.Info("model worker started", "model", r.model.Name, "pid", cmd.Process.Pid, "python", m.Python)
		return p, nil
	}
	p.kill("broken")
	<-p.exited
	switch {
	case err == nil:
		return nil, &ModelError{Model: r.model.Name, Stage: m.Stage, Msg: loadFailure(m), Tail: lastLines(m.Traceback, 12)}
	case p.reason() == "timeout":
		return nil, &ModelError{Model: r.model.Name, Stage: "timeout", Tail: lastLines(p.stderr.String(), 12),
			Msg: fmt.Sprintf("the model did not load within %s", r.pool.opt.StartTimeout)}
	case p.reason() == "cancelled":
		return nil, ctx.Err()
	}
	return nil, &ModelError{Model: r.model.Name, Stage: "crashed", Tail: lastLines(p.stderr.String(), 12),
		Msg: fmt.Sprintf("the Python worker died while loading the model (%s)", exitStatus(cmd))}
}

func loadFailure(m frameMeta) string {
	if m.Stage == "import" {
		return "loading code/inference.py failed: " + lastLines(m.Error, 1)
	}
	return fmt.Sprintf("%s raised %s", m.Stage, lastLines(m.Error, 1))
}

// stop ends the worker, if any. The caller holds sem.
func (r *localRunner) stop(why string) {
	r.mu.Lock()
	p := r.proc
	r.proc = nil
	r.mu.Unlock()
	if p == nil {
		return
	}
	p.why.CompareAndSwap(nil, why)
	p.in.Close() // a clean exit at EOF; kill if it lingers
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		p.kill(why)
		<-p.exited
	}
}

// Close stops the worker; the next call starts a new one.
func (r *localRunner) Close() error {
	r.sem <- struct{}{}
	defer r.unlock()
	r.stop("stopped")
	return nil
}

// workerEnv is the whole environment of a worker: no server secrets, only
// what Python and GPU libraries need.
func workerEnv(m Model, getenv func(string) string) []string {
	venv := filepath.Join(m.dir, "venv")
	env := []string{
		"PATH=" + filepath.Join(venv, "bin") + ":/usr/local/bin:/usr/bin:/bin",
		"VIRTUAL_ENV=" + venv,
		"HOME=" + m.dir,
		"LANG=C.UTF-8",
		"PYTHONNOUSERSITE=1",
		"PYTHONUNBUFFERED=1",
		"TMPDIR=" + os.TempDir(),
	}
	for _, k := range []string{"TZ", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
		"OMP_NUM_THREADS", "MKL_NUM_THREADS", "TORCH_HOME", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
