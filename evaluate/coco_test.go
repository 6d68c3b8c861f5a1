package evaluate

import "testing"

// outcomeOf finds a box's outcome by key.
func outcomeOf(t *testing.T, outs []outcome, seq int64) outcome {
	t.Helper()
	for _, o := range outs {
		if o.seq == seq {
			return o
		}
	}
	t.Fatalf("no outcome for box %d", seq)
	return outcome{}
}

// COCO matches greedily by score, not by IoU: the higher score takes the
// human box even when a lower one overlaps it more.
func TestCOCOGreedyByScore(t *testing.T) {
	f := frameBoxes{gs: []box{b(1, "a", 0, 0, 100, 100, 0)},
		ds: []box{b(11, "a", 5, 5, 100, 100, .8), b(12, "a", 30, 0, 100, 100, .9)}}
	_, outs := evaluateFrames(0.5, f)
	if o := outcomeOf(t, outs[0], 12); o.kind != TP || o.match != 1 {
		t.Errorf("higher score: %+v, want tp", o)
	}
	if o := outcomeOf(t, outs[0], 11); o.kind != FP {
		t.Errorf("better overlap, lower score: %+v, want fp", o)
	}
}

// Equal scores keep their order (stable sort); equal IoUs go to the later
// human box, as pycocotools' >= comparison does.
func TestCOCOTies(t *testing.T) {
	f := frameBoxes{gs: []box{b(1, "a", 0, 0, 100, 100, 0)},
		ds: []box{b(11, "a", 20, 0, 100, 100, .5), b(12, "a", 0, 0, 100, 100, .5)}}
	_, outs := evaluateFrames(0.5, f)
	if o := outcomeOf(t, outs[0], 11); o.kind != TP {
		t.Errorf("first of equal scores: %+v, want tp", o)
	}
	g := frameBoxes{gs: []box{b(1, "a", 0, 0, 100, 100, 0), b(2, "a", 20, 0, 100, 100, 0)},
		ds: []box{b(11, "a", 10, 0, 100, 100, .5)}}
	_, outs = evaluateFrames(0.5, g)
	if o := outcomeOf(t, outs[0], 11); o.match != 2 {
		t.Errorf("equal IoU with two human boxes: matched %d, want the later (2)", o.match)
	}
}

// One predicted box per human box; a box whose best human box is taken
// takes the next best free one (COCO), where VOC counts it false.
func TestOneMatchPerHumanBox(t *testing.T) {
	f := frameBoxes{gs: []box{b(1, "a", 0, 0, 100, 100, 0), b(2, "a", 40, 0, 100, 100, 0)},
		ds: []box{b(11, "a", 0, 0, 100, 100, .9), b(12, "a", 10, 0, 100, 100, .8)}}
	m, outs := evaluateFrames(0.5, f)
	if o := outcomeOf(t, outs[0], 12); o.kind != TP || o.match != 2 {
		t.Errorf("second box: %+v, want tp on box 2 (IoU %.3f)", o, 70.0/130)
	}
	if !near(m.AP50, 1, 1e-9) {
		t.Errorf("COCO AP50 = %v, want 1", m.AP50)
	}
	// VOC: box 12 overlaps box 1 most (0.818), which is taken: a false positive.
	if lr := m.Labels["a"]; !near(lr.VOCAP50, 0.5, 1e-12) {
		t.Errorf("VOC AP50 = %v, want 0.5 (recall 0.5 at precision 1, then nothing)", lr.VOCAP50)
	}
}

// maxDets: only a frame's 100 best boxes per label count for AP; recall at
// maxDets 1 and 10 reads the best 1 and 10.
func TestCOCOMaxDets(t *testing.T) {
	f := frameBoxes{gs: []box{b(1, "a", 0, 0, 50, 50, 0)}}
	for i := range 100 {
		f.ds = append(f.ds, b(int64(100+i), "a", 500, float64(i*60), 50, 50, .9-float64(i)*.001))
	}
	f.ds = append(f.ds, b(99, "a", 0, 0, 50, 50, .1)) // the hit, 101st by score
	m, _ := evaluateFrames(0.5, f)
	if m.MAP != 0 || m.AR100 != 0 {
		t.Errorf("hit past maxDets: mAP %v AR100 %v, want 0", m.MAP, m.AR100)
	}
	if m.VOCAP50 <= 0 {
		t.Errorf("VOC has no maxDets: VOC AP50 %v, want > 0", m.VOCAP50)
	}
	g := frameBoxes{gs: []box{b(1, "a", 0, 0, 50, 50, 0)},
		ds: []box{b(11, "a", 300, 300, 50, 50, .9), b(12, "a", 0, 0, 50, 50, .8)}}
	m, _ = evaluateFrames(0.5, g)
	if m.AR1 != 0 || m.AR10 != 1 || m.AR100 != 1 {
		t.Errorf("hit second: AR1 %v AR10 %v AR100 %v, want 0 1 1", m.AR1, m.AR10, m.AR100)
	}
}

// Area ranges go by the human box's area; an unmatched predicted box
// outside the range is ignored there.
func TestCOCOAreaRanges(t *testing.T) {
	f := frameBoxes{gs: []box{b(1, "a", 0, 0, 20, 20, 0)},
		ds: []box{b(11, "a", 200, 200, 100, 100, .9), b(12, "a", 0, 0, 20, 20, .8)}}
	m, _ := evaluateFrames(0.5, f)
	if !near(m.MAPSmall, 1, 1e-9) || !near(m.MAP, .5, 1e-9) || m.MAPMedium != Undefined || m.MAPLarge != Undefined {
		t.Errorf("small %v all %v medium %v large %v, want 1 .5 -1 -1", m.MAPSmall, m.MAP, m.MAPMedium, m.MAPLarge)
	}
	g := frameBoxes{gs: []box{b(1, "a", 0, 0, 20, 20, 0), b(2, "a", 100, 100, 100, 100, 0)},
		ds: []box{b(12, "a", 0, 0, 20, 20, .8)}}
	m, _ = evaluateFrames(0.5, g)
	if !near(m.MAPSmall, 1, 1e-9) || m.MAPLarge != 0 || m.MAPMedium != Undefined {
		t.Errorf("small %v large %v medium %v, want 1 0 -1", m.MAPSmall, m.MAPLarge, m.MAPMedium)
	}
}

// A crowd region swallows the boxes inside it (IoU over the predicted box's
// area): neither true nor false positives, and it is never missed.
func TestCOCOCrowd(t *testing.T) {
	crowd := b(1, "a", 0, 0, 100, 100, 0)
	crowd.crowd = true
	f := frameBoxes{gs: []box{crowd, b(2, "a", 300, 300, 40, 40, 0)},
		ds: []box{b(11, "a", 10, 10, 20, 20, .9), b(12, "a", 50, 50, 20, 20, .9), b(13, "a", 300, 300, 40, 40, .5)}}
	m, outs := evaluateFrames(0.5, f)
	if !near(m.MAP, 1, 1e-9) {
		t.Errorf("mAP %v, want 1: boxes in the crowd region do not count", m.MAP)
	}
	// VOC ignores a box only if the crowd ("difficult") box is its best
	// overlap at plain IoU >= 0.5; these two are 0.04: false positives.
	if !near(m.VOCAP50, 1.0/3, 1e-9) {
		t.Errorf("VOC %v, want 1/3", m.VOCAP50)
	}
	for _, seq := range []int64{1, 11, 12} {
		if o := outcomeOf(t, outs[0], seq); o.kind != Ignored {
			t.Errorf("box %d: %v, want ignored", seq, o.kind)
		}
	}
	if lr := m.Labels["a"]; lr.TP != 1 || lr.FP != 0 || lr.FN != 0 {
		t.Errorf("counts %+v", lr)
	}
}
