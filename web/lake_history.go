package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/auth"
	"github.com/framelake/framelake/lake"
)

// lakeHistoryRoutes read the history of frames' shapes and restore from it
// (docs/team.md).
func (s *server) lakeHistoryRoutes(g *echo.Group) {
	g.GET("/lake/history", s.history)
	g.GET("/lake/history/:changeId/shapes", s.historyVersion)
	g.POST("/lake/history/:changeId/restore", s.historyRestore)
}

// history lists changes, newest first: of one file (uniqueName=, and
// frame=), one project (project=: its answer and its copies), one task
// (task=) or one job of it (task=&job=), one person (who=), a time range
// (since=, until=, RFC 3339), limit= at most 1000.
func (s *server) history(c *echo.Context) error {
	q := c.Request().URL.Query()
	h := lake.HistoryQuery{UniqueName: q.Get("uniqueName"), Who: q.Get("who"), Project: q.Get("project")}
	if v := q.Get("frame"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errs.Invalid("frame", "frame must be a frame number from 0, got %q", v)
		}
		h.Frame = &n
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &h.Since}, {"until", &h.Until}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return errs.Invalid(p.name, "%s must be a time like 2026-11-29T10:00:00Z, got %q", p.name, v)
			}
			*p.to = t
		}
	}
	limit, err := intParam(q.Get("limit"), "limit", 100, 1, lake.MaxHistory)
	if err != nil {
		return err
	}
	h.Limit = limit
	if err := s.historyScope(c, &h, q.Get("task"), q.Get("job")); err != nil {
		return err
	}
	changes, err := s.Lake.History(c.Request().Context(), h)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"changes": changes})
}

// historyScope narrows a history query to a task's frames, or a job's (its
// answer: the project's, or a copy's), and checks the caller may see the
// project asked for.
func (s *server) historyScope(c *echo.Context, h *lake.HistoryQuery, task, job string) error {
	ctx := c.Request().Context()
	if job != "" && task == "" {
		return errs.Invalid("job", "job= is a job number within a task: give task= too")
	}
	if task != "" {
		w, err := s.Annotate.TaskWorkspace(ctx, task)
		if err != nil {
			return err
		}
		if h.Project != "" && h.Project != w.ProjectID {
			return errs.Invalid("project", "task %s is of project %s, not %s", task, w.ProjectID, h.Project)
		}
		h.Project = w.ProjectID
		h.UniqueNames = make([]string, 0, len(w.Frames))
		for _, f := range w.Frames {
			h.UniqueNames = append(h.UniqueNames, f.UniqueName)
		}
	}
	if job != "" {
		n, err := strconv.Atoi(job)
		if err != nil || n < 1 {
			return errs.Invalid("job", "job must be a job number from 1, got %q", job)
		}
		j, err := s.Annotate.Job(ctx, task, n)
		if err != nil {
			return err
		}
		h.UniqueNames = h.UniqueNames[:0]
		for _, f := range j.Frames {
			h.UniqueNames = append(h.UniqueNames, f.UniqueName)
		}
		h.Operations = []string{h.Project}
		if j.Copy > 0 {
			h.Operations = []string{annotate.CopyOperation(h.Project, j.Copy)}
		}
	}
	if h.Project != "" {
		return s.projectAccess(c, h.Project, NeedView)
	}
	return nil
}

// historyVersion answers the frame's shapes (of the change's operation) as
// they were right after a change: what a restore would write back.
// Lake-wide roles read any change; a member of a project reads the changes
// of its answer and copies (the workspace's history previews them), and to
// them an unknown change is refused as one they may not read.
func (s *server) historyVersion(c *echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("changeId")
	if k := caller(c); !k.Role.Allows(auth.Read) {
		info, err := s.Lake.ChangeInfo(ctx, id)
		if err != nil && !errs.Is(err, errs.NotFound) {
			return err
		}
		project, _, _ := strings.Cut(info.Operation, "/")
		if _, perr := s.Annotate.Project(ctx, project); err != nil || perr != nil {
			return errs.New(errs.PermissionDenied, "changeId", "reading change %s needs a viewer, or a member of its "+
				"project; %s is %s", id, s.userName(c), k.Role)
		}
		if err := s.projectAccess(c, project, NeedView); err != nil {
			return err
		}
	}
	shapes, err := s.Lake.FrameVersion(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"changeId": c.Param("changeId"), "shapes": shapes})
}

// historyRestore writes a frame's shapes (of the change's file, frame and
// operation) back to their state right after a change, as a new change
// made through "restore of <changeId>". A project's frame is restored as a
// save of the workspace is made (ReplaceFrameBoxesAs, the jobs' rules): its
// version moves (open workspaces get a 409 on their next save), and with
// If-Match the restore itself is a 409 when the frame changed since that
// version. A copy's answer (curators only) and shapes of no project (an
// import's) have no workspace version: If-Match is refused there.
func (s *server) historyRestore(c *echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("changeId")
	info, err := s.restorable(c, id)
	if err != nil {
		return err
	}
	version, err := ifMatch(c)
	if err != nil {
		return err
	}
	before, _, err := s.Lake.LatestChange(ctx, info.File, info.Frame, info.Operation)
	if err != nil {
		return err
	}
	a := lake.ActorOf(ctx)
	ctx = lake.WithActor(ctx, lake.Actor{Who: a.Who, Via: "restore of " + id})
	answer := map[string]any{"restored": id, "uniqueName": info.File, "frame": info.Frame, "operation": info.Operation}
	project, _, _ := strings.Cut(info.Operation, "/") // a copy's operation is "<projectId>/copy<k>"
	_, perr := s.Annotate.Project(ctx, project)
	f, err := s.Lake.File(ctx, info.File)
	if err != nil {
		return err
	}
	if f.Type == lake.Video {
		// A video's shapes of a project are its tracks (track_history.go),
		// restored under the video tasks' rules; they have no workspace
		// version.
		if version != 0 {
			return errs.Invalid("If-Match", "the keyframes of change %s have no workspace version to match; send no If-Match", id)
		}
		if err := s.restoreTrackChange(c, info, perr == nil && project == info.Operation); err != nil {
			return err
		}
	} else if perr == nil && project == info.Operation && info.Frame == 0 {
		// The project's answer: written as the workspace writes it, under
		// the jobs' rules for the caller.
		m, err := s.member(c, project)
		if err != nil {
			return err
		}
		if err := s.restoreInJob(c, info, m); err != nil {
			return err
		}
		boxes, err := s.Lake.VersionBoxes(ctx, id)
		if err != nil {
			return err
		}
		res, err := s.Annotate.ReplaceFrameBoxesAs(ctx, project, info.File, version, workspaceBoxes(boxes), m)
		var conflict *annotate.Conflict
		if errors.As(err, &conflict) {
			return s.frameEdited(c, res, err)
		}
		if err != nil {
			return err
		}
		c.Response().Header().Set("ETag", versionTag(res.Version))
		answer["version"] = res.Version
	} else {
		if perr == nil {
			if err := s.projectAccess(c, project, NeedCurate); err != nil {
				return err
			}
		}
		if version != 0 {
			return errs.Invalid("If-Match", "the shapes of change %s (operation %s) have no workspace version to "+
				"match (only a project's own answer has one); send no If-Match", id, info.Operation)
		}
		if err := s.Lake.RestoreChange(ctx, id); err != nil {
			return err
		}
	}
	after, ok, err := s.Lake.LatestChange(ctx, info.File, info.Frame, info.Operation)
	if err != nil {
		return err
	}
	answer["change"] = nil // the shapes already were as they were then: no change
	if ok && after.ID != before.ID {
		answer["change"] = after
	}
	return c.JSON(http.StatusOK, answer)
}

// restorable is the change a restore asks for, once the caller may try it
// (docs/team.md "Restore"): curators and admins any change; anyone else
// only a change of the own answer of a project they are a member of, whose
// jobs' rules then decide (restoreInJob, ReplaceFrameBoxesAs). To them a
// change that does not exist is refused as one they may not restore, so a
// guessed id tells nothing.
func (s *server) restorable(c *echo.Context, id string) (lake.Change, error) {
	ctx := c.Request().Context()
	k := caller(c)
	info, err := s.Lake.ChangeInfo(ctx, id)
	if k.Role.Allows(auth.Write) || (err != nil && !errs.Is(err, errs.NotFound)) {
		return info, err
	}
	denied := errs.New(errs.PermissionDenied, "changeId", "restoring change %s needs a curator or an admin, or a member of "+
		"its project whose job lets them edit the frame now; %s is %s", id, s.userName(c), k.Role)
	if err != nil {
		return lake.Change{}, denied
	}
	project, _, _ := strings.Cut(info.Operation, "/")
	if project != info.Operation {
		return lake.Change{}, denied // a copy's answer, or shapes of no project (an import's): curators only
	}
	if f, err := s.Lake.File(ctx, info.File); err != nil || (info.Frame != 0 && f.Type != lake.Video) {
		return lake.Change{}, denied
	}
	if _, err := s.Annotate.Project(ctx, project); err != nil {
		return lake.Change{}, denied
	}
	if err := s.projectAccess(c, project, NeedView); err != nil {
		return lake.Change{}, err
	}
	return info, nil
}

// restoreTrackChange writes a video frame's keyframes back to change
// info's version: for a project's answer (ofProject) under the jobs' rules
// for the caller, as a track edit through the project's routes is.
// The caller's role and the jobs are read inside the restore's transaction
// (annotate.FrameEditGuard), so a membership ended or a job reassigned
// while the request waited to write refuses it.
func (s *server) restoreTrackChange(c *echo.Context, info lake.Change, ofProject bool) error {
	ctx := c.Request().Context()
	var check lake.RestoreCheck
	if ofProject {
		check = s.Annotate.FrameEditGuard(info.Operation, info.File, []int{info.Frame}, func(ctx context.Context) (annotate.Member, error) {
			return s.memberNow(ctx, c, info.Operation)
		})
	} else if project, _, _ := strings.Cut(info.Operation, "/"); project != info.Operation {
		if err := s.projectAccess(c, project, NeedCurate); err != nil {
			return err
		}
	}
	return s.Lake.RestoreChangeIf(ctx, info.ID, check)
}

// memberNow is member read afresh, not from what the request read before:
// asked inside a write's transaction, which holds the one writer, it is
// the caller's role in the project as it stands when the write commits (a
// membership is changed only by a write). Lake-wide roles are the key's.
func (s *server) memberNow(ctx context.Context, c *echo.Context, projectID string) (annotate.Member, error) {
	k := caller(c)
	m := annotate.Member{Name: s.userName(c)}
	if k.Role.Allows(auth.Write) {
		m.Annotate, m.Review, m.Curate = true, true, true
		return m, nil
	}
	var role auth.Role
	if k.User != "" {
		var err error
		if role, err = s.Keys.ProjectRole(ctx, projectID, k.User); err != nil {
			return m, err
		}
	}
	if role == "" && k.Role != auth.Read {
		return m, projectDenied(k, projectID, NeedView)
	}
	m.Annotate, m.Review = role == auth.Annotator, role == auth.Reviewer
	return m, nil
}

// restoreInJob refuses a restore of a project's answer that m may not make
// as a workspace save now; a curator may always. A frame m holds in a copy
// job is their independent answer: the project's answer is not restored
// into it.
func (s *server) restoreInJob(c *echo.Context, info lake.Change, m annotate.Member) error {
	if m.Curate {
		return nil
	}
	err := s.Annotate.CheckFrameEdit(c.Request().Context(), info.Operation, info.File, m)
	var e *errs.Error
	if errors.As(err, &e) && e.Code == errs.FailedPrecondition && e.Field == "uniqueName" {
		return errs.New(errs.PermissionDenied, "changeId", "frame %q is in your copy job, an answer of your own: change %s "+
			"of project %s's answer is not restored into it", info.File, info.ID, info.Operation)
	}
	return err
}

// workspaceBoxes are lake shapes as the workspace saves them.
func workspaceBoxes(boxes []lake.Box) []annotate.Box {
	out := make([]annotate.Box, len(boxes))
	for i, b := range boxes {
		out[i] = annotate.Box{Label: b.Label, X: b.X, Y: b.Y, Width: b.W, Height: b.H, Attributes: b.Attributes,
			Geometry: b.Geometry}
	}
	return out
}
