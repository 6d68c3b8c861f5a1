package web

import (
	"bytes"
	"container/list"
	"context"
	"io"
	"net/http"
	"sync"
)

// inflight bounds the requests being worked on at once and queues the rest
// in the order they came, before any of their work starts (see NewServer).
// On 2 cores, 64 requests at work at once made the one that held the
// database's writer wait for a core behind the others: it held the writer
// 50-61 ms for 3.5-3.8 ms of its own CPU, and every write queued behind it
// (issue 31 item 17). With a few requests at work per core, a holder gets a
// core at once and the rest wait in this queue, not in the scheduler's.
type inflight struct {
	max int

	mu      sync.Mutex
	running int
	queue   list.List // of chan struct{}, closed when the place is given
}

func newInflight(max int) *inflight { return &inflight{max: max} }

// acquire takes a place, waiting behind those who came before; false when
// ctx ended first (the client went away), and it then holds no place.
func (q *inflight) acquire(ctx context.Context) bool {
	q.mu.Lock()
	if q.running < q.max && q.queue.Len() == 0 {
		q.running++
		q.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	e := q.queue.PushBack(ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	}
	q.mu.Lock()
	select {
	case <-ch: // given meanwhile: pass it on
		q.mu.Unlock()
		q.release()
	default:
		q.queue.Remove(e)
		q.mu.Unlock()
	}
	return false
}

// release gives the place to the first in the queue, or frees it.
func (q *inflight) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if f := q.queue.Front(); f != nil {
		q.queue.Remove(f)
		close(f.Value.(chan struct{}))
		return
	}
	q.running--
}

// preReadMax is the largest request body read whole before its request
// queues, so a client sending slowly waits before its place, not in it.
// A larger body's request is not queued (an archive or a video on its way
// in: bounded by MaxConns and the body rate instead).
const preReadMax = 256 << 10

// limit runs h for each request once it holds a place. /healthz does not
// queue. The place is given back at the answer's first byte of body (or
// when h returns), so writing an answer to a slow reader, or streaming a
// download, does not keep it.
func (q *inflight) limit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || !preRead(r) {
			h.ServeHTTP(w, r)
			return
		}
		if !q.acquire(r.Context()) {
			return // the client went away while queued: nobody reads an answer
		}
		sw := &slotWriter{ResponseWriter: w, release: sync.OnceFunc(q.release)}
		defer sw.release()
		h.ServeHTTP(sw, r)
	})
}

// preRead reads r's body into memory when it is at most preReadMax, and
// reports whether it did (or r has none). A body that fails to arrive is
// replaced by one that fails the same way once what came is read, so the
// handler answers as it would have.
func preRead(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	if r.ContentLength > preReadMax {
		return false
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, preReadMax+1))
	orig := r.Body
	switch {
	case err != nil:
		r.Body = bodyOf{io.MultiReader(&buf, failReader{err}), orig}
	case buf.Len() > preReadMax:
		r.Body = bodyOf{io.MultiReader(&buf, orig), orig}
		return false
	default:
		r.Body = bodyOf{&buf, orig}
	}
	return true
}

type bodyOf struct {
	io.Reader
	io.Closer
}

type failReader struct{ err error }

func (f failReader) Read([]byte) (int, error) { return 0, f.err }

// slotWriter gives the request's place back at the answer's first byte.
type slotWriter struct {
	http.ResponseWriter
	release func()
}

func (w *slotWriter) Write(b []byte) (int, error) {
	w.release()
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps the connection's sendfile for files served whole.
func (w *slotWriter) ReadFrom(r io.Reader) (int64, error) {
	w.release()
	return io.Copy(w.ResponseWriter, r)
}

func (w *slotWriter) Flush() {
	w.release()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (w *slotWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
