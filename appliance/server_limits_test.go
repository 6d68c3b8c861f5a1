package appliance_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/appliance"
	"github.com/framelake/framelake/internal/testmedia"
)

// limits are short timeouts, so the tests see them act.
var limits = appliance.Config{HeaderTimeout: 500 * time.Millisecond, IdleTimeout: 500 * time.Millisecond,
	BodyTimeout: 500 * time.Millisecond, BodyMinBytes: 4096}

func dial(t *testing.T, e *env) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reads from c until the server closes it, failing the test if
// that takes longer than d.
func closedWithin(t *testing.T, c net.Conn, d time.Duration, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("%s: connection still open after %s", what, d)
	}
}

// TestSlowHeadersCut: a client that sends its headers a byte at a time
// (slowloris) is cut at the header timeout.
func TestSlowHeadersCut(t *testing.T) {
	e := start(t, limits)
	c := dial(t, e)
	go func() {
		for _, b := range []byte("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaa") {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	closedWithin(t, c, 2*time.Second, "headers a byte per 100 ms")
}

// TestIdleKeepAliveClosed: a keep-alive connection that sends no second
// request is closed after the idle timeout.
func TestIdleKeepAliveClosed(t *testing.T) {
	e := start(t, limits)
	c := dial(t, e)
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	closedWithin(t, c, 2*time.Second, "idle keep-alive")
}

// uploadHead starts an upload of a body of n bytes on c: headers only.
func uploadHead(e *env, c net.Conn, n int, ctype string) {
	fmt.Fprintf(c, "POST /api/v1/lake/files HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n"+
		"Content-Type: %s\r\nContent-Length: %d\r\n\r\n", basic(e.wkey, e.wsecret), ctype, n)
}

// TestSlowBodyCut: a body that delivers less than the minimum per window is
// cut with a 408, however long it would go on.
func TestSlowBodyCut(t *testing.T) {
	e := start(t, limits)
	c := dial(t, e)
	uploadHead(e, c, 1<<20, "multipart/form-data; boundary=X")
	go func() { // 10 bytes per 100 ms: 50 bytes per window of 500 ms, under 4096
		fmt.Fprint(c, "--X\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.jpg\"\r\n\r\n")
		for range 100 {
			if _, err := c.Write([]byte("0123456789")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("trickled body: no answer within 3 s: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 || !strings.Contains(string(b), "slower than 4 KiB in 500ms") {
		t.Errorf("trickled body: %d %s; want 408 naming the minimum rate", resp.StatusCode, b)
	}
	closedWithin(t, c, time.Second, "connection after a slow body")
}

// TestSteadyBodyCompletes: a body that keeps to the minimum rate completes,
// though it takes several windows.
func TestSteadyBodyCompletes(t *testing.T) {
	e := start(t, limits)
	ctype, body := multipartBody(t, map[string]string{"metadata": `{"pad": "` + strings.Repeat("x", 40<<10) + `"}`},
		map[string][]byte{"a.jpg": testmedia.JPEG(64, 48, 7)})
	c := dial(t, e)
	uploadHead(e, c, body.Len(), ctype)
	start := time.Now()
	go func() { // 1 KiB per 50 ms: 10 KiB per window, over 4096; about 2 s in all
		for body.Len() > 0 {
			if _, err := c.Write(body.Next(1024)); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"stored":[{`) {
		t.Errorf("steady body: %d %s", resp.StatusCode, b)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the body took %s: it must outlast the 500 ms window to prove anything", d)
	}
}

// TestConnectionLimit: at MaxConns, an idle keep-alive connection makes room
// for a new one, and so does, after a second, one that has not finished its
// headers; until then a new connection still gets /healthz, and a 503 that
// says why for anything else.
func TestConnectionLimit(t *testing.T) {
	cfg := limits
	cfg.MaxConns, cfg.HeaderTimeout, cfg.IdleTimeout = 4, 5*time.Second, time.Minute
	e := start(t, cfg)
	get := func(c net.Conn, path string) (*http.Response, string) {
		t.Helper()
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n\r\n", path, basic(e.wkey, e.wsecret))
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	var idle []net.Conn
	for range 4 {
		c := dial(t, e)
		get(c, "/healthz")
		idle = append(idle, c)
	}
	settle := func() { time.Sleep(300 * time.Millisecond) } // the server marks a connection idle after answering
	settle()
	if resp, _ := get(dial(t, e), "/api/v1/jobs"); resp.StatusCode != 200 {
		t.Fatalf("a fifth connection with 4 idle: %d", resp.StatusCode)
	}
	// The longest idle, which one that is being up to the server's scheduling.
	if closed := closedOf(idle); closed != 1 {
		t.Errorf("%d idle connections closed to make room for one; want 1", closed)
	}
	settle()
	var slow []net.Conn
	for range 4 { // slowloris: headers begun, never finished
		c := dial(t, e)
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\n")
		slow = append(slow, c)
	}
	if resp, b := get(dial(t, e), "/healthz"); resp.StatusCode != 200 || !resp.Close {
		t.Errorf("healthz at the limit: %d %s (close %v); want 200 and Connection: close", resp.StatusCode, b, resp.Close)
	}
	if resp, b := get(dial(t, e), "/api/v1/jobs"); resp.StatusCode != 503 || !strings.Contains(b, "all 4 connections") {
		t.Errorf("a request at the limit: %d %s; want 503 saying the server is busy", resp.StatusCode, b)
	}
	time.Sleep(1200 * time.Millisecond) // past the second a connection may take for its headers
	if resp, b := get(dial(t, e), "/api/v1/jobs"); resp.StatusCode != 200 || resp.Close {
		t.Errorf("a request at the limit held by slow headers: %d %s (close %v); want 200, kept open",
			resp.StatusCode, b, resp.Close)
	}
	if n := closedOf(slow); n != 1 {
		t.Errorf("%d slow-header connections closed to make room for one; want 1", n)
	}
}

// closedOf counts the connections the server has closed.
func closedOf(conns []net.Conn) int {
	n := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
			n++
		}
	}
	return n
}

func basic(user, pass string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}
