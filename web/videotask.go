package web

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/lake"
	"github.com/framelake/framelake/propagate"
)

// videoTaskRoutes serve a project's lake videos to its members
// (docs/tracks.md "Label a lake video as a task"): the tracks and frames
// routes of tracks.go, on videos of the project's video tasks only, with the
// project's tracks (operation = the project's id). Reads need a member;
// writes an annotator, who writes only inside the jobs they hold
// (annotate.TrackEditGuard, asked inside the write), or a curator.
func (s *server) videoTaskRoutes(g *echo.Group) {
	const v = "/projects/:projectId/videos/:uniqueName"
	g.GET(v+"/tracks", s.projectTracks)
	g.PUT(v+"/tracks", s.putProjectTracks)
	g.PUT(v+"/tracks/:number", s.putProjectTrack)
	g.DELETE(v+"/tracks/:number", s.deleteProjectTrack)
	g.POST(v+"/tracks/:number/propagate", s.propagateProjectTrack)
	g.GET(v+"/propagations/:jobId", s.projectPropagation)
	g.GET(v+"/frames/:frame", s.projectVideoFrame)
}

// projectVideo is the route's project and video, NotFound unless a task of
// the project labels the video.
func (s *server) projectVideo(c *echo.Context) (projectID, name string, err error) {
	projectID, name = c.Param("projectId"), c.Param("uniqueName")
	_, err = s.Annotate.ProjectVideo(c.Request().Context(), projectID, name)
	return projectID, name, err
}

func (s *server) projectTracks(c *echo.Context) error {
	pid, name, err := s.projectVideo(c)
	if err != nil {
		return err
	}
	return s.answerTracks(c, name, []string{pid})
}

func (s *server) projectVideoFrame(c *echo.Context) error {
	_, name, err := s.projectVideo(c)
	if err != nil {
		return err
	}
	f, err := s.Lake.File(c.Request().Context(), name)
	if err != nil {
		return err
	}
	return s.answerVideoFrame(c, f)
}

// trackEditGuard is the jobs' rules about an edit that turns the project's
// tracks the write replaces into after, asked inside the write's
// transaction (annotate.TrackEditGuard): a job reassigned or submitted
// while the request waits to write refuses it.
func (s *server) trackEditGuard(c *echo.Context, pid, name string, after []lake.Track) (lake.TrackGuard, error) {
	m, err := s.jobEditor(c)
	if err != nil {
		return nil, err
	}
	return s.Annotate.TrackEditGuard(pid, name, after, m), nil
}

func (s *server) putProjectTrack(c *echo.Context) error {
	pid, name, err := s.projectVideo(c)
	if err != nil {
		return err
	}
	t, _, err := s.readTrack(c)
	if err != nil {
		return err
	}
	guard, err := s.trackEditGuard(c, pid, name, []lake.Track{t})
	if err != nil {
		return err
	}
	got, err := s.Lake.SetTrackIf(c.Request().Context(), name, lake.Human, pid, t, guard)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toTrackJSON(got))
}

func (s *server) putProjectTracks(c *echo.Context) error {
	pid, name, err := s.projectVideo(c)
	if err != nil {
		return err
	}
	_, tracks, err := s.readTracks(c)
	if err != nil {
		return err
	}
	guard, err := s.trackEditGuard(c, pid, name, tracks)
	if err != nil {
		return err
	}
	if err := s.setTracks(c, name, pid, tracks, guard); err != nil {
		return err
	}
	return answerTracksPut(c, tracks)
}

// deleteProjectTrack removes one of the project's tracks. Its route lets
// every member in (a DELETE's rule is checked with placeholder ids, which
// no annotator is a member of): the annotate need is asked here.
func (s *server) deleteProjectTrack(c *echo.Context) error {
	if err := s.projectAccess(c, c.Param("projectId"), NeedAnnotate); err != nil {
		return err
	}
	pid, name, err := s.projectVideo(c)
	if err != nil {
		return err
	}
	n, _, err := trackNumber(c)
	if err != nil {
		return err
	}
	guard, err := s.trackEditGuard(c, pid, name, nil)
	if err != nil {
		return err
	}
	if err := s.Lake.DeleteTrackIf(c.Request().Context(), name, pid, n, guard); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// propagateProjectTrack propagates one of the project's tracks from a frame
// the caller may write, no further than the stretch they may write there
// (their job's frames; a curator's is the video).
func (s *server) propagateProjectTrack(c *echo.Context) error {
	pid, name, err := s.projectVideo(c)
	if err != nil {
		return err
	}
	req, err := s.readPropagation(c)
	if err != nil {
		return err
	}
	req.Operation = pid
	m, err := s.jobEditor(c)
	if err != nil {
		return err
	}
	req.Editor = &m // its write is asked again under the jobs' rules for m (propagate.Request.Editor)
	lo, hi, err := s.Annotate.EditSpan(c.Request().Context(), pid, name, req.From, m)
	if err != nil {
		return err
	}
	if hi >= lo { // bounded: the caller's stretch
		room := hi - req.From
		if req.Backward {
			room = req.From - lo
		}
		if room < 1 {
			return errs.Invalid("from", "frame %d ends the frames %d-%d you may write: there is nothing to propagate to",
				req.From, lo, hi)
		}
		if req.MaxFrames <= 0 || req.MaxFrames > room {
			req.MaxFrames = room
		}
	}
	return s.startPropagation(c, req)
}

// projectPropagation is a propagation's job (progress, result, error) as
// GET /jobs/{id} answers it, for the project's annotators, who may not read
// the lake's jobs: only a propagation of this project's tracks of this
// video; any other job id is not found here.
func (s *server) projectPropagation(c *echo.Context) error {
	pid, name, err := s.projectVideo(c)
	if err != nil {
		return err
	}
	j, err := s.Jobs.Get(c.Request().Context(), c.Param("jobId"))
	if err != nil {
		return err
	}
	var req propagate.Request
	if j.Type != propagate.JobType || json.Unmarshal(j.Payload, &req) != nil || req.Operation != pid || req.UniqueName != name {
		return errs.NotFoundf("no propagation %q of project %s's tracks of %s", c.Param("jobId"), pid, name)
	}
	return c.JSON(http.StatusOK, viewJob(j))
}
