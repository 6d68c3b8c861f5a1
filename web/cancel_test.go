package web_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/framelake/framelake/internal/auth"
)

// TestCancelledRequestIsNotAServerError: a client that goes away while its
// upload is being read is logged as 499 (client closed the request) at info
// level, not as a 500 at error level with "context canceled", so it stays
// out of a count of server errors (issue 31 item 18).
func TestCancelledRequestIsNotAServerError(t *testing.T) {
	s := startLakeServer(t)
	k, secret, err := s.a.Keys.Create(context.Background(), "writer", auth.Write, 0)
	if err != nil {
		t.Fatal(err)
	}
	body, w := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/api/v1/lake/files", body)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	req.Header.Set("key", k.Key)
	req.Header.Set("secret", secret)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %s", resp.Status)
		}
		done <- err
	}()
	// Part of a file, then the client gives up while the server reads.
	fmt.Fprint(w, "--b\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a.jpg\"\r\n\r\n")
	w.Write(make([]byte, 64<<10))
	time.Sleep(200 * time.Millisecond)
	cancel()
	w.CloseWithError(context.Canceled)
	if err := <-done; !strings.Contains(fmt.Sprint(err), "context canceled") {
		t.Fatalf("the client's request: %v", err)
	}
	line := regexp.MustCompile(`(?m)^.*path=/api/v1/lake/files status=\d+.*$`)
	deadline := time.Now().Add(5 * time.Second)
	for line.FindString(s.log.String()) == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	logs := s.log.String()
	got := line.FindString(logs)
	if !strings.Contains(got, "status=499") || !strings.Contains(got, "level=INFO") || !strings.Contains(got, "client_closed=true") {
		t.Errorf("the request's log line: %q, want status=499 at INFO with client_closed=true", got)
	}
	if strings.Contains(logs, "level=ERROR") {
		t.Errorf("a request the client cancelled was logged as an error:\n%s", logs)
	}
}

// TestClientsLeavingMidQueryAreNotErrors: clients that send a request and
// close the connection at once leave the server reading the lake with a
// cancelled context ("context canceled" from the database); none of them is
// logged as an error.
func TestClientsLeavingMidQueryAreNotErrors(t *testing.T) {
	s := startLakeServer(t)
	addr := strings.TrimPrefix(s.base, "http://")
	// Whether a query is cut depends on which comes first, its end or the
	// server seeing the connection close: rounds of 200 until one is (one
	// round was enough on a quiet machine; in make test, beside six other
	// streams, a round once had none cut).
	var logs string
	for round := 0; round < 10 && !strings.Contains(logs, "status=499"); round++ {
		for i := range 200 {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "GET /api/v1/lake/histogram?field=width&query=%s HTTP/1.1\r\nHost: x\r\nkey: %s\r\nsecret: %s\r\n\r\n",
				url.QueryEscape(fmt.Sprintf("name ~ f%d OR eval.ev.fp > 0", round*200+i)), s.key, s.secret)
			conn.Close()
		}
		time.Sleep(500 * time.Millisecond)
		logs = s.log.String()
	}
	if strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "status=500") {
		t.Errorf("clients that left were logged as server errors:\n%s", logs)
	}
	if strings.Count(logs, "status=499") == 0 {
		t.Errorf("no request was cut by its client: the test tested nothing\n%s", logs)
	}
	t.Logf("%d requests logged 499, %d 200", strings.Count(logs, "status=499"), strings.Count(logs, "status=200"))
}
