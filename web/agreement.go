package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v5"

	"github.com/framelake/framelake/annotate"
	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/evaluate/agreement"
	"github.com/framelake/framelake/lake"
)

// agreementRoutes measure how far a project's annotators agree on the
// frames given to more than one of them (copy jobs), and accept a
// consensus as a frame's truth (docs/team.md "Agreement").
func (s *server) agreementRoutes(g *echo.Group) {
	g.GET("/projects/:projectId/agreement", s.projectAgreement)
	g.POST("/projects/:projectId/frames/:uniqueName/consensus", s.acceptConsensus)
}

// agreementOptions reads threshold= (default 0.8) and iou= (default 0.5),
// each in 0..1.
func agreementOptions(c *echo.Context) (agreement.Options, error) {
	opt := agreement.Options{Threshold: 0.8, IoU: 0.5}
	for _, p := range []struct {
		name string
		to   *float64
	}{{"threshold", &opt.Threshold}, {"iou", &opt.IoU}} {
		v := c.QueryParam(p.name)
		if v == "" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 || (p.name == "iou" && f == 0) {
			return opt, errs.Invalid(p.name, "%s must be a number in 0..1 (iou above 0), got %q", p.name, v)
		}
		*p.to = f
	}
	return opt, nil
}

// overlapFrames reads the answers of a project's frames given to more than
// one annotator, as agreement frames; frames with an answer not saved yet
// are counted in pending, not measured. only, when not "", keeps that frame.
func (s *server) overlapFrames(c *echo.Context, projectID, only string) (frames []agreement.Frame, pending []string, err error) {
	ctx := c.Request().Context()
	overlap, err := s.Annotate.OverlapFrames(ctx, projectID)
	if err != nil {
		return nil, nil, err
	}
	var seqs []int64
	ops := map[string]bool{}
	var measured []annotate.OverlapFrame
	for _, f := range overlap {
		switch {
		case only != "" && f.UniqueName != only:
		case !f.Complete:
			pending = append(pending, f.UniqueName)
		default:
			measured = append(measured, f)
			seqs = append(seqs, f.FileSeq)
			for _, a := range f.Answers {
				ops[a.Operation] = true
			}
		}
	}
	opList := []string{}
	for op := range ops {
		opList = append(opList, op)
	}
	boxes, err := s.Lake.Boxes(ctx, lake.BoxQuery{FileSeqs: seqs, Sources: []lake.Source{lake.Human}, Operations: opList})
	if err != nil {
		return nil, nil, err
	}
	byFile := map[int64][]lake.Box{}
	for _, b := range boxes {
		byFile[b.FileSeq] = append(byFile[b.FileSeq], b)
	}
	for _, f := range measured {
		answers, order := map[string]string{}, []string{}
		taken := map[string]bool{}
		for _, a := range f.Answers {
			who := a.Annotator
			if taken[who] { // one person holding two answers stays two answers
				who += " (" + a.Operation + ")"
			}
			taken[who] = true
			answers[a.Operation] = who
			order = append(order, a.Operation)
		}
		fr, err := agreement.FromLake(f.UniqueName, f.Width, f.Height, answers, order, byFile[f.FileSeq])
		if err != nil {
			return nil, nil, err
		}
		frames = append(frames, fr)
	}
	return frames, pending, nil
}

// projectAgreement answers GET /projects/{id}/agreement?threshold=&iou=:
// F1 overall, per label and per frame, kappa of frame classes, and the
// review queue: frames under the threshold, and frames whose annotators
// gave different classes.
func (s *server) projectAgreement(c *echo.Context) error {
	pid := c.Param("projectId")
	if err := s.projectAccess(c, pid, NeedView); err != nil {
		return err
	}
	opt, err := agreementOptions(c)
	if err != nil {
		return err
	}
	frames, pending, err := s.overlapFrames(c, pid, "")
	if err != nil {
		return err
	}
	res, err := agreement.Measure(frames, opt)
	if err != nil {
		return err
	}
	inQueue := map[string]bool{}
	for _, k := range res.Review {
		inQueue[k] = true
	}
	for _, f := range frames {
		if !inQueue[f.Key] && !classesAgree(f) {
			res.Review = append(res.Review, f.Key)
		}
	}
	if pending == nil {
		pending = []string{}
	}
	return c.JSON(http.StatusOK, map[string]any{"projectId": pid, "threshold": opt.Threshold, "iou": opt.IoU,
		"measuredFrames": len(frames), "pending": pending, "f1": res.F1, "byLabel": res.ByLabel, "kappa": res.Kappa,
		"frames": res.Frames, "review": res.Review})
}

// classesAgree: every annotator of f gave the same class (or none did).
func classesAgree(f agreement.Frame) bool {
	for _, a := range f.Annotators {
		if f.Classes[a] != f.Classes[f.Annotators[0]] {
			return false
		}
	}
	return true
}

// acceptConsensus answers POST /projects/{id}/frames/{name}/consensus: the
// consensus of the frame's answers (agreement.Consensus) becomes the
// project's answer, saved as the workspace saves (a change in the history
// via "consensus of <annotators>", the frame's version moves; If-Match as
// for a save).
func (s *server) acceptConsensus(c *echo.Context) error {
	pid, name := c.Param("projectId"), c.Param("uniqueName")
	if err := s.projectAccess(c, pid, NeedReview); err != nil {
		return err
	}
	m, err := s.member(c, pid)
	if err != nil {
		return err
	}
	opt, err := agreementOptions(c)
	if err != nil {
		return err
	}
	version, err := ifMatch(c)
	if err != nil {
		return err
	}
	frames, pending, err := s.overlapFrames(c, pid, name)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		return errs.New(errs.FailedPrecondition, "uniqueName", "frame %q has an answer not saved yet: a consensus "+
			"needs every copy", name)
	}
	if len(frames) == 0 {
		return errs.New(errs.NotFound, "uniqueName", "frame %q of project %s was given to one annotator only "+
			"(it is in no copy job): there is nothing to merge", name, pid)
	}
	shapes, class, err := agreement.Consensus(frames[0], opt)
	if err != nil {
		return err
	}
	ctx := lake.WithActor(c.Request().Context(), lake.Actor{Who: lake.ActorOf(c.Request().Context()).Who,
		Via: "consensus of " + strings.Join(frames[0].Annotators, ", ")})
	res, err := s.Annotate.ReplaceFrameBoxesAs(ctx, pid, name, version, workspaceBoxes(agreement.ToLake(shapes, class)), m)
	var conflict *annotate.Conflict
	if errors.As(err, &conflict) {
		return s.frameEdited(c, res, err)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("ETag", versionTag(res.Version))
	return c.JSON(http.StatusOK, map[string]any{"uniqueName": name, "version": res.Version, "annotators": frames[0].Annotators,
		"shapes": len(shapes), "class": class})
}
