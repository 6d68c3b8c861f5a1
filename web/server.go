package web

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ServerOptions bound what clients may hold of a server: slow or idle
// connections are cut, and connections are counted.
type ServerOptions struct {
	// ReadHeaderTimeout cuts a connection whose request headers take longer
	// (slowloris); default 10 s.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no request for
	// this long; default 60 s.
	IdleTimeout time.Duration
	// A request body must deliver BodyMinBytes in every BodyTimeout (default
	// 64 KiB in 30 s): a minimum rate, not a total, so a large upload on a
	// slow but moving link completes while a trickle is cut.
	BodyTimeout  time.Duration
	BodyMinBytes int64
	// MaxConns bounds open connections (default 1024), and is lowered to half
	// the process's open-file limit so the database and media keep theirs.
	MaxConns int
	// MaxInFlight bounds the requests being worked on at once; the rest
	// wait their turn in order (inflight.go). 0 is DefaultInFlightPerCPU
	// per core; negative turns the bound off.
	MaxInFlight int
	ErrorLog    *log.Logger
}

// DefaultInFlightPerCPU is the default bound of requests at work at once,
// per core (GOMAXPROCS).
const DefaultInFlightPerCPU = 4

func (o *ServerOptions) defaults() {
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if o.BodyMinBytes <= 0 {
		o.BodyMinBytes = 64 << 10
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 1024
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultInFlightPerCPU * runtime.GOMAXPROCS(0)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < uint64(2*o.MaxConns) {
		o.MaxConns = max(8, int(rl.Cur/2))
	}
}

// NewServer returns a server for h with opt's limits and the listener to
// serve it on: ln, counting connections. At MaxConns, a new connection takes
// the place of the longest-idle keep-alive one, or else of the one that has
// waited longest, over a second, for its request headers (a slowloris
// client). When every connection is at work, it is still served one
// request within 2 s, with Connection: close, so /healthz answers and other
// requests get a 503 that says the server is busy instead of waiting unseen
// in the kernel's queue. Past a further MaxConns/16 (at least 4) such
// connections, new ones are closed at once. At most MaxInFlight requests are
// worked on at once; the others wait in order of arrival, their bodies (up
// to 256 KiB) read first, and leave the queue if their client goes away.
func NewServer(h http.Handler, ln net.Listener, opt ServerOptions) (*http.Server, net.Listener) {
	opt.defaults()
	cl := newConnLimiter(ln, opt.MaxConns, max(4, opt.MaxConns/16))
	if opt.MaxInFlight > 0 {
		h = newInflight(opt.MaxInFlight).limit(h)
	}
	srv := &http.Server{
		Handler:           cl.busy(bodyRate(h, opt.BodyTimeout, opt.BodyMinBytes)),
		ReadHeaderTimeout: opt.ReadHeaderTimeout,
		IdleTimeout:       opt.IdleTimeout,
		ErrorLog:          opt.ErrorLog,
		ConnState:         cl.track,
		ConnContext:       cl.connContext,
	}
	return srv, cl
}

// EffectiveMaxConns is the connection bound NewServer applies for opt.
func (opt ServerOptions) EffectiveMaxConns() int {
	opt.defaults()
	return opt.MaxConns
}

// EffectiveMaxInFlight is the bound of requests at work NewServer applies
// for opt; 0 when there is none.
func (opt ServerOptions) EffectiveMaxInFlight() int {
	opt.defaults()
	return max(0, opt.MaxInFlight)
}

// bodyRate holds request bodies to a minimum rate (see ServerOptions).
func bodyRate(h http.Handler, window time.Duration, minBytes int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &rateBody{ReadCloser: r.Body, rc: http.NewResponseController(w), window: window, min: minBytes}
		}
		h.ServeHTTP(w, r)
	})
}

// rateBody moves the connection's read deadline a window ahead each time
// the body has delivered the minimum since the last move, so only a body
// slower than the minimum rate ever meets it.
type rateBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	window  time.Duration
	min     int64
	got     int64 // bytes since the deadline last moved
	started bool
}

func (b *rateBody) Read(p []byte) (int, error) {
	if !b.started || b.got >= b.min {
		b.started, b.got = true, 0
		_ = b.rc.SetReadDeadline(time.Now().Add(b.window))
	}
	n, err := b.ReadCloser.Read(p)
	b.got += int64(n)
	switch {
	case errors.Is(err, io.EOF):
		// Past the body's end net/http reads the connection in the
		// background, and cancels the request if that read meets a
		// deadline: a read at the end must not leave one set above.
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &slowBodyError{min: b.min, window: b.window}
	}
	return n, err
}

// slowBodyError is a request body cut for arriving slower than the minimum
// rate; the error handler makes it a 408.
type slowBodyError struct {
	min    int64
	window time.Duration
}

func (e *slowBodyError) Error() string {
	return fmt.Sprintf("request body arrived slower than %s in %s: the connection is closed", humanBytes(e.min), e.window)
}

// Timeout makes a slow body a net.Error timeout, as the deadline was.
func (e *slowBodyError) Timeout() bool { return true }
