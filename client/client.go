// Package client is the Go client of framelake's REST API. It imports nothing
// of the server and needs no cgo, so any Go program can talk to an appliance.
// Its one framelake import is lake/shape, the annotations' shapes as the wire
// carries them (pure Go, no SQL, no cgo): client and server share those
// types rather than keep copies that drift.
//
//	c := client.New("http://127.0.0.1:8080", key, secret)
//	res, err := c.UploadFiles(ctx, client.UploadOptions{Collection: "street"}, client.FileFromPath("a.jpg"))
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one framelake server with one API key.
type Client struct {
	base   string
	key    string
	secret string
	http   *http.Client
}

// Option changes a Client.
type Option func(*Client)

// WithHTTPClient uses hc for requests (timeouts, transports, proxies).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// New returns a client of the server at baseURL (e.g. "http://127.0.0.1:8080").
func New(baseURL, key, secret string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), key: key, secret: secret,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Error is an error response of the server.
type Error struct {
	Status  int    // HTTP status
	Code    string // e.g. "invalid_argument", "not_found"
	Message string
	Field   string // the request field at fault, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("framelake: %s (%d %s)", e.Message, e.Status, e.Code)
	if e.Field != "" {
		s += " field " + e.Field
	}
	return s
}

// CodeOf returns the code of a server error in err's chain, or "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// do sends a request and decodes a JSON response into out (unless nil).
func (c *Client) do(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	resp, err := c.send(ctx, method, path, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("framelake: %s %s: decode response: %w", method, path, err)
	}
	return nil
}

// send sends a request and returns the response of a 2xx status; other
// statuses become *Error.
func (c *Client) send(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("key", c.key)
	req.Header.Set("secret", c.secret)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, decodeError(resp)
}

func decodeError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	e := &Error{Status: resp.StatusCode}
	if json.Unmarshal(b, &body) == nil && body.Error.Code != "" {
		e.Code, e.Message, e.Field = body.Error.Code, body.Error.Message, body.Error.Field
	} else {
		e.Code, e.Message = "unknown", strings.TrimSpace(string(b))
		if e.Message == "" {
			e.Message = resp.Status
		}
	}
	return e
}

// postJSON posts in as JSON and decodes the response into out.
func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, "application/json", bytes.NewReader(b), out)
}

// Call calls any client function by name (POST /api/v1/client/<function>)
// with params marshalled to a JSON object and decodes its result into out;
// the typed methods are shorthands for it.
func (c *Client) Call(ctx context.Context, function string, params, out any) error {
	return c.postJSON(ctx, "/api/v1/client/"+url.PathEscape(function), params, out)
}

// Health checks that the server answers.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", "", nil, nil)
}
