package tracking

import (
	"testing"

	"github.com/framelake/framelake/lake"
)

func boxTrack(number int, label string, frames ...[5]float64) lake.Track {
	t := lake.Track{Number: number, Label: label}
	for _, f := range frames {
		t.Keyframes = append(t.Keyframes, lake.Box{Frame: int(f[0]), X: f[1], Y: f[2], W: f[3], H: f[4]})
	}
	t.FirstFrame, t.LastFrame = t.Keyframes[0].Frame, t.Keyframes[len(t.Keyframes)-1].Frame
	return t
}

// Tracks are compared frame by frame with their interpolated frames, label
// by label: a tracked car drawn at other keyframes than the truth's still
// matches on every frame; a false person counts only where labels mix.
func TestByLabelFromTracks(t *testing.T) {
	truth := []lake.Track{boxTrack(1, "car", [5]float64{0, 0, 0, 10, 10}, [5]float64{4, 40, 0, 10, 10})}
	tracker := []lake.Track{
		boxTrack(9, "car", [5]float64{0, 1, 0, 10, 10}, [5]float64{2, 21, 0, 10, 10}, [5]float64{4, 41, 0, 10, 10}),
		boxTrack(3, "person", [5]float64{0, 100, 100, 5, 5}, [5]float64{4, 100, 100, 5, 5}),
	}
	res, err := ByLabel([]Video{{Truth: truth, Tracker: tracker, Frames: 6, Width: 200, Height: 200}})
	if err != nil {
		t.Fatal(err)
	}
	car := res["car"]
	// Each frame: IoU of two 10x10 boxes 1 px apart = 90/110.
	if car.TP != 5 || car.FP != 0 || car.MOTA != 1 || car.IDF1 != 1 || !near(car.MOTP, 90.0/110) {
		t.Errorf("car: %+v", car)
	}
	if p := res["person"]; p.FP != 5 || p.GTTracks != 0 || p.MOTA != -5 {
		t.Errorf("person (no truth): %+v", p)
	}
	if all := res[""]; all.TP != 5 || all.FP != 5 || all.MOTA != 0 {
		t.Errorf("every label: %+v", all)
	}
}
