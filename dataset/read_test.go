package dataset

import (
	"encoding/json"
	"testing"
)

// versionDetails counts in words that agree with the numbers (shapes by
// type once they are not all boxes) and says what the build used.
func TestDetails(t *testing.T) {
	v := Version{Built: true, Status: StatusReady, Split: Split{Train: 100}, Labels: []string{"car"},
		Stats:        Stats{TotalFrames: 1, TotalBoxes: 1, Splits: map[string]Count{Train: {Frames: 1, Boxes: 1}}},
		Source:       &Source{Query: "name = a.jpg"},
		Augmentation: json.RawMessage(`{"IMAGE_LEVEL": [{"id": "CROP", "properties": [{"id": "CROP_PERCENTAGE", "values": [0, 20]}]}]}`)}
	want := `train 100% / test 0% / validation 0%; 1 frame, 1 box; train 1, test 0, validation 0; labels car; ` +
		`query "name = a.jpg"; augmentation CROP`
	if got := v.Details(); got != want {
		t.Errorf("details\n%s\nwant\n%s", got, want)
	}
	v.Stats.TotalBoxes, v.Stats.Shapes = 24, map[string]int{"box": 4, "polygon": 20}
	want = `train 100% / test 0% / validation 0%; 1 frame, 24 shapes (polygon 20, box 4); train 1, test 0, validation 0; ` +
		`labels car; query "name = a.jpg"; augmentation CROP`
	if got := v.Details(); got != want {
		t.Errorf("details\n%s\nwant\n%s", got, want)
	}
	v = Version{Status: StatusBuilding, JobID: "job_1", Split: Split{Train: 100}, Labels: []string{"car", "bus"}}
	want = "train 100% / test 0% / validation 0%; not built yet; labels car, bus; augmentation none; latest build building (job job_1)"
	if got := v.Details(); got != want {
		t.Errorf("details\n%s\nwant\n%s", got, want)
	}
}
