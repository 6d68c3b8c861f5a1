package web

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

// statsRoutes measure people (docs/team.md "Statistics").
func (s *server) statsRoutes(g *echo.Group) {
	g.GET("/stats/people", s.peopleStats)
}

// PersonDay is one person's work on one day (UTC): their changes of frames'
// shapes (lake.EditStats, active time by lake.IdleGap) and review
// (annotate.ReviewStats). RejectionRate is JobsRejected / JobsReviewed,
// null when none of their jobs was judged that day.
type PersonDay struct {
	User             string   `json:"user"`
	Day              string   `json:"day"`
	Frames           int      `json:"frames"`
	Shapes           int      `json:"shapes"`
	ShapesRemoved    int      `json:"shapesRemoved"`
	Changes          int      `json:"changes"`
	ActiveSeconds    float64  `json:"activeSeconds"`
	ReviewsDone      int      `json:"reviewsDone"`
	JobsReviewed     int      `json:"jobsReviewed"`
	JobsRejected     int      `json:"jobsRejected"`
	RejectionRate    *float64 `json:"rejectionRate"`
	CommentsReceived int      `json:"commentsReceived"`
	CommentsResolved int      `json:"commentsResolved"`
}

// maxStatsRange is the longest range one statistics answer covers.
const maxStatsRange = 366 * 24 * time.Hour

// peopleStats answers GET /stats/people?from=&to=&project=: per person per
// day, ordered by person then day. from and to are dates (2026-11-29, a
// whole UTC day: to includes its day) or RFC 3339 times (to excluded); by
// default the 30 days up to now. Each caller reads the rows statsPeople
// allows them.
func (s *server) peopleStats(c *echo.Context) error {
	q := c.Request().URL.Query()
	// By default up to now, now included: a change made in this very
	// millisecond has at == now, and to is excluded.
	to, err := statsTime(q.Get("to"), "to", time.Now().UTC().Truncate(time.Millisecond).Add(time.Millisecond), true)
	if err != nil {
		return err
	}
	from, err := statsTime(q.Get("from"), "from", to.Add(-30*24*time.Hour), false)
	if err != nil {
		return err
	}
	switch {
	case !from.Before(to):
		return errs.Invalid("from", "from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	case to.Sub(from) > maxStatsRange:
		return errs.Invalid("from", "a range is at most 366 days, got %s to %s", from.Format(time.DateOnly), to.Format(time.DateOnly))
	}
	project := q.Get("project")
	ctx := c.Request().Context()
	people, err := s.statsPeople(c, project)
	if err != nil {
		return err
	}
	if project != "" {
		if _, err := s.Annotate.Project(ctx, project); err != nil {
			return err
		}
	}
	edits, err := s.Lake.EditStats(ctx, lake.EditStatsQuery{From: from, To: to, Project: project})
	if err != nil {
		return err
	}
	reviews, err := s.Annotate.ReviewStats(ctx, from, to, project)
	if err != nil {
		return err
	}
	days := map[[2]string]*PersonDay{}
	var order [][2]string
	day := func(who, d string) *PersonDay {
		k := [2]string{who, d}
		if days[k] == nil {
			days[k] = &PersonDay{User: who, Day: d}
			order = append(order, k)
		}
		return days[k]
	}
	for _, e := range edits {
		if people != nil && !people[e.Who] {
			continue
		}
		p := day(e.Who, e.Day)
		p.Frames, p.Shapes, p.ShapesRemoved, p.Changes = e.Frames, e.Shapes, e.Removed, e.Changes
		p.ActiveSeconds = e.Active.Seconds()
	}
	for _, r := range reviews {
		if people != nil && !people[r.Who] {
			continue
		}
		p := day(r.Who, r.Day)
		p.ReviewsDone, p.JobsReviewed, p.JobsRejected = r.ReviewsDone, r.JobsReviewed, r.JobsRejected
		p.CommentsReceived, p.CommentsResolved = r.CommentsReceived, r.CommentsResolved
		if r.JobsReviewed > 0 {
			rate := float64(r.JobsRejected) / float64(r.JobsReviewed)
			p.RejectionRate = &rate
		}
	}
	out := make([]PersonDay, 0, len(order))
	for _, k := range sortedKeys(order) {
		out = append(out, *days[k])
	}
	return c.JSON(http.StatusOK, map[string]any{"from": from, "to": to, "project": project,
		"idleGapSeconds": lake.IdleGap.Seconds(), "people": out})
}

// statsPeople is whose rows the caller may read (docs/team.md
// "Statistics"), nil for everyone's: viewers, curators and admins read
// all; an annotator their own; a reviewer their own and those of the
// members of the projects they review. With project=, an annotator or a
// reviewer must be a member of it, and a reviewer reads its members only
// when they review it. A person's work in other projects shows in the
// rows of no project (project= left out) as the history counts it.
func (s *server) statsPeople(c *echo.Context, project string) (map[string]bool, error) {
	k := caller(c)
	if k.Role.Lakewide() {
		return nil, nil
	}
	me := s.userName(c)
	people := map[string]bool{me: true}
	if k.User == "" { // a key of no person acting as a member: its own rows
		return people, nil
	}
	ctx := c.Request().Context()
	if project != "" {
		if err := s.projectAccess(c, project, NeedView); err != nil {
			return nil, err
		}
	}
	mine, err := s.Keys.Memberships(ctx, k.User)
	if err != nil {
		return nil, err
	}
	for _, m := range mine {
		if m.Role != auth.Reviewer || (project != "" && m.ProjectID != project) {
			continue
		}
		members, err := s.Keys.Members(ctx, m.ProjectID)
		if err != nil {
			return nil, err
		}
		for _, o := range members {
			people[o.Name] = true
		}
	}
	return people, nil
}

// statsTime reads a range end: a date (its UTC midnight; the next one for
// an end, so to= includes its day) or an RFC 3339 time; def when empty.
func statsTime(v, name string, def time.Time, end bool) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return def, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			d = d.Add(24 * time.Hour)
		}
		return d, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, errs.Invalid(name, "%s must be a date like 2026-11-29 or a time like 2026-11-29T10:00:00Z, got %q", name, v)
	}
	return t.UTC(), nil
}

// sortedKeys orders (person, day) keys by person, then day.
func sortedKeys(keys [][2]string) [][2]string {
	out := slices.Clone(keys)
	slices.SortFunc(out, func(a, b [2]string) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	return out
}
