package analysis

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Runner executes one model package: Invoke passes a request body through
// the package's input_fn, predict_fn and output_fn. The local runner is a
// Python subprocess; the remote one a SageMaker-compatible endpoint.
type Runner interface {
	// Ping reports whether the model is loaded and answering (loading it if
	// needed).
	Ping(ctx context.Context) error
	Invoke(ctx context.Context, req Request) (Response, error)
	Close() error
}

// Request is one invocation.
type Request struct {
	Body        []byte
	ContentType string // request_content_type given to input_fn
	Accept      string // given to output_fn; default application/json
}

// Response is what output_fn returned.
type Response struct {
	Body        []byte
	ContentType string
}

// ModelError is a failure of the model package (not of framelake): an
// exception in one of its functions, a crash, a hang past the timeout, or
// output that breaks the contract. Jobs fail with its text.
type ModelError struct {
	Model string
	Stage string // import, model_fn, input_fn, predict_fn, output_fn, timeout, crashed, output, endpoint
	Msg   string
	Tail  string // the last lines of the Python traceback or stderr, when any
}

func (e *ModelError) Error() string {
	s := fmt.Sprintf("model %s: %s", e.Model, e.Msg)
	if e.Tail != "" {
		s += "\n" + e.Tail
	}
	return s
}

// lastLines returns at most n trailing non-empty lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// tail keeps the last max bytes written to it: a worker's stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
