package analysis

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// multiCode does what the request body says, to exercise the runner.
const multiCode = `
import json, os, signal, sys, time

def model_fn(model_dir):
    return {"loaded": os.path.basename(model_dir)}

def input_fn(body, content_type):
    return body.decode(), content_type

def predict_fn(data, model):
    cmd, ctype = data
    if cmd == "raise":
        return 1 / 0
    if cmd == "sleep":
        time.sleep(60)
    if cmd == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if cmd == "print":
        print("noise on stdout")
        sys.stdout.flush()
    if cmd == "env":
        return sorted(os.environ)
    return {"echo": cmd, "content_type": ctype, "model": model["loaded"]}

def output_fn(pred, accept):
    return pred, "application/x-test"
`

// TestRunnerSuite runs one suite against both runners: the local subprocess
// and the remote endpoint (our own InvocationHandler in front of a local one).
func TestRunnerSuite(t *testing.T) {
	for _, kind := range []string{"local", "remote"} {
		t.Run(kind, func(t *testing.T) {
			t.Setenv("FRAMELAKE_SECRET_SHOULD_NOT_LEAK", "x")
			e := newEnv(t, Options{CallTimeout: 3 * time.Second})
			m := e.register(t, "multi-"+kind, AutoTagging, brokenPkg(t, multiCode))
			local, err := e.svc.pool.runner(m)
			if err != nil {
				t.Fatal(err)
			}
			var r Runner = local
			if kind == "remote" {
				srv := httptest.NewServer(InvocationHandler(local, 64<<20))
				t.Cleanup(srv.Close)
				r = newRemote(m.Name, srv.URL, 10*time.Second)
			}
			runnerSuite(t, r)
		})
	}
}

func runnerSuite(t *testing.T, r Runner) {
	ctx := context.Background()
	call := func(body string) (Response, error) {
		return r.Invoke(ctx, Request{Body: []byte(body), ContentType: "text/plain"})
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	resp, err := call("hello")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, string(resp.Body), `"echo": "hello"`, `"content_type": "text/plain"`, `"model": "package"`)
	if resp.ContentType != "application/x-test" {
		t.Errorf("content type %q", resp.ContentType)
	}

	t.Run("prints do not break the protocol", func(t *testing.T) {
		resp, err := call("print")
		if err != nil || !strings.Contains(string(resp.Body), `"echo": "print"`) {
			t.Fatalf("%s %v", resp.Body, err)
		}
	})
	t.Run("clean environment", func(t *testing.T) {
		resp, err := call("env")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(resp.Body), "FRAMELAKE") {
			t.Errorf("worker sees server environment: %s", resp.Body)
		}
	})
	t.Run("exception", func(t *testing.T) {
		_, err := call("raise")
		var me *ModelError
		if !errors.As(err, &me) || me.Stage != "predict_fn" {
			t.Fatalf("got %v", err)
		}
		contains(t, err.Error(), "ZeroDivisionError: division by zero", "inference.py", "in predict_fn")
		if _, err := call("after"); err != nil {
			t.Fatalf("call after an exception: %v", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		_, err := call("sleep")
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("timeout took %s", took)
		}
		contains(t, errText(err), "no answer within 3s")
		if _, err := call("after"); err != nil {
			t.Fatalf("call after a timeout: %v", err)
		}
	})
	t.Run("killed worker", func(t *testing.T) {
		_, err := call("die")
		contains(t, errText(err), "the Python worker died", "signal: killed")
		if _, err := call("after"); err != nil {
			t.Fatalf("call after a crash: %v", err)
		}
	})
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestRunnerIdleAndLimit: idle workers stop, and a third model waits for or
// evicts one of the two live workers.
func TestRunnerIdleAndLimit(t *testing.T) {
	e := newEnv(t, Options{MaxWorkers: 2, IdleTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	var rs []*localRunner
	for _, n := range []string{"a", "b", "c"} {
		m := e.register(t, "noop-"+n, AutoTagging, brokenPkg(t, noopCode))
		r, _ := e.svc.pool.runner(m)
		rs = append(rs, r)
		if _, err := r.Invoke(ctx, Request{Body: []byte("x"), ContentType: "image/jpeg"}); err != nil {
			t.Fatal(err)
		}
		e.svc.pool.mu.Lock()
		live := e.svc.pool.live
		e.svc.pool.mu.Unlock()
		if live > 2 {
			t.Fatalf("%d workers alive, limit 2", live)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.svc.pool.mu.Lock()
		live := e.svc.pool.live
		e.svc.pool.mu.Unlock()
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still alive after the idle timeout", live)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := rs[0].Invoke(ctx, Request{Body: []byte("x"), ContentType: "image/jpeg"}); err != nil {
		t.Fatalf("call after idle shutdown: %v", err)
	}
}
