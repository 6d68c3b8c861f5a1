package tracking

import (
	"math"
	"strings"
	"testing"
)

// frames builds a video from per-frame (gt ids, tracker ids, similarities).
func frame(gt, tr []int, sim ...[]float64) Frame { return Frame{GT: gt, Tracker: tr, Sim: sim} }

func ids(v ...int) []int         { return v }
func row(v ...float64) []float64 { return v }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The cases below are worked by hand from TrackEval's clear.py, identity.py
// and hota.py; each comment gives the arithmetic.
func TestHandWorkedTracks(t *testing.T) {
	cases := []struct {
		name   string
		frames []Frame
		want   Result
	}{{
		// One object, tracked perfectly but under id 10 then id 11.
		// CLEAR: TP 4, one switch: MOTA (4-0-1)/4. Identity: 1↔10 shares 2
		// frames: IDTP 2, IDFN 2, IDFP 2, IDF1 2/(2+1+1). HOTA: every α
		// matches all 4 (DetA 1); AssA (2·2/(4+2-2) + 2·2/(4+2-2))/4 = 0.5.
		name: "identity switch",
		frames: []Frame{
			frame(ids(1), ids(10), row(1)), frame(ids(1), ids(10), row(1)),
			frame(ids(1), ids(11), row(1)), frame(ids(1), ids(11), row(1)),
		},
		want: Result{MOTA: 0.75, MOTP: 1, TP: 4, IDSW: 1, MT: 1, GTDets: 4, GTTracks: 1,
			IDF1: 0.5, IDP: 0.5, IDR: 0.5, IDTP: 2, IDFN: 2, IDFP: 2,
			HOTA: math.Sqrt(0.5), DetA: 1, AssA: 0.5, DetRe: 1, DetPr: 1, AssRe: 0.5, AssPr: 1, LocA: 1},
	}, {
		// Lost at frame 2 (a false detection elsewhere), found again under
		// the same id: one fragmentation, no switch. 4 of 5 frames is not
		// more than 80%: partly tracked. Identity: IDTP 4, IDFN 1, IDFP 1
		// (id 20). HOTA: DetA 4/6, AssA 4·4/(5+4-4)/4 = 0.8.
		name: "fragmentation",
		frames: []Frame{
			frame(ids(1), ids(10), row(1)), frame(ids(1), ids(10), row(1)),
			frame(ids(1), ids(20), row(0)),
			frame(ids(1), ids(10), row(1)), frame(ids(1), ids(10), row(1)),
		},
		want: Result{MOTA: 0.6, MOTP: 1, TP: 4, FN: 1, FP: 1, Frag: 1, PT: 1, GTDets: 5, GTTracks: 1,
			IDF1: 0.8, IDP: 0.8, IDR: 0.8, IDTP: 4, IDFN: 1, IDFP: 1,
			HOTA: math.Sqrt(4.0 / 6 * 0.8), DetA: 4.0 / 6, AssA: 0.8, DetRe: 0.8, DetPr: 0.8, AssRe: 0.8, AssPr: 1, LocA: 1},
	}, {
		// As above but frame 2 has no tracker detection at all: TrackEval
		// skips such a frame without ending the match, so no fragmentation.
		name: "gap with no detections",
		frames: []Frame{
			frame(ids(1), ids(10), row(1)), frame(ids(1), ids(10), row(1)),
			frame(ids(1), nil, row()),
			frame(ids(1), ids(10), row(1)), frame(ids(1), ids(10), row(1)),
		},
		want: Result{MOTA: 0.8, MOTP: 1, TP: 4, FN: 1, PT: 1, GTDets: 5, GTTracks: 1,
			IDF1: 4 / 4.5, IDP: 1, IDR: 0.8, IDTP: 4, IDFN: 1,
			HOTA: math.Sqrt(0.8 * 0.8), DetA: 0.8, AssA: 0.8, DetRe: 0.8, DetPr: 1, AssRe: 0.8, AssPr: 1, LocA: 1},
	}, {
		// A true track at IoU 0.62 and a false track (id 30) beside it for 3
		// frames. CLEAR: TP 3, FP 3, MOTA 0, MOTP 0.62. Identity: IDTP 3,
		// IDFP 3: IDF1 3/4.5. HOTA: the 12 α up to 0.60 match (DetA 3/6,
		// AssA 1), the 7 above do not (0): HOTA 12/19·sqrt(0.5); LocA
		// (12·0.62 + 7·1)/19 (an α with no match has LocA 1, as TrackEval).
		name: "false track",
		frames: []Frame{
			frame(ids(1), ids(10, 30), row(0.62, 0)), frame(ids(1), ids(10, 30), row(0.62, 0)),
			frame(ids(1), ids(10, 30), row(0.62, 0)),
		},
		want: Result{MOTA: 0, MOTP: 0.62, TP: 3, FP: 3, MT: 1, GTDets: 3, GTTracks: 1,
			IDF1: 3 / 4.5, IDP: 0.5, IDR: 1, IDTP: 3, IDFP: 3,
			HOTA: 12.0 / 19 * math.Sqrt(0.5), DetA: 12.0 / 19 * 0.5, AssA: 12.0 / 19, DetRe: 12.0 / 19, DetPr: 12.0 / 19 * 0.5,
			AssRe: 12.0 / 19, AssPr: 12.0 / 19, LocA: (12*0.62 + 7) / 19},
	}, {
		// Two objects crossing: the tracker keeps the match it had (the
		// 1000 bonus) although the other pair overlaps more in frame 1.
		// Frame 1 sims: 1↔10 0.55, 1↔11 0.9, 2↔10 0.9, 2↔11 0.55; keeping
		// 1↔10 and 2↔11 means no switch.
		name: "previous match kept",
		frames: []Frame{
			frame(ids(1, 2), ids(10, 11), row(0.9, 0), row(0, 0.9)),
			frame(ids(1, 2), ids(10, 11), row(0.55, 0.9), row(0.9, 0.55)),
		},
		want: Result{MOTA: 1, MOTP: (0.9 + 0.9 + 0.55 + 0.55) / 4, TP: 4, MT: 2, GTDets: 4, GTTracks: 2,
			IDF1: 1, IDP: 1, IDR: 1, IDTP: 4},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Evaluate(c.frames)
			if err != nil {
				t.Fatal(err)
			}
			checkResult(t, got, c.want, c.want.HOTA != 0 || c.want.LocA != 0)
		})
	}
}

func checkResult(t *testing.T, got, want Result, withHOTA bool) {
	t.Helper()
	ints := map[string][2]int{"TP": {got.TP, want.TP}, "FN": {got.FN, want.FN}, "FP": {got.FP, want.FP},
		"IDSW": {got.IDSW, want.IDSW}, "Frag": {got.Frag, want.Frag}, "MT": {got.MT, want.MT}, "PT": {got.PT, want.PT},
		"ML": {got.ML, want.ML}, "GTDets": {got.GTDets, want.GTDets}, "GTTracks": {got.GTTracks, want.GTTracks},
		"IDTP": {got.IDTP, want.IDTP}, "IDFN": {got.IDFN, want.IDFN}, "IDFP": {got.IDFP, want.IDFP}}
	for k, v := range ints {
		if v[0] != v[1] {
			t.Errorf("%s = %d, want %d", k, v[0], v[1])
		}
	}
	floats := map[string][2]float64{"MOTA": {got.MOTA, want.MOTA}, "MOTP": {got.MOTP, want.MOTP},
		"IDF1": {got.IDF1, want.IDF1}, "IDP": {got.IDP, want.IDP}, "IDR": {got.IDR, want.IDR}}
	if withHOTA {
		for k, v := range map[string][2]float64{"HOTA": {got.HOTA, want.HOTA}, "DetA": {got.DetA, want.DetA},
			"AssA": {got.AssA, want.AssA}, "DetRe": {got.DetRe, want.DetRe}, "DetPr": {got.DetPr, want.DetPr},
			"AssRe": {got.AssRe, want.AssRe}, "AssPr": {got.AssPr, want.AssPr}, "LocA": {got.LocA, want.LocA}} {
			floats[k] = v
		}
	}
	for k, v := range floats {
		if !near(v[0], v[1]) {
			t.Errorf("%s = %.12f, want %.12f", k, v[0], v[1])
		}
	}
}

// Two videos combine as TrackEval combines sequences: counts add, and the
// result is not the mean of the two videos' figures.
func TestVideosCombine(t *testing.T) {
	a := []Frame{frame(ids(1), ids(10), row(1)), frame(ids(1), ids(11), row(1))} // a switch
	b := []Frame{frame(ids(1), ids(10), row(1)), frame(ids(1), ids(10), row(1)),
		frame(ids(1), ids(10), row(1)), frame(ids(1), ids(10), row(1))} // perfect; id 1 and 10 again, its own
	got, err := EvaluateVideos([][]Frame{a, b})
	if err != nil {
		t.Fatal(err)
	}
	// CLEAR: TP 6, IDSW 1: MOTA 5/6. Identity: a gives IDTP 1, IDFN 1, IDFP 1;
	// b IDTP 4: IDF1 5/(5+1). HOTA: DetA 1; AssA (a: 1·1/2+1·1/2 = 1; b: 4·4/4
	// = 4) / 6 TP = 5/6.
	checkResult(t, got, Result{MOTA: 5.0 / 6, MOTP: 1, TP: 6, IDSW: 1, MT: 2, GTDets: 6, GTTracks: 2,
		IDF1: 5.0 / 6, IDP: 5.0 / 6, IDR: 5.0 / 6, IDTP: 5, IDFN: 1, IDFP: 1,
		HOTA: math.Sqrt(5.0 / 6), DetA: 1, AssA: 5.0 / 6, DetRe: 1, DetPr: 1, AssRe: 5.0 / 6, AssPr: 1, LocA: 1}, true)
}

func TestEmptySides(t *testing.T) {
	onlyGT, err := Evaluate([]Frame{frame(ids(1, 2), nil, row(), row()), frame(ids(1), nil, row())})
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, onlyGT, Result{FN: 3, ML: 2, GTDets: 3, GTTracks: 2, IDFN: 3, LocA: 1}, true)
	onlyTr, err := Evaluate([]Frame{frame(nil, ids(5, 6)), frame(nil, ids(5))})
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, onlyTr, Result{MOTA: -3, FP: 3, IDFP: 3, LocA: 1}, true) // MOTA (0-3)/max(1, 0)
}

func TestBadInputNamesWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		frames []Frame
		want   string
	}{
		{[]Frame{frame(ids(1), ids(2))}, "frame 0: 0 similarity rows for 1 ground-truth objects"},
		{[]Frame{frame(ids(1), ids(2), row(0.5, 0.1))}, "row 0 has 2 values for 1 tracker objects"},
		{[]Frame{frame(ids(1), ids(2), row(math.NaN()))}, "similarity [0][0] is NaN"},
		{[]Frame{frame(ids(1, 1), ids(2), row(1), row(1))}, "ground truth: id 1 appears twice"},
	} {
		_, err := Evaluate(c.frames)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
