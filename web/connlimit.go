package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/framelake/framelake/errs"
)

// connLimiter is a listener that counts its open connections (see NewServer).
type connLimiter struct {
	net.Listener
	max, overflowMax int

	mu       sync.Mutex
	conns    map[*limitedConn]struct{} // counted against max
	overflow int                       // connections accepted past max, one answer each
}

const (
	// overflowLife is how long a connection accepted past the limit may
	// take for its one answer: enough for /healthz, too little to hold a place.
	overflowLife = 2 * time.Second
	// headerGrace is how long a new connection may take for its request
	// headers before, at the limit, it gives its place to a new one: a
	// client sends them in one packet, a slowloris never finishes them.
	headerGrace = time.Second
)

func newConnLimiter(ln net.Listener, maxConns, overflow int) *connLimiter {
	return &connLimiter{Listener: ln, max: maxConns, overflowMax: overflow, conns: map[*limitedConn]struct{}{}}
}

// limitedConn releases its place in the count when closed, once.
type limitedConn struct {
	net.Conn
	l        *connLimiter
	overflow *time.Timer // closes an overflow connection at overflowLife
	once     sync.Once

	state http.ConnState // StateNew, StateActive or StateIdle; under l.mu
	since time.Time      // when it entered state
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		for {
			lc, victim := l.admit(c)
			if lc != nil {
				return lc, nil
			}
			if victim == nil {
				break
			}
			victim.Close() // frees its place; admit again
		}
		// Past the limit and its overflow: closed at once rather than left
		// in the kernel's queue, where it would wait unseen behind others.
		c.Close()
	}
}

// admit counts c in if there is room, or names the connection to close to
// make room; with neither, c is refused.
func (l *connLimiter) admit(c net.Conn) (*limitedConn, *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if len(l.conns) < l.max {
		lc := &limitedConn{Conn: c, l: l, state: http.StateNew, since: now}
		l.conns[lc] = struct{}{}
		return lc, nil
	}
	if v := l.victim(now); v != nil {
		return nil, v
	}
	if l.overflow < l.overflowMax {
		l.overflow++
		lc := &limitedConn{Conn: c, l: l}
		lc.overflow = time.AfterFunc(overflowLife, func() { lc.Close() })
		return lc, nil
	}
	return nil, nil
}

// victim is the connection that gives its place to a new one: the longest
// idle keep-alive connection, else the one longest past headerGrace
// without its request headers; nil when every connection is at work.
func (l *connLimiter) victim(now time.Time) *limitedConn {
	var idle, slow *limitedConn
	for c := range l.conns {
		switch {
		case c.state == http.StateIdle && (idle == nil || c.since.Before(idle.since)):
			idle = c
		case c.state == http.StateNew && now.Sub(c.since) > headerGrace && (slow == nil || c.since.Before(slow.since)):
			slow = c
		}
	}
	if idle != nil {
		return idle
	}
	return slow
}

func (l *connLimiter) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.overflow != nil {
		c.overflow.Stop()
		l.overflow--
		return
	}
	delete(l.conns, c)
}

// track follows each connection's state (http.Server.ConnState). A
// connection is StateNew until its first request's headers are in, and
// StateIdle from an answer until the next request's headers are in.
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || lc.overflow != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	lc.state, lc.since = state, time.Now()
}

// overflowKey marks a request on a connection accepted past MaxConns.
type overflowKey struct{}

// busy answers requests on overflow connections: /healthz as usual, others
// with a 503; either way the connection closes after the one answer.
func (l *connLimiter) busy(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(overflowKey{}) == nil {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		if r.URL.Path == "/healthz" {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		b, _ := marshalJSON(errorBody{Error: errorDetail{Code: errs.Unavailable,
			Message: fmt.Sprintf("server busy: all %d connections are in use; retry shortly", l.max)}})
		w.Write(append(b, '\n'))
	})
}

func (l *connLimiter) connContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok && lc.overflow != nil {
		return context.WithValue(ctx, overflowKey{}, true)
	}
	return ctx
}
