package trackio

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"github.com/framelake/framelake/lake"
)

// lsTask is what a Label Studio JSON export holds of a video task.
type lsTask struct {
	Data struct {
		Video string `json:"video"`
	} `json:"data"`
	Annotations []struct {
		Result []struct {
			ID    string `json:"id"`
			Type  string `json:"type"`
			Value struct {
				Labels   []string `json:"labels"`
				Sequence []struct {
					Frame   int     `json:"frame"`
					Enabled bool    `json:"enabled"`
					X       float64 `json:"x"`
					Y       float64 `json:"y"`
					Width   float64 `json:"width"`
					Height  float64 `json:"height"`
				} `json:"sequence"`
			} `json:"value"`
		} `json:"result"`
	} `json:"annotations"`
}

// ReadLabelStudioVideo reads the videorectangle results of a Label Studio
// JSON export for the video named name (the task whose data.video ends in
// it, or the only task), on a width×height video. Label Studio counts
// frames from 1 and places boxes in percent of the frame; a keyframe with
// "enabled": false is the last of its span, the object out of view from the
// next frame until the next keyframe. Tracks are numbered in the order the
// results come, from 1.
func ReadLabelStudioVideo(r io.Reader, name string, width, height int) ([]lake.Track, error) {
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("the video has no size to place Label Studio's percentages on")
	}
	var tasks []lsTask
	if err := json.NewDecoder(r).Decode(&tasks); err != nil {
		return nil, fmt.Errorf("not a Label Studio JSON export (a list of tasks): %w", err)
	}
	task, err := pickTask(tasks, name)
	if err != nil {
		return nil, err
	}
	var tracks []lake.Track
	for _, a := range task.Annotations {
		for _, res := range a.Result {
			if res.Type != "videorectangle" {
				continue
			}
			if len(res.Value.Labels) == 0 || len(res.Value.Sequence) == 0 {
				return nil, fmt.Errorf("result %q: a videorectangle needs a label and a sequence", res.ID)
			}
			t := lake.Track{Number: len(tracks) + 1, Label: res.Value.Labels[0], Outside: []int{}}
			seq := res.Value.Sequence
			for i, k := range seq {
				if k.Frame < 1 || (i > 0 && k.Frame <= seq[i-1].Frame) {
					return nil, fmt.Errorf("result %q: frame %d: frames count from 1, in order", res.ID, k.Frame)
				}
				for _, v := range []float64{k.X, k.Y, k.Width, k.Height} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return nil, fmt.Errorf("result %q frame %d: coordinates must be numbers", res.ID, k.Frame)
					}
				}
				t.Keyframes = append(t.Keyframes, lake.Box{Frame: k.Frame - 1, X: k.X * float64(width) / 100,
					Y: k.Y * float64(height) / 100, W: k.Width * float64(width) / 100, H: k.Height * float64(height) / 100})
				if !k.Enabled && i+1 < len(seq) && seq[i+1].Frame > k.Frame+1 {
					t.Outside = append(t.Outside, k.Frame) // lake frame of the frame after it
				}
			}
			t.FirstFrame, t.LastFrame = t.Keyframes[0].Frame, t.Keyframes[len(t.Keyframes)-1].Frame
			tracks = append(tracks, t)
		}
	}
	return tracks, nil
}

func pickTask(tasks []lsTask, name string) (lsTask, error) {
	var found []lsTask
	for _, t := range tasks {
		if v := t.Data.Video; v != "" && (path.Base(v) == name || strings.HasSuffix(path.Base(v), "-"+name)) {
			found = append(found, t)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && len(tasks) == 1:
		return tasks[0], nil
	case len(found) == 0:
		return lsTask{}, fmt.Errorf("none of the %d tasks is of a video named %q", len(tasks), name)
	}
	return lsTask{}, fmt.Errorf("%d tasks are of a video named %q: export the one task", len(found), name)
}
