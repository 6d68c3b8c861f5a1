package web

import (
	"net"
	"net/http"
	"sync"
)

// connLimiter is a listener that counts its open connections (see NewServer).
type connLimiter struct {
	net.Listener
	max, overflowMax int

	mu       sync.Mutex
	open     int            // connections counted against max
	overflow int            // connections accepted past max, one answer each
	idle     []*limitedConn // keep-alive connections waiting for a request, oldest first
	freed    chan struct{}  // a connection closed; capacity 1
	closed   chan struct{}  // the listener closed
	once     sync.Once
}

func newConnLimiter(ln net.Listener, maxConns, overflow int) *connLimiter {
	return &connLimiter{Listener: ln, max: maxConns, overflowMax: overflow,
		freed: make(chan struct{}, 1), closed: make(chan struct{})}
}

// limitedConn releases its place in the count when closed, once.
type limitedConn struct {
	net.Conn
	l        *connLimiter
	overflow bool
	once     sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		lc, idle := l.admit(c)
		if lc != nil {
			return lc, nil
		}
		if idle != nil {
			idle.Close() // frees its place; admit again
			continue
		}
		select {
		case <-l.freed:
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// admit counts c in if there is room, or names the idle connection to close
// to make room; with neither, the caller waits for a connection to close.
func (l *connLimiter) admit(c net.Conn) (*limitedConn, *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open < l.max:
		l.open++
		return &limitedConn{Conn: c, l: l}, nil
	case len(l.idle) > 0:
		oldest := l.idle[0]
		l.idle = l.idle[1:]
		return nil, oldest
	case l.overflow < l.overflowMax:
		l.overflow++
		return &limitedConn{Conn: c, l: l, overflow: true}, nil
	}
	return nil, nil
}

func (l *connLimiter) release(c *limitedConn) {
	l.mu.Lock()
	if c.overflow {
		l.overflow--
	} else {
		l.open--
	}
	l.dropIdle(c)
	l.mu.Unlock()
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// track keeps the list of idle keep-alive connections (http.Server.ConnState).
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || lc.overflow {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropIdle(lc)
	if state == http.StateIdle {
		l.idle = append(l.idle, lc)
	}
}

func (l *connLimiter) dropIdle(c *limitedConn) {
	for i, ic := range l.idle {
		if ic == c {
			l.idle = append(l.idle[:i], l.idle[i+1:]...)
			return
		}
	}
}

func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}
