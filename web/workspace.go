package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
)

// workspaceRoutes serve the annotation workspace of the web app (and any
// script): tasks made from lake images, task state changes, a task's frames,
// one frame's boxes at a version, and model suggestions' decisions.
func (s *server) workspaceRoutes(g *echo.Group) {
	g.POST("/projects/:projectId/tasks", s.createTask)
	g.PATCH("/tasks/:taskId", s.updateTask)
	g.GET("/tasks/:taskId/frames", s.taskFrames)
	g.GET("/projects/:projectId/frames/:uniqueName/annotations", s.frameAnnotations)
	g.POST("/projects/:projectId/frames/:uniqueName/suggestions", s.decideSuggestions)
}

// createTask makes a task from lake images (uniqueNames, query or
// collectionId), or from a lake video (video, with firstFrame, lastFrame
// and every: docs/tracks.md "Label a lake video as a task").
func (s *server) createTask(c *echo.Context) error {
	var req struct {
		TaskName     string   `json:"taskName"`
		UniqueNames  []string `json:"uniqueNames"`
		Query        string   `json:"query"`
		CollectionID string   `json:"collectionId"`
		StartFrom    string   `json:"startFrom"` // "lake" (default) or "empty"
		Video        string   `json:"video"`
		FirstFrame   *int     `json:"firstFrame"`
		LastFrame    *int     `json:"lastFrame"`
		Every        *int     `json:"every"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	if req.Video != "" || req.FirstFrame != nil || req.LastFrame != nil || req.Every != nil {
		if req.Video == "" || len(req.UniqueNames) > 0 || req.Query != "" || req.CollectionID != "" || req.StartFrom != "" {
			return errs.Invalid("video", "a task is made from a lake video (video, with firstFrame, lastFrame, every) "+
				"or from lake images (uniqueNames, query or collectionId), not both")
		}
		nt := annotate.NewVideoTask{Name: req.TaskName, Video: req.Video, FirstFrame: req.FirstFrame, LastFrame: req.LastFrame}
		if req.Every != nil {
			if nt.Every = *req.Every; nt.Every < 1 {
				return errs.Invalid("every", "every is 1 or more (1: every frame, N: every Nth), got %d", nt.Every)
			}
		}
		t, err := s.Annotate.CreateVideoTask(c.Request().Context(), c.Param("projectId"), nt)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, t)
	}
	t, err := s.Annotate.CreateTask(c.Request().Context(), c.Param("projectId"), annotate.NewTask{Name: req.TaskName,
		UniqueNames: req.UniqueNames, Query: req.Query, CollectionID: req.CollectionID, StartFrom: req.StartFrom})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

func (s *server) updateTask(c *echo.Context) error {
	var req struct {
		TaskName *string  `json:"taskName"`
		Status   *float64 `json:"status"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	ch := annotate.TaskChange{Name: req.TaskName}
	if req.Status != nil {
		n, err := wholeNumber("status", *req.Status)
		if err != nil {
			return err
		}
		st := annotate.TaskStatus(n)
		ch.Status = &st
	}
	t, err := s.Annotate.UpdateTask(c.Request().Context(), c.Param("taskId"), ch)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, t)
}

func (s *server) taskFrames(c *echo.Context) error {
	w, err := s.Annotate.TaskWorkspace(c.Request().Context(), c.Param("taskId"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, w)
}

// frameAnnotations answers a frame's boxes with its version as the ETag,
// which a PUT sends back as If-Match.
func (s *server) frameAnnotations(c *echo.Context) error {
	m, err := s.jobEditor(c) // a copy job's holder reads their own answer
	if err != nil {
		return err
	}
	st, err := s.Annotate.FrameStateAs(c.Request().Context(), c.Param("projectId"), c.Param("uniqueName"), m)
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", versionTag(st.Version))
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, st)
}

func versionTag(v int) string { return `"` + strconv.Itoa(v) + `"` }

// ifMatch reads the version an edit was made on: If-Match "N" (or N); 0
// when absent, for clients that overwrite whatever is there.
func ifMatch(c *echo.Context) (int, error) {
	h := strings.TrimSpace(c.Request().Header.Get("If-Match"))
	if h == "" || h == "*" {
		return 0, nil
	}
	v, err := strconv.Atoi(strings.Trim(strings.TrimPrefix(h, "W/"), `"`))
	if err != nil || v < 1 {
		return 0, errs.Invalid("If-Match", `If-Match must be a frame version as its ETag gives it ("3"), got %q`, h)
	}
	return v, nil
}

// frameEdited answers a frame edit: the frame's task as Replace Frame
// Annotations always did, its new version in the body and the ETag; a stale
// edit is a 409 whose body holds the frame as it is now.
func (s *server) frameEdited(c *echo.Context, res annotate.FrameResult, err error) error {
	var conflict *annotate.Conflict
	if errors.As(err, &conflict) {
		_, d := toDetail(conflict.Err)
		return c.JSON(http.StatusConflict, struct {
			Error   errorDetail         `json:"error"`
			Current annotate.FrameState `json:"current"`
		}{d, conflict.Current})
	}
	if err != nil {
		return err
	}
	t, err := s.Annotate.Task(c.Request().Context(), res.TaskID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", versionTag(res.Version))
	return c.JSON(http.StatusOK, frameResultView{Success: true, UniqueName: res.UniqueName, SequenceNo: res.SequenceNo,
		Task: &t, Version: res.Version})
}

func (s *server) decideSuggestions(c *echo.Context) error {
	var req struct {
		Action        string   `json:"action"`
		IDs           []string `json:"ids"`
		MinConfidence *float64 `json:"minConfidence"`
	}
	if err := s.bindJSON(c, &req); err != nil {
		return err
	}
	if req.Action != "accept" && req.Action != "reject" {
		return errs.Invalid("action", "action must be accept or reject, got %q", req.Action)
	}
	version, err := ifMatch(c)
	if err != nil {
		return err
	}
	if m, err := s.jobEditor(c); err != nil {
		return err
	} else if err := s.Annotate.CheckFrameEdit(c.Request().Context(), c.Param("projectId"), c.Param("uniqueName"), m); err != nil {
		return err
	}
	res, err := s.Annotate.DecideSuggestions(c.Request().Context(), c.Param("projectId"), c.Param("uniqueName"),
		annotate.Decision{Accept: req.Action == "accept", IDs: req.IDs, MinConfidence: req.MinConfidence, Version: version})
	return s.frameEdited(c, res, err)
}
