package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// remoteRunner calls a SageMaker-compatible endpoint: GET {endpoint}/ping
// answers 200 once the model is loaded, POST {endpoint}/invocations runs it.
type remoteRunner struct {
	model    string
	endpoint string
	timeout  time.Duration
	http     *http.Client
	pinged   atomic.Bool
}

func newRemote(model, endpoint string, timeout time.Duration) *remoteRunner {
	return &remoteRunner{model: model, endpoint: strings.TrimRight(endpoint, "/"), timeout: timeout,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}}}
}

func (r *remoteRunner) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.endpoint+"/ping", nil)
	if err != nil {
		return &ModelError{Model: r.model, Stage: "endpoint", Msg: fmt.Sprintf("endpoint %q: %v", r.endpoint, err)}
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return r.transportError(ctx, "ping", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return r.statusError("ping", resp)
	}
	io.Copy(io.Discard, resp.Body)
	r.pinged.Store(true)
	return nil
}

func (r *remoteRunner) Invoke(ctx context.Context, in Request) (Response, error) {
	if !r.pinged.Load() {
		if err := r.Ping(ctx); err != nil {
			return Response{}, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, r.endpoint+"/invocations", bytes.NewReader(in.Body))
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", in.ContentType)
	req.Header.Set("Accept", or(in.Accept, "application/json"))
	resp, err := r.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return Response{}, r.transportError(cctx, "invocations", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return Response{}, r.statusError("invocations", resp)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return Response{}, r.transportError(cctx, "invocations", err)
	}
	if len(body) > maxBodyBytes {
		return Response{}, &ModelError{Model: r.model, Stage: "output", Msg: "the endpoint's answer is over 512 MiB"}
	}
	return Response{Body: body, ContentType: resp.Header.Get("Content-Type")}, nil
}

func (r *remoteRunner) transportError(ctx context.Context, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &ModelError{Model: r.model, Stage: "timeout",
			Msg: fmt.Sprintf("endpoint %s/%s gave no answer within %s", r.endpoint, what, r.timeout)}
	}
	return &ModelError{Model: r.model, Stage: "endpoint", Msg: fmt.Sprintf("endpoint %s/%s: %v", r.endpoint, what, err)}
}

// statusError reads an error answer: framelake's own servers send
// {"error": ..., "stage": ..., "traceback": ...}; others any text.
func (r *remoteRunner) statusError(what string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var m frameMeta
	if json.Unmarshal(b, &m) == nil && m.Error != "" {
		me := &ModelError{Model: r.model, Stage: m.Stage, Msg: m.Error, Tail: lastLines(m.Traceback, 12)}
		if m.Stage == "" {
			me.Stage = "endpoint"
		}
		return me
	}
	return &ModelError{Model: r.model, Stage: "endpoint",
		Msg: fmt.Sprintf("endpoint %s/%s answered %s: %s", r.endpoint, what, resp.Status, lastLines(string(b), 12))}
}

func (r *remoteRunner) Close() error {
	r.http.CloseIdleConnections()
	return nil
}

// InvocationHandler serves a Runner over the SageMaker protocol: GET /ping
// (200 once the model loaded, 503 with the reason otherwise) and POST
// /invocations (the body goes to input_fn with the request's Content-Type;
// Accept goes to output_fn). Failures are JSON {"error", "stage",
// "traceback"}, which the remote runner turns back into ModelErrors.
func InvocationHandler(r Runner, maxBody int64) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, req *http.Request) {
		if err := r.Ping(req.Context()); err != nil {
			writeModelError(w, http.StatusServiceUnavailable, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("POST /invocations", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
		if err != nil {
			writeModelError(w, http.StatusRequestEntityTooLarge, err)
			return
		}
		resp, err := r.Invoke(req.Context(), Request{Body: body, ContentType: req.Header.Get("Content-Type"),
			Accept: req.Header.Get("Accept")})
		if err != nil {
			writeModelError(w, http.StatusInternalServerError, err)
			return
		}
		w.Header().Set("Content-Type", or(resp.ContentType, "application/json"))
		w.Write(resp.Body)
	})
	return mux
}

func writeModelError(w http.ResponseWriter, status int, err error) {
	m := map[string]string{"error": err.Error()}
	var me *ModelError
	if errors.As(err, &me) {
		m = map[string]string{"error": me.Msg, "stage": me.Stage, "traceback": me.Tail}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(m)
}
