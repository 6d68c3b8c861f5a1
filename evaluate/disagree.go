package evaluate

import (
	"context"
	"database/sql"
	"math"

	"github.com/framelake/framelake/errs"
	"github.com/framelake/framelake/internal/job"
	"github.com/framelake/framelake/lake"
)

// DisagreementRequest asks where a model run and people disagree.
type DisagreementRequest struct {
	RunID string  `json:"run_id"`
	Query string  `json:"query"`
	IoU   float64 `json:"iou"` // 0 means DefaultIoU
}

// Disagreements is a disagreement job's result. Every file with a human
// box that the query selects is looked at; Files lists at most
// MaxListedFiles of those that have disagreements, in file order
// (Truncated says more exist: the query disagreement.count > 0 finds them all).
type Disagreements struct {
	RunID      string              `json:"runId"`
	Query      string              `json:"query"`
	IoU        float64             `json:"iou"`
	Checked    int                 `json:"checkedFiles"`
	WithAny    int                 `json:"filesWithDisagreements"`
	Missed     int                 `json:"missed"`
	Extra      int                 `json:"extra"`
	Mismatched int                 `json:"mismatched"`
	Files      []FileDisagreements `json:"files"`
	Truncated  bool                `json:"truncated"`
}

// FileDisagreements are one file's disagreements: human boxes the model
// missed, model boxes with no human box, and boxes that overlap at IoU >=
// the threshold with different labels.
type FileDisagreements struct {
	UniqueName string     `json:"uniqueName"`
	Count      int        `json:"count"`
	Missed     []DBox     `json:"missed"`
	Extra      []DBox     `json:"extra"`
	Mismatched []Mismatch `json:"mismatched"`
}

// DBox is a box in a disagreement.
type DBox struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Frame      int      `json:"frame"`
	X          float64  `json:"x"`
	Y          float64  `json:"y"`
	W          float64  `json:"width"`
	H          float64  `json:"height"`
	Confidence *float64 `json:"confidence,omitempty"`
}

// Mismatch is a human box and a model box of another label on it.
type Mismatch struct {
	Human     DBox    `json:"human"`
	Predicted DBox    `json:"predicted"`
	IoU       float64 `json:"iou"`
}

// FindDisagreements checks req and queues the job that finds the
// disagreements and stores each checked file's count (disagreement.count),
// replacing the counts of any earlier call.
func (s *Service) FindDisagreements(ctx context.Context, req DisagreementRequest) (string, error) {
	if req.IoU == 0 {
		req.IoU = DefaultIoU
	}
	if math.IsNaN(req.IoU) || req.IoU <= 0 || req.IoU > 1 {
		return "", errs.Invalid("iou", "iou must be in (0, 1], got %g", req.IoU)
	}
	if err := s.checkRun(ctx, "run_id", req.RunID); err != nil {
		return "", err
	}
	if _, _, err := s.lake.SelectionSQL(ctx, lake.Selection{ItemType: "image", Query: req.Query}); err != nil {
		return "", err
	}
	var id string
	err := s.db.Tx(ctx, func(tx *sql.Tx) (err error) {
		id, err = s.jobs.Enqueue(ctx, tx, DisagreementJobType, req)
		return err
	})
	return id, err
}

func (s *Service) disagreementJob(ctx context.Context, r *job.Run) error {
	var req DisagreementRequest
	if err := r.Decode(&req); err != nil {
		return err
	}
	q := lake.BoxPairQuery{Selection: lake.Selection{ItemType: "image", Query: req.Query},
		MachineOperation: req.RunID, PageFiles: s.opt.PageFiles, WithIDs: true, WithShapes: true}
	total, err := s.lake.CountHumanFiles(ctx, q)
	if err != nil {
		return err
	}
	r.SetTotal(int64(total))
	if err := s.db.Tx(ctx, func(tx *sql.Tx) error { return lake.ClearDisagreementsTx(ctx, tx) }); err != nil {
		return err
	}
	res := Disagreements{RunID: req.RunID, Query: req.Query, IoU: req.IoU, Files: []FileDisagreements{}}
	var batch []lake.FileDisagreement
	flush := func() error {
		err := s.db.Tx(ctx, func(tx *sql.Tx) error { return lake.SetDisagreementsTx(ctx, tx, req.RunID, batch) })
		batch = batch[:0]
		return err
	}
	err = s.lake.EachFileBoxPair(ctx, q, func(fb lake.BoxPair) error {
		fd, err := fileDisagreements(fb, req.IoU)
		if err != nil {
			return err
		}
		res.Checked++
		res.Missed, res.Extra, res.Mismatched = res.Missed+len(fd.Missed), res.Extra+len(fd.Extra), res.Mismatched+len(fd.Mismatched)
		if fd.Count > 0 {
			res.WithAny++
			if len(res.Files) < MaxListedFiles {
				res.Files = append(res.Files, fd)
			} else {
				res.Truncated = true
			}
		}
		batch = append(batch, lake.FileDisagreement{FileSeq: fb.Seq, Count: fd.Count})
		r.Advance(1)
		if len(batch) >= 5000 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	return r.SetResult(res)
}

// fileDisagreements matches each frame of a file (matchFrame) and reads the
// leftovers: unmatched human boxes are missed, unmatched model boxes extra,
// and cross-label pairs mismatched. Crowd regions are left out.
func fileDisagreements(fb lake.BoxPair, thr float64) (FileDisagreements, error) {
	boxes := make(map[int64]lake.ScoredBox, len(fb.Human)+len(fb.Machine))
	for _, bs := range [][]lake.ScoredBox{fb.Human, fb.Machine} {
		for _, b := range bs {
			boxes[b.Seq] = b
		}
	}
	fd := FileDisagreements{UniqueName: fb.UniqueName, Missed: []DBox{}, Extra: []DBox{}, Mismatched: []Mismatch{}}
	frames, err := splitFrames(fb, false, masksSegments)
	if err != nil {
		return FileDisagreements{}, err
	}
	for _, fr := range frames {
		byScore(fr.ds)
		for _, o := range matchFrame(fr.gs, fr.ds, thr) {
			switch {
			case o.kind == FN && o.other:
				fd.Mismatched = append(fd.Mismatched, Mismatch{Human: dbox(boxes[o.seq]), Predicted: dbox(boxes[o.match]), IoU: o.iou})
			case o.kind == FN:
				fd.Missed = append(fd.Missed, dbox(boxes[o.seq]))
			case o.kind == FP && !o.other:
				fd.Extra = append(fd.Extra, dbox(boxes[o.seq]))
			}
		}
	}
	fd.Count = len(fd.Missed) + len(fd.Extra) + len(fd.Mismatched)
	return fd, nil
}

func dbox(b lake.ScoredBox) DBox {
	d := DBox{ID: b.ID, Label: b.Label, Frame: b.Frame, X: b.X, Y: b.Y, W: b.W, H: b.H}
	if !b.Human {
		c := b.Score
		d.Confidence = &c
	}
	return d
}
