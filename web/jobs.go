package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
)

func (s *server) jobRoutes(g *echo.Group) {
	g.GET("/jobs", s.listJobs)
	g.GET("/jobs/:id", s.getJob)
	g.POST("/jobs/:id/cancel", s.cancelJob)
	g.POST("/jobs/:id/retry", s.retryJob)
}

// jobView is the job shape of docs/spec/rest.md.
type jobView struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Status   job.Status      `json:"status"`
	Progress int             `json:"progress"`
	Done     int64           `json:"done"`
	Total    int64           `json:"total"`
	Error    string          `json:"error"`
	Result   json.RawMessage `json:"result"`
	// ResultSummarized: a job list's result is a summary (see summarizeResult);
	// the job's own route has it whole.
	ResultSummarized bool       `json:"resultSummarized,omitempty"`
	Attempts         int        `json:"attempts"`
	CreatedAt        time.Time  `json:"createdAt"`
	StartedAt        *time.Time `json:"startedAt"`
	FinishedAt       *time.Time `json:"finishedAt"`
}

func viewJob(j job.Job) jobView {
	v := jobView{ID: j.ID, Type: j.Type, Status: j.Status, Progress: j.Progress(), Done: j.Done, Total: j.Total,
		Error: j.Error, Result: j.Result, Attempts: j.Attempts, CreatedAt: j.CreatedAt,
		StartedAt: optTime(j.StartedAt), FinishedAt: optTime(j.FinishedAt)}
	if len(v.Result) == 0 {
		v.Result = json.RawMessage("null")
	}
	return v
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (s *server) getJob(c *echo.Context) error {
	j, err := s.Jobs.Get(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewJob(j))
}

func (s *server) cancelJob(c *echo.Context) error {
	j, err := s.Jobs.Cancel(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, viewJob(j))
}

// listJobs pages through jobs, newest first: ?status=running,queued&type=...&pageIndex=&pageSize=
func (s *server) listJobs(c *echo.Context) error {
	q := c.Request().URL.Query()
	opt := job.ListOptions{Types: multi(q["type"])}
	for _, st := range multi(q["status"]) {
		opt.Status = append(opt.Status, job.Status(st))
	}
	var err error
	if opt.PageIndex, err = intParam(q.Get("pageIndex"), "pageIndex", 0, 0, 1<<31); err != nil {
		return err
	}
	if opt.PageSize, err = intParam(q.Get("pageSize"), "pageSize", job.DefaultPageSize, 1, job.MaxPageSize); err != nil {
		return err
	}
	jobs, total, err := s.Jobs.List(c.Request().Context(), opt)
	if err != nil {
		return err
	}
	views := make([]jobView, len(jobs))
	for i, j := range jobs {
		views[i] = viewJob(j)
		if len(views[i].Result) > maxListedResult {
			views[i].Result, views[i].ResultSummarized = summarizeResult(views[i].Result), true
		}
		if len(views[i].Error) > maxListedResult {
			views[i].Error = strings.ToValidUTF8(views[i].Error[:maxListedResult], "") + "… (whole on the job's route)"
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"jobCount": total, "pageIndex": opt.PageIndex,
		"pageSize": opt.PageSize, "jobList": views})
}

// maxListedResult is the largest result a job list carries whole: an import
// of a COCO file naming a million categories made a list of jobs 9.9 MB.
const maxListedResult = 4 << 10

// Bounds of a summarized result: a few KB whatever the result.
const (
	summaryDepth   = 4   // objects nested deeper are left out
	summaryKeys    = 32  // keys kept of an object
	summaryStrings = 200 // bytes kept of a string
)

// summarizeResult is a large job result in bounded size: each list is
// replaced by its length (key "<name>Count"), strings are cut, objects keep
// their first keys to a few levels. It reads the result token by token.
func summarizeResult(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	v, err := summarizeValue(dec, 1)
	if err != nil {
		return json.RawMessage(`null`)
	}
	if n, ok := v.(listLen); ok {
		v = map[string]int{"count": int(n)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// listLen is a list summarized by its length.
type listLen int

func summarizeValue(dec *json.Decoder, depth int) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('['):
		n := 0
		for dec.More() {
			if err := skipJSON(dec); err != nil {
				return nil, err
			}
			n++
		}
		_, err := dec.Token()
		return listLen(n), err
	case json.Delim('{'):
		m := map[string]any{}
		left := 0
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			if len(m) >= summaryKeys || depth >= summaryDepth {
				left++
				if err := skipJSON(dec); err != nil {
					return nil, err
				}
				continue
			}
			v, err := summarizeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if n, ok := v.(listLen); ok {
				m[cut(key)+"Count"] = int(n)
			} else {
				m[cut(key)] = v
			}
		}
		if left > 0 {
			m["keysLeftOut"] = left
		}
		_, err := dec.Token()
		return m, err
	case nil:
		return nil, nil
	}
	if str, ok := t.(string); ok {
		return cut(str), nil
	}
	return t, nil
}

func cut(s string) string {
	if len(s) > summaryStrings {
		return strings.ToValidUTF8(s[:summaryStrings], "") + "…"
	}
	return s
}

// skipJSON reads past one value, copying at most that value of a result
// that is held whole already.
func skipJSON(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// multi reads an array query parameter given repeated or comma-separated.
func multi(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// intParam parses an integer query parameter; over max is an error, not a clamp.
func intParam(raw, name string, def, lo, hi int) (int, error) {
	if raw == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(raw, 64) // pageIndex is a double in the interface
	if err != nil || f != float64(int(f)) {
		return 0, errs.Invalid(name, "%s must be a whole number, got %q", name, raw)
	}
	n := int(f)
	if n < lo {
		return 0, errs.Invalid(name, "%s must be at least %d", name, lo)
	}
	if n > hi {
		return 0, errs.Invalid(name, "%s must be at most %d", name, hi)
	}
	return n, nil
}
