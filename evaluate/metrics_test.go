package evaluate

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readPadilla reads testdata/padilla_sample2.txt into its seven frames.
func readPadilla(t *testing.T) []frameBoxes {
	t.Helper()
	f, err := os.Open("testdata/padilla_sample2.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	frames := make([]frameBoxes, 7)
	seq := int64(0)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) == 0 || w[0] == "#" {
			continue
		}
		img, _ := strconv.Atoi(w[0])
		nums := make([]float64, 0, 5)
		for _, s := range w[3:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			nums = append(nums, v)
		}
		// The reference counts both end pixels of a box (x2 = x+w, area
		// (x2-x+1)(y2-y+1), the VOC devkit's convention); a box one pixel
		// larger each way gives the same IoU in our continuous coordinates.
		// Without it detection G has IoU 0.295 instead of 0.303, an FP at 0.3.
		nums[len(nums)-2]++
		nums[len(nums)-1]++
		seq++
		fr := &frames[img-1]
		if w[1] == "gt" {
			fr.gs = append(fr.gs, box{seq: seq, label: w[2], x: nums[0], y: nums[1], w: nums[2], h: nums[3]})
		} else {
			fr.ds = append(fr.ds, box{seq: seq, label: w[2], score: nums[0], x: nums[1], y: nums[2], w: nums[3], h: nums[4]})
		}
	}
	return frames
}

// identity is the tie order of n frames taken in the order they came.
func identity(n int) []int32 {
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = int32(i)
	}
	return pos
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// Padilla et al.'s worked example: 7 images, 15 human and 24 detected boxes
// at IoU 0.3. Every detection's TP/FP and both published APs.
func TestPadillaWorkedExample(t *testing.T) {
	frames := readPadilla(t)
	var gts, dets int
	v := &vocLabel{}
	var states []int8
	for fi, fr := range frames {
		gts, dets = gts+len(fr.gs), dets+len(fr.ds)
		ds := append([]box(nil), fr.ds...)
		byScore(ds)
		before := len(v.state)
		v.addFrame(fr.gs, ds, 0.3, int32(fi))
		// back to file order, to compare with the published table
		got := map[int64]int8{}
		for i, d := range ds {
			got[d.seq] = v.state[before+i]
		}
		for _, d := range fr.ds {
			states = append(states, got[d.seq])
		}
	}
	if gts != 15 || dets != 24 {
		t.Fatalf("fixture has %d human and %d detected boxes, want 15 and 24", gts, dets)
	}
	want := "010 010 10010 0000 1010 000 10"
	var gotS strings.Builder
	for _, s := range states {
		gotS.WriteString(strconv.Itoa(int(s)))
	}
	if strings.ReplaceAll(want, " ", "") != gotS.String() {
		t.Fatalf("TP(1)/FP(0) per detection A..Y = %s, want %s", gotS.String(), want)
	}
	rec, prec := v.curve(identity(len(frames)))
	all, eleven := allPointAP(rec, prec), elevenPointAP(rec, prec)
	// Exact values of the published computation, and the published rounding.
	if wantAll := 1.0/15 + 1.0/15*2/3 + 4.0/15*3/7 + 1.0/15*7/23; !near(all, wantAll, 1e-12) || !near(all, 0.2456, 5e-4) {
		t.Errorf("all-point AP = %.6f, want %.6f (published 24.56%%)", all, wantAll)
	}
	if wantEleven := (1 + 2.0/3 + 3*3.0/7) / 11; !near(eleven, wantEleven, 1e-12) || !near(eleven, 0.2684, 5e-5) {
		t.Errorf("11-point AP = %.6f, want %.6f (published 26.84%%)", eleven, wantEleven)
	}
}

// evaluate runs frames through an evaluator at IoU thr.
func evaluateFrames(thr float64, frames ...frameBoxes) (Metrics, [][]outcome) {
	e := newEvaluator(thr, 0)
	var outs [][]outcome
	for _, f := range frames {
		outs = append(outs, e.addFrame(append([]box(nil), f.gs...), append([]box(nil), f.ds...)))
	}
	return e.result(), outs
}

func b(seq int64, label string, x, y, w, h, score float64) box {
	return box{seq: seq, label: label, x: x, y: y, w: w, h: h, score: score}
}

func TestPerfectPredictionsScoreOne(t *testing.T) {
	f1 := frameBoxes{gs: []box{b(1, "dog", 0, 0, 20, 20, 0), b(2, "cat", 50, 50, 60, 60, 0), b(3, "car", 0, 100, 200, 120, 0)}}
	f1.ds = []box{b(11, "dog", 0, 0, 20, 20, .9), b(12, "cat", 50, 50, 60, 60, .8), b(13, "car", 0, 100, 200, 120, .7)}
	m, _ := evaluateFrames(0.5, f1)
	for name, v := range map[string]float64{"mAP": m.MAP, "AP50": m.AP50, "AP75": m.AP75, "small": m.MAPSmall,
		"medium": m.MAPMedium, "large": m.MAPLarge, "VOC": m.VOCAP50, "AR100": m.AR100, "AR1": m.AR1} {
		if !near(v, 1, 1e-9) {
			t.Errorf("%s = %v, want 1", name, v)
		}
	}
	for l, lr := range m.Labels {
		if lr.TP != 1 || lr.FP != 0 || lr.FN != 0 || lr.F1 != 1 || !near(lr.AP, 1, 1e-9) {
			t.Errorf("label %s: %+v", l, lr)
		}
	}
	if got := m.Confusion.Labels; strings.Join(got, ",") != "car,cat,dog,background" {
		t.Errorf("confusion labels %v", got)
	}
	for i, row := range m.Confusion.Matrix {
		for j, n := range row {
			if want := map[bool]int{true: 1, false: 0}[i == j && i < 3]; n != want {
				t.Errorf("confusion[%d][%d] = %d, want %d", i, j, n, want)
			}
		}
	}
}

func TestEveryLabelWrongScoresZero(t *testing.T) {
	f := frameBoxes{gs: []box{b(1, "dog", 0, 0, 40, 40, 0), b(2, "dog", 100, 100, 40, 40, 0)},
		ds: []box{b(11, "cat", 0, 0, 40, 40, .9), b(12, "cat", 100, 100, 40, 40, .8)}}
	m, outs := evaluateFrames(0.5, f)
	if m.MAP != 0 || m.AP50 != 0 || m.VOCAP50 != 0 {
		t.Errorf("mAP %v AP50 %v VOC %v, want 0 (cat has no human box: left out, as pycocotools does)", m.MAP, m.AP50, m.VOCAP50)
	}
	if m.Labels["cat"].AP != Undefined || m.Labels["dog"].AP != 0 || m.Labels["dog"].FN != 2 || m.Labels["cat"].FP != 2 {
		t.Errorf("labels %+v", m.Labels)
	}
	// Both are label mismatches: dog row, cat column; no background.
	if m.Confusion.Matrix[1][0] != 2 || m.Confusion.Matrix[1][2] != 0 || m.Confusion.Matrix[2][0] != 0 {
		t.Errorf("confusion %v over %v", m.Confusion.Matrix, m.Confusion.Labels)
	}
	for _, o := range outs[0] {
		if !o.other || o.match == 0 || o.kind == TP {
			t.Errorf("outcome %+v: want a label mismatch", o)
		}
	}
}

func TestDuplicateDetectionIsFalsePositive(t *testing.T) {
	f := frameBoxes{gs: []box{b(1, "dog", 0, 0, 40, 40, 0)},
		ds: []box{b(11, "dog", 1, 1, 40, 40, .6), b(12, "dog", 0, 0, 40, 40, .9)}}
	m, outs := evaluateFrames(0.5, f)
	lr := m.Labels["dog"]
	if lr.TP != 1 || lr.FP != 1 || lr.FN != 0 || !near(lr.Precision, .5, 1e-12) || lr.Recall != 1 {
		t.Fatalf("dog %+v", lr)
	}
	// The higher score takes the box, though the other overlaps it too.
	for _, o := range outs[0] {
		if o.seq == 12 && (o.kind != TP || o.match != 1 || o.iou != 1) || o.seq == 11 && o.kind != FP {
			t.Errorf("outcome %+v", o)
		}
	}
	if !near(m.AP50, 1, 1e-9) {
		t.Errorf("AP50 = %v: the duplicate ranks after the hit, so precision at full recall is 1", m.AP50)
	}
	if m.Confusion.Matrix[1][0] != 1 || m.Confusion.Matrix[0][0] != 1 {
		t.Errorf("confusion %v: the duplicate is in the background row", m.Confusion.Matrix)
	}
}
