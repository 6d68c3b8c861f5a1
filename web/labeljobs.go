package web

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
)

// labelJobRoutes serve a task's labelling jobs (docs/team.md "Jobs",
// "Review"): cutting a task into jobs, reading and reassigning them, moving
// them through review, pulling the next one, and a person's queue.
func (s *server) labelJobRoutes(g *echo.Group) {
	g.POST("/tasks/:taskId/jobs", s.createJobs)
	g.GET("/tasks/:taskId/jobs", s.listLabelJobs)
	g.GET("/tasks/:taskId/jobs/:number", s.getLabelJob)
	g.PATCH("/tasks/:taskId/jobs/:number", s.updateJob)
	g.POST("/tasks/:taskId/jobs/:number/state", s.setJobState)
	g.POST("/projects/:projectId/jobs/next", s.nextJob)
	g.GET("/queue", s.queue)
	s.commentRoutes(g)
}

// member is the caller as a project's jobs see them, once they may at
// least see the project: their name and whether they review or curate it.
func (s *server) member(c *echo.Context, projectID string) (annotate.Member, error) {
	if err := s.projectAccess(c, projectID, NeedView); err != nil {
		return annotate.Member{}, err
	}
	m := annotate.Member{Name: s.userName(c)}
	m.Curate = s.projectAccess(c, projectID, NeedCurate) == nil
	m.Review = m.Curate || s.projectAccess(c, projectID, NeedReview) == nil
	m.Annotate = m.Curate || s.projectAccess(c, projectID, NeedAnnotate) == nil
	return m, nil
}

// userName is the person jobs and comments are recorded for: the
// signed-in person or the person a key belongs to (a key of no person:
// its name).
func (s *server) userName(c *echo.Context) string {
	name, _ := s.callerUser(c)
	return name
}

// taskAccess checks the caller's need on a task's project and answers it
// as a member.
func (s *server) taskAccess(c *echo.Context, need ProjectNeed) (annotate.Member, error) {
	pid, err := s.Annotate.TaskProject(c.Request().Context(), c.Param("taskId"))
	if err != nil {
		return annotate.Member{}, err
	}
	if err := s.projectAccess(c, pid, need); err != nil {
		return annotate.Member{}, err
	}
	return s.member(c, pid)
}

// jobNumber reads the :number path parameter.
func jobNumber(c *echo.Context) (int, error) {
	n, err := strconv.Atoi(c.Param("number"))
	if err != nil || n < 1 {
		return 0, errs.Invalid("number", "a job number is a whole number from 1, got %q", c.Param("number"))
	}
	return n, nil
}

func (s *server) createJobs(c *echo.Context) error {
	var req struct {
		Size      *float64          `json:"size"`
		Assignees []string          `json:"assignees"`
		Replace   bool              `json:"replace"`
		Overlap   *annotate.Overlap `json:"overlap"`
		Seed      *uint64           `json:"seed"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	m, err := s.taskAccess(c, NeedCurate)
	if err != nil {
		return err
	}
	if req.Size == nil {
		return errs.Invalid("size", "size (frames per job) is required")
	}
	size, err := wholeNumber("size", *req.Size)
	if err != nil {
		return err
	}
	jobs, err := s.Annotate.CreateJobs(c.Request().Context(), c.Param("taskId"), annotate.JobPlan{Size: size,
		Assignees: req.Assignees, Replace: req.Replace, Overlap: req.Overlap, Seed: req.Seed}, m)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"jobs": jobs})
}

func (s *server) listLabelJobs(c *echo.Context) error {
	if _, err := s.taskAccess(c, NeedView); err != nil {
		return err
	}
	jobs, err := s.Annotate.Jobs(c.Request().Context(), c.Param("taskId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"jobs": jobs})
}

func (s *server) getLabelJob(c *echo.Context) error {
	if _, err := s.taskAccess(c, NeedView); err != nil {
		return err
	}
	n, err := jobNumber(c)
	if err != nil {
		return err
	}
	j, err := s.Annotate.Job(c.Request().Context(), c.Param("taskId"), n)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}

// updateJob reassigns a job: {"assignee": name|null, "reviewer": name|null},
// a field left out stays.
func (s *server) updateJob(c *echo.Context) error {
	var req map[string]json.RawMessage
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	m, err := s.taskAccess(c, NeedCurate)
	if err != nil {
		return err
	}
	n, err := jobNumber(c)
	if err != nil {
		return err
	}
	var ch annotate.JobChange
	for field, raw := range req {
		var o annotate.Opt
		if err := json.Unmarshal(raw, &o.Name); err != nil {
			return errs.Invalid(field, "%s is a user name or null", field)
		}
		o.Set = true
		switch field {
		case "assignee":
			ch.Assignee = o
		case "reviewer":
			ch.Reviewer = o
		default:
			return errs.Invalid(field, "unknown field %q: a job change has assignee and reviewer", field)
		}
	}
	j, err := s.Annotate.UpdateJob(c.Request().Context(), c.Param("taskId"), n, ch, m)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}

func (s *server) setJobState(c *echo.Context) error {
	var req struct {
		State  string            `json:"state"`
		Note   string            `json:"note"`
		Frames map[string]string `json:"frames"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	// Annotators submit, reviewers review: each rule is the job's own
	// (annotate.SetJobState); the project asks only that they annotate.
	m, err := s.taskAccess(c, NeedView)
	if err != nil {
		return err
	}
	n, err := jobNumber(c)
	if err != nil {
		return err
	}
	j, err := s.Annotate.SetJobState(c.Request().Context(), c.Param("taskId"), n,
		annotate.StateChange{State: annotate.JobState(req.State), Note: req.Note, Frames: req.Frames}, m)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}

func (s *server) nextJob(c *echo.Context) error {
	pid := c.Param("projectId")
	if err := s.projectAccess(c, pid, NeedAnnotate); err != nil {
		return err
	}
	j, err := s.Annotate.NextJob(c.Request().Context(), pid, s.userName(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, j)
}

// queue lists the caller's jobs, what to do next first; submitted jobs with
// no reviewer show to those who may review their project.
func (s *server) queue(c *echo.Context) error {
	canReview := map[string]bool{}
	jobs, err := s.Annotate.Queue(c.Request().Context(), s.userName(c), func(pid string) bool {
		ok, seen := canReview[pid]
		if !seen {
			ok = s.projectAccess(c, pid, NeedReview) == nil
			canReview[pid] = ok
		}
		return ok
	})
	if err != nil {
		return err
	}
	// A job of a project the caller may no longer see is not theirs to do.
	visible := jobs[:0]
	for _, j := range jobs {
		if s.projectAccess(c, j.ProjectID, NeedView) == nil {
			visible = append(visible, j)
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"jobs": visible})
}

// jobEditor is the caller as an edit of a project's frame sees them.
func (s *server) jobEditor(c *echo.Context) (annotate.Member, error) {
	return s.member(c, c.Param("projectId"))
}

// replaceInJob writes a frame's shapes under the jobs' rules (annotate.
// ReplaceFrameBoxesAs): the workspace's PUT of a frame.
func (s *server) replaceInJob(c *echo.Context, version int, boxes []annotate.Box) (annotate.FrameResult, error) {
	m, err := s.jobEditor(c)
	if err != nil {
		return annotate.FrameResult{}, err
	}
	return s.Annotate.ReplaceFrameBoxesAs(c.Request().Context(), c.Param("projectId"), c.Param("uniqueName"), version, boxes, m)
}
