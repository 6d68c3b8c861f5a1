package web

import (
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
}

// jobView is the job shape of REST.md.
type jobView struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Status     job.Status      `json:"status"`
	Progress   int             `json:"progress"`
	Done       int64           `json:"done"`
	Total      int64           `json:"total"`
	Error      string          `json:"error"`
	Result     json.RawMessage `json:"result"`
	Attempts   int             `json:"attempts"`
	CreatedAt  time.Time       `json:"createdAt"`
	StartedAt  *time.Time      `json:"startedAt"`
	FinishedAt *time.Time      `json:"finishedAt"`
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
	}
	return c.JSON(http.StatusOK, map[string]any{"jobCount": total, "pageIndex": opt.PageIndex,
		"pageSize": opt.PageSize, "jobList": views})
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
