package format

import (
	"encoding/json"
	"io"
)

// rawWriter writes dataset.json, one document with the dataset, its labels
// and every frame with its split, lineage, augmentation parameters and boxes
// as stored (pixels, unclipped). Frames are spooled because media entries
// come between them.
type rawWriter struct {
	a      *archive
	frames *spool
	n      int
}

type rawFrame struct {
	UniqueName  string          `json:"uniqueName"`
	Name        string          `json:"name"`
	File        string          `json:"file,omitempty"` // path of the media in the archive, when included
	Split       string          `json:"split"`
	Augmented   bool            `json:"augmented"`
	DerivedFrom string          `json:"derivedFrom"`
	Width       int             `json:"width"`
	Height      int             `json:"height"`
	Params      json.RawMessage `json:"params"`
	Boxes       []rawBox        `json:"boxes"`
	Video       string          `json:"video,omitempty"` // a sampled frame's video and frame there
	VideoFrame  *int            `json:"videoFrame,omitempty"`
}

type rawBox struct {
	Label   string  `json:"label"`
	ClassID int     `json:"classId"`
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	Width   float64 `json:"width"`
	Height  float64 `json:"height"`
	Track   *int    `json:"track,omitempty"` // a video track's number, on a sampled frame
	// Interpolated: the track's shape here lies between two keyframes.
	Interpolated bool `json:"interpolated,omitempty"`
}

func newRAWWriter(a *archive) (*rawWriter, error) {
	s, err := a.spool()
	return &rawWriter{a: a, frames: s}, err
}

func (r *rawWriter) frame(fr *Frame) error {
	a := r.a
	rf := rawFrame{UniqueName: fr.UniqueName, Name: fr.Name, Split: fr.Split, Augmented: fr.Augmented,
		DerivedFrom: fr.DerivedFrom, Width: fr.Width, Height: fr.Height, Params: fr.Params,
		Boxes: make([]rawBox, len(fr.Boxes))}
	if len(rf.Params) == 0 {
		rf.Params = nil
	}
	for i, b := range fr.Boxes {
		rf.Boxes[i] = rawBox{Label: a.ds.Labels[b.ClassID], ClassID: b.ClassID, X: b.X, Y: b.Y, Width: b.W, Height: b.H,
			Track: b.Track, Interpolated: b.Interpolated}
	}
	if fr.Video != "" {
		n := fr.VideoFrame
		rf.Video, rf.VideoFrame = fr.Video, &n
	}
	if a.media {
		rf.File = splitDirs[splitIndex(fr.Split)] + "/" + mediaFile(fr)
		if err := a.copyMedia(rf.File, fr); err != nil {
			return err
		}
	}
	line, err := json.Marshal(rf)
	if err != nil {
		return err
	}
	sep := ",\n  "
	if r.n == 0 {
		sep = "\n  "
	}
	r.n++
	r.frames.WriteString(sep)
	_, err = r.frames.Write(line)
	return err
}

func (r *rawWriter) finish() error {
	a := r.a
	head, err := json.Marshal(struct {
		Dataset struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"dataset"`
		Labels []string `json:"labels"`
	}{Dataset: struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{a.ds.Name, a.ds.Version}, Labels: a.ds.Labels})
	if err != nil {
		return err
	}
	// The head's closing brace gives way to the frames array.
	return a.z.entry(a.path("dataset.json"), true, false, func(w io.Writer) error {
		return writeAll(w, head[:len(head)-1], []byte(`,"frames":[`), r.frames, []byte("\n]}\n"))
	})
}
