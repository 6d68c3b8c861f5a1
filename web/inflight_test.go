package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// gated is a handler whose requests /run/<id> start (reported on started)
// and then wait for gate(id); /stream/<id> writes a line first; any request
// echoes its body.
type gated struct {
	mu      sync.Mutex
	gates   map[string]chan struct{}
	started chan string
}

func newGated() *gated {
	return &gated{gates: map[string]chan struct{}{}, started: make(chan string, 16)}
}

func (g *gated) gate(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[id] == nil {
		g.gates[id] = make(chan struct{})
	}
	return g.gates[id]
}

func (g *gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind, id, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	g.started <- id
	if kind == "stream" {
		w.Write([]byte("first line\n"))
		http.NewResponseController(w).Flush()
	}
	<-g.gate(id)
	fmt.Fprintf(w, "%s %d", id, len(body))
}

// serveLimited serves h behind an in-flight bound of max on loopback.
func serveLimited(t *testing.T, max int, h http.Handler) (*inflight, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	q := newInflight(max)
	srv := &http.Server{Handler: q.limit(h)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return q, "http://" + ln.Addr().String()
}

func (q *inflight) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queue.Len()
}

func (q *inflight) busy() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}

// waitFor polls cond until it holds; a hang fails the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

func post(ctx context.Context, url string, body io.Reader) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestInFlightQueuesInOrder: past the bound, requests wait before any of
// their work and start in the order they came; one whose client goes away
// leaves the queue and never runs; every other one is answered.
func TestInFlightQueuesInOrder(t *testing.T) {
	g := newGated()
	q, base := serveLimited(t, 2, g)
	answers := make(chan string, 8)
	send := func(ctx context.Context, id string) {
		go func() {
			a, err := post(ctx, base+"/run/"+id, strings.NewReader(id))
			if err != nil {
				a = id + " " + err.Error()
			}
			answers <- a
		}()
	}
	ctx := context.Background()
	send(ctx, "a")
	send(ctx, "b")
	first := map[string]bool{<-g.started: true, <-g.started: true}
	if !first["a"] || !first["b"] {
		t.Fatalf("first two to start: %v", first)
	}
	gone, cancel := context.WithCancel(ctx)
	for i, id := range []string{"c", "d", "e"} {
		if id == "d" {
			send(gone, id)
		} else {
			send(ctx, id)
		}
		waitFor(t, id+" queued", func() bool { return q.queued() == i+1 })
	}
	cancel()
	waitFor(t, "d to leave the queue", func() bool { return q.queued() == 2 })
	if a := <-answers; !strings.HasPrefix(a, "d ") || !strings.Contains(a, "canceled") {
		t.Fatalf("the request whose client went away: %q", a)
	}
	close(g.gate("a"))
	if id := <-g.started; id != "c" {
		t.Fatalf("after a, %s started; want c, the first queued", id)
	}
	close(g.gate("b"))
	if id := <-g.started; id != "e" {
		t.Fatalf("after b, %s started; want e (d went away)", id)
	}
	close(g.gate("c"))
	close(g.gate("e"))
	got := map[string]bool{}
	for range 4 {
		got[<-answers] = true
	}
	for _, id := range []string{"a", "b", "c", "e"} {
		if !got[id+" 1"] {
			t.Errorf("no answer %q among %v", id+" 1", got)
		}
	}
	waitFor(t, "every place given back", func() bool { return q.busy() == 0 })
	if q.queued() != 0 {
		t.Errorf("after all: %d queued", q.queued())
	}
}

// TestInFlightPlaceHeldOnlyForWork: a request gives its place back at its
// answer's first byte (a stream or a slow reader does not keep it), a body
// sent slowly is read before its request queues, a body past preReadMax is
// not queued at all, and /healthz never waits.
func TestInFlightPlaceHeldOnlyForWork(t *testing.T) {
	g := newGated()
	q, base := serveLimited(t, 1, g)
	ctx := context.Background()
	streamed := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, base+"/stream/s", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		streamed <- err
	}()
	<-g.started
	waitFor(t, "the stream to give its place back", func() bool { return q.busy() == 0 })

	// A body sent in two halves, the second late: the request does not
	// hold the place while it waits for it.
	pr, pw := io.Pipe()
	slow := make(chan string, 1)
	go func() { a, _ := post(ctx, base+"/run/slow", pr); slow <- a }()
	pw.Write(bytes.Repeat([]byte("x"), 1000))
	close(g.gate("quick"))
	if a, err := post(ctx, base+"/run/quick", strings.NewReader("q")); err != nil || a != "quick 1" {
		t.Fatalf("a request while a slow body arrives: %q, %v", a, err)
	}
	if id := <-g.started; id != "quick" {
		t.Fatalf("%s started first; want quick", id)
	}
	close(g.gate("slow"))
	pw.Write(bytes.Repeat([]byte("x"), 1000))
	pw.Close()
	if id := <-g.started; id != "slow" {
		t.Fatalf("%s started; want slow", id)
	}
	if a := <-slow; a != "slow 2000" {
		t.Fatalf("the slow body's answer: %q", a)
	}

	// While the place is held: a large body and /healthz go past.
	hold := make(chan string, 1)
	go func() { a, _ := post(ctx, base+"/run/hold", nil); hold <- a }()
	if id := <-g.started; id != "hold" {
		t.Fatalf("%s started; want hold", id)
	}
	close(g.gate("big"))
	if a, err := post(ctx, base+"/run/big", bytes.NewReader(make([]byte, preReadMax+1))); err != nil ||
		a != fmt.Sprintf("big %d", preReadMax+1) {
		t.Fatalf("a large body while the place is held: %q, %v", a, err)
	}
	<-g.started
	close(g.gate(""))
	if a, err := post(ctx, base+"/healthz", nil); err != nil || a != " 0" {
		t.Fatalf("/healthz while the place is held: %q, %v", a, err)
	}
	<-g.started
	close(g.gate("hold"))
	close(g.gate("s"))
	if a := <-hold; a != "hold 0" {
		t.Fatalf("hold: %q", a)
	}
	if err := <-streamed; err != nil {
		t.Fatal(err)
	}
}
