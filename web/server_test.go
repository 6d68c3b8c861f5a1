package web

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestBodyDeadlineLifted: once a body is read to its end, its read deadline
// no longer applies, also when the handler reads again at the end (as
// decoders looking for trailing data do): a handler that works for several
// windows after it is not canceled. (net/http reads the connection in the
// background then; meeting a deadline, that read cancels the request.)
func TestBodyDeadlineLifted(t *testing.T) {
	const window = 100 * time.Millisecond
	done := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			done <- err
			return
		}
		if n, err := r.Body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			done <- fmt.Errorf("a read past the end: %d, %v", n, err)
			return
		}
		select {
		case <-time.After(5 * window):
			done <- nil
		case <-r.Context().Done():
			done <- r.Context().Err()
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, sl := NewServer(h, ln, ServerOptions{BodyTimeout: window, BodyMinBytes: 1})
	go srv.Serve(sl)
	defer srv.Close()
	resp, err := http.Post("http://"+ln.Addr().String(), "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-done; err != nil {
		t.Errorf("handler working past the body's window: %v", err)
	}
}

// TestMaxConnsFollowsFileLimit: under a low open-file limit the connection
// bound leaves half the files to the database, media and temp files, so
// connections cannot take the last one and starve accept (and /healthz).
func TestMaxConnsFollowsFileLimit(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 200
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	if n := (ServerOptions{}).EffectiveMaxConns(); n != 100 {
		t.Errorf("with 200 files: %d connections; want 100", n)
	}
	if n := (ServerOptions{MaxConns: 50}).EffectiveMaxConns(); n != 50 {
		t.Errorf("asked for 50 with 200 files: %d", n)
	}
}
